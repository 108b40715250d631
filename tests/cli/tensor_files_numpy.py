#!/usr/bin/python3
"""tessera run --save / --load against NumPy: the saved .npy files load with NumPy, and the
outputs equal a dense attention computed here in NumPy from the saved inputs (README: Tensors
out). Then --load runs on inputs written by NumPy, and bad files are refused with exit 2 naming
the file.

Usage: tensor_files_numpy.py TESSERA SCRATCH_DIR.  Exit 77 (skipped) when NumPy is missing.
"""
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("skipped: NumPy is not installed (Debian: python3-numpy)")
    sys.exit(77)

TESSERA, SCRATCH = sys.argv[1], sys.argv[2]
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def tessera(*arguments):
    return subprocess.run([TESSERA, *arguments], capture_output=True, text=True)


def dense_attention(q, k, v, d_out, causal):
    """Forward and backward of softmax(q k^T / sqrt(d)) v in float64, GQA: query head h reads KV
    head h // (heads / kv_heads). Shapes as README documents: [1, seq, heads, dim]."""
    q, k, v, d_out = (x[0].astype(np.float64) for x in (q, k, v, d_out))
    seq, heads, dim = q.shape
    group = heads // k.shape[1]
    k_h, v_h = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)  # [seq, heads, dim]
    scale = 1.0 / np.sqrt(dim)
    scores = np.einsum("ihd,jhd->hij", q, k_h) * scale
    if causal:
        scores = np.where(np.tril(np.ones((seq, seq), dtype=bool))[None], scores, -np.inf)
    top = scores.max(axis=2, keepdims=True)
    lse = (top + np.log(np.exp(scores - top).sum(axis=2, keepdims=True)))[..., 0]  # [heads, seq]
    p = np.exp(scores - lse[..., None])
    out = np.einsum("hij,jhd->ihd", p, v_h)
    dp = np.einsum("ihd,jhd->hij", d_out, v_h)
    delta = np.einsum("ihd,ihd->hi", d_out, out)
    ds = p * (dp - delta[..., None]) * scale
    dq = np.einsum("hij,jhd->ihd", ds, k_h)
    dk_h = np.einsum("hij,ihd->jhd", ds, q)
    dv_h = np.einsum("hij,ihd->jhd", p, d_out)
    fold = lambda x: x.reshape(seq, k.shape[1], group, -1).sum(axis=2)  # query heads onto their KV head
    return {"O": out[None], "LSE": lse.T[None], "dQ": dq[None], "dK": fold(dk_h)[None], "dV": fold(dv_h)[None]}


def compare_with_numpy(folder, dtype, tolerance, label):
    files = {name: np.load(os.path.join(folder, name + ".npy")) for name in
             ("Q", "K", "V", "dO", "O", "LSE", "dQ", "dK", "dV")}
    check(files["Q"].shape == (1, 96, 4, 16) and files["K"].shape == (1, 96, 2, 16), label + ": documented shapes")
    check(all(files[n].dtype == np.float32 for n in ("Q", "K", "V", "dO")), label + ": inputs are float32")
    check(all(files[n].dtype == np.float64 for n in ("O", "LSE", "dQ", "dK", "dV")), label + ": outputs are float64")
    if dtype == "bf16":  # the inputs hold bf16 values: the low 16 bits of each float32 are zero
        bits = files["Q"].view(np.uint32)
        check(bool(np.all((bits & 0xFFFF) == 0)), label + ": inputs rounded to bf16")
    expected = dense_attention(files["Q"], files["K"], files["V"], files["dO"], causal=True)
    for name, reference in expected.items():
        error = float(np.max(np.abs(files[name] - reference)))
        check(error <= tolerance, f"{label}: {name} within {tolerance:g} of NumPy's dense attention (max |error| {error:.3g})")
    return files


def run(*arguments):
    return tessera("run", "--algo", "mesh", "--gpus", "4", "--seq", "96", "--heads", "4", "--kv-heads", "2",
                   "--head-dim", "16", "--mask", "causal", *arguments)


os.makedirs(SCRATCH, exist_ok=True)
saved = os.path.join(SCRATCH, "saved-fp32")
shutil.rmtree(saved, ignore_errors=True)
result = run("--dtype", "fp32", "--save", saved)
check(result.returncode == 0, "run --save exits 0: " + result.stderr.strip())
# fp32 blocks with fp32 accumulation against float64: a few ulps of float32 on values of order 1.
files = compare_with_numpy(saved, "fp32", 1e-5, "fp32")

saved_bf16 = os.path.join(SCRATCH, "saved-bf16")
result = run("--dtype", "bf16", "--save", saved_bf16, "--seed", "7")
check(result.returncode == 0, "bf16 run --save exits 0: " + result.stderr.strip())
# bf16 inputs, computed in fp32 blocks (README): the error is float32's, on bf16-valued inputs.
compare_with_numpy(saved_bf16, "bf16", 1e-5, "bf16")

# --load: inputs written by NumPy (a different draw), run, saved again, checked again.
given = os.path.join(SCRATCH, "given")
os.makedirs(given, exist_ok=True)
generator = np.random.default_rng(20)
shapes = {"Q": (1, 96, 4, 16), "K": (1, 96, 2, 16), "V": (1, 96, 2, 16), "dO": (1, 96, 4, 16)}
inputs = {name: generator.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
inputs["V"] = inputs["V"].astype(np.float64)  # float64 files are read too
for name, array in inputs.items():
    np.save(os.path.join(given, name + ".npy"), array)
resaved = os.path.join(SCRATCH, "resaved")
result = run("--dtype", "fp32", "--load", given, "--save", resaved)
check(result.returncode == 0, "run --load exits 0: " + result.stderr.strip())
files = compare_with_numpy(resaved, "fp32", 1e-5, "loaded")
check(all(np.array_equal(files[n], inputs[n].astype(np.float32)) for n in shapes), "loaded inputs saved as given")

# Bad files: exit 2, one line naming the file.
def refused(prepare, what, needle):
    bad = os.path.join(SCRATCH, "bad")
    shutil.rmtree(bad, ignore_errors=True)
    shutil.copytree(given, bad)
    prepare(bad)
    result = run("--dtype", "fp32", "--load", bad)
    message = result.stderr.strip()
    check(result.returncode == 2 and needle in message and message.count("\n") == 0,
          f"{what}: exit 2 naming the file ({result.returncode}: {message})")


def truncate(folder):
    path = os.path.join(folder, "K.npy")
    with open(path, "rb") as file:
        data = file.read()
    with open(path, "wb") as file:
        file.write(data[:-10])


refused(truncate, "truncated K.npy", "K.npy: truncated")
refused(lambda f: np.save(os.path.join(f, "Q.npy"), inputs["Q"][:, :64]), "Q.npy of 64 tokens",
        "Q.npy: shape (1, 64, 4, 16) but the problem needs (1, 96, 4, 16)")
refused(lambda f: np.save(os.path.join(f, "dO.npy"), inputs["dO"].astype(np.int32)), "int32 dO.npy", "dO.npy: dtype")
refused(lambda f: np.save(os.path.join(f, "Q.npy"), np.asfortranarray(inputs["Q"])), "Fortran-order Q.npy",
        "Q.npy: fortran_order is True")
refused(lambda f: open(os.path.join(f, "V.npy"), "wb").write(b"not numpy"), "garbage V.npy", "V.npy: not a .npy file")
refused(lambda f: os.remove(os.path.join(f, "K.npy")), "missing K.npy", "K.npy: cannot be read")
inputs_nan = inputs["Q"].copy()
inputs_nan[0, 5, 1, 3] = np.nan
refused(lambda f: np.save(os.path.join(f, "Q.npy"), inputs_nan), "NaN in Q.npy", "Q.npy: element")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
