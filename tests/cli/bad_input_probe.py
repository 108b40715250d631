#!/usr/bin/env python3
"""Bad input, tried as a new user would, across every subcommand and every file the CLI reads.

The contract (README: Errors): exit 2 and one line on stderr that names the flag, file or field,
at most a few hundred characters; never a crash, an internal error (exit 3), a hang or a
memory blow-up. Each case runs under an address-space limit and a time limit, so a request that
would eat the machine fails here instead of swapping.

usage: bad_input_probe.py TESSERA SCRATCH_DIR [--verbose]
"""
import os
import resource
import shutil
import subprocess
import sys

TIME_LIMIT_S = 60
ADDRESS_SPACE_BYTES = 6 << 30   # far above any refused request's footprint, far below the machine
MAX_MESSAGE_CHARS = 600          # "tessera: " + a message of at most a few hundred characters


def limit_resources():
    # AddressSanitizer reserves terabytes of address space for its shadow memory, so a sanitized
    # build runs without the address-space limit (its refusals then follow the memory limit alone).
    if os.environ.get("TESSERA_PROBE_SANITIZED") != "1":
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))


CALIBRATION = '{"gpu": "h100", "peak_flops_per_s_16bit": 9.89e14, "max_efficiency": 0.6}'
SPEC = """name: probe
fixed: {seq: 16K, heads: 8, kv_heads: 8, head_dim: 64, mask: causal, pass: forward}
axes:
  - gpus: [4, 8]
  - algo: [ring, ulysses]
"""
TOPOLOGY = """name: probe
gpus: 4
gpus_per_node: 2
switches: [core]
links:
  - {from: gpu0, to: core, bandwidth: 32GB/s, latency_us: 1}
  - {from: gpu1, to: core, bandwidth: 32GB/s, latency_us: 1}
  - {from: gpu2, to: core, bandwidth: 32GB/s, latency_us: 1}
  - {from: gpu3, to: core, bandwidth: 32GB/s, latency_us: 1}
"""
ASSIGNMENT = '{"gpus": 2, "assignment": [[0, 1], [1, 0]]}'
SMALL = ["--gpus", "4", "--seq", "4K", "--heads", "8", "--kv-heads", "8", "--head-dim", "64"]


def cases(schedule_json):
    """(name, arguments, files to write, a text the message must contain). Arguments name files
    relative to the scratch folder the cases run in."""
    bad_utf8 = b"\xff\xfe"
    big = "9" * 100_000  # a single argument may hold at most 128 KiB (MAX_ARG_STRLEN)
    s = schedule_json
    yield from [
        # Flags: numbers out of range, not finite, wrapping.
        ("batch wraps", ["cost", "--algo", "ring", *SMALL, "--batch", "9223372036854775807"], {}, "--batch"),
        ("batch zero", ["cost", "--algo", "ring", *SMALL, "--batch", "0"], {}, "--batch"),
        ("gpus zero", ["cost", "--algo", "ring", "--gpus", "0"], {}, "--gpus"),
        ("gpus negative", ["plan", "--gpus", "-4"], {}, "--gpus"),
        ("gpus 2^32+1", ["cost", "--algo", "ring", "--gpus", "4294967297"], {}, "--gpus"),
        ("seq not a number", ["cost", "--algo", "ring", "--seq", "lots"], {}, "--seq"),
        ("seq 1e30", ["cost", "--algo", "ring", "--seq", "1000000000000000000000000000000"], {}, "--seq"),
        ("heads zero", ["cost", "--algo", "ring", *SMALL[:4], "--heads", "0"], {}, "--heads"),
        ("kv heads over heads", ["cost", "--algo", "ring", *SMALL[:4], "--heads", "8", "--kv-heads", "16"], {}, "--kv-heads"),
        ("head dim v 1G", ["cost", "--algo", "ring", *SMALL, "--head-dim-v", "1G"], {}, "--head-dim-v"),
        ("dtype bogus", ["cost", "--algo", "ring", *SMALL, "--dtype", "fp7"], {}, "--dtype"),
        ("mask bogus", ["cost", "--algo", "ring", *SMALL, "--mask", "sideways"], {}, "--mask"),
        ("window zero", ["cost", "--algo", "ring", *SMALL, "--mask", "sliding-window", "--window", "0"], {}, "--window"),
        ("documents wrap", ["cost", "--algo", "ring", *SMALL, "--mask", "documents", "--documents",
                            "9223372036854775807,9223372036854775807"], {}, "--documents"),
        ("documents garbage", ["cost", "--algo", "ring", *SMALL, "--mask", "documents", "--documents", "1K,,x"], {}, "--documents"),
        ("layout bogus", ["cost", "--algo", "ring", *SMALL, "--layout", "spiral"], {}, "--layout"),
        ("pass bogus", ["cost", "--algo", "ring", *SMALL, "--pass", "sideways"], {}, "--pass"),
        ("buffers negative", ["cost", "--algo", "ring", *SMALL, "--buffers", "-1"], {}, "--buffers"),
        ("peak tflops 1e999", ["cost", "--algo", "ring", *SMALL, "--peak-tflops", "1e999"], {}, "--peak-tflops"),
        ("peak tflops nan", ["cost", "--algo", "ring", *SMALL, "--peak-tflops", "nan"], {}, "--peak-tflops"),
        ("efficiency 2", ["cost", "--algo", "ring", *SMALL, "--efficiency", "2"], {}, "--efficiency"),
        ("latency inf", ["cost", "--algo", "ring", *SMALL, "--latency-us", "inf"], {}, "--latency-us"),
        ("latency inf simulate", ["simulate", "--algo", "ring", *SMALL, "--latency-us", "inf"], {}, "--latency-us"),
        ("bandwidth inf", ["cost", "--algo", "ring", *SMALL, "--bandwidth", "infGB/s"], {}, "--bandwidth"),
        ("bandwidth 1e999", ["cost", "--algo", "ring", *SMALL, "--bandwidth", "1e999GB/s"], {}, "--bandwidth"),
        ("bandwidth no unit", ["cost", "--algo", "ring", *SMALL, "--bandwidth", "400"], {}, "--bandwidth"),
        ("hbm negative", ["cost", "--algo", "ring", *SMALL, "--hbm-bandwidth", "-3TB/s"], {}, "--hbm-bandwidth"),
        ("overhead inf", ["simulate", "--algo", "ring", *SMALL, "--overhead-us", "inf"], {}, "--overhead-us"),
        ("overhead nan", ["simulate", "--algo", "ring", *SMALL, "--overhead-us", "nan"], {}, "--overhead-us"),
        ("launch negative", ["simulate", "--algo", "ring", *SMALL, "--launch-us", "-1"], {}, "--launch-us"),
        ("nvlink message inf", ["simulate", "--algo", "ring", *SMALL, "--nvlink-message-us", "inf"], {}, "--nvlink-message-us"),
        ("network message nan", ["cost", "--algo", "ring", *SMALL, "--network-message-us", "nan"], {}, "--network-message-us"),
        # Flags that were silently ignored.
        ("variant bogus ring", ["cost", "--algo", "ring", *SMALL, "--variant", "bogus"], {}, "--variant"),
        ("variant bogus mesh", ["cost", "--algo", "mesh", *SMALL, "--variant", "bogus"], {}, "--variant"),
        ("tile bogus", ["cost", "--algo", "mesh", *SMALL, "--tile", "3xq"], {}, "--tile"),
        ("tile mismatch", ["cost", "--algo", "mesh", *SMALL, "--tile", "3x3"], {}, "--tile"),
        ("algo bogus", ["cost", "--algo", "spiral", *SMALL], {}, "--algo"),
        ("placement bogus collective", ["simulate", "--collective", "all-reduce", "--gpus", "8", "--placement", "bogus"], {}, "--placement"),
        ("placement bogus schedule", ["simulate", "--algo", "ring", *SMALL, "--placement", "bogus"], {}, "--placement"),
        ("placement list short", ["simulate", "--algo", "ring", *SMALL, "--placement", "list:0,1"], {}, "--placement"),
        ("chunk zero collective", ["simulate", "--collective", "all-reduce", "--gpus", "8", "--chunk", "0"], {}, "--chunk"),
        ("chunk negative collective", ["simulate", "--collective", "all-reduce", "--gpus", "8", "--chunk", "-4M"], {}, "--chunk"),
        ("size zero", ["simulate", "--collective", "all-reduce", "--gpus", "8", "--size", "0"], {}, "--size"),
        ("size garbage", ["simulate", "--collective", "all-reduce", "--gpus", "8", "--size", "lots"], {}, "--size"),
        ("collective bogus", ["simulate", "--collective", "all-scream", "--gpus", "8"], {}, "--collective"),
        ("collective algorithm bogus", ["simulate", "--collective", "all-reduce", "--gpus", "8", "--algorithm", "star"], {}, "--algorithm"),
        ("fidelity bogus", ["simulate", "--algo", "ring", *SMALL, "--fidelity", "quantum"], {}, "--fidelity"),
        ("gpu profile bogus", ["simulate", "--algo", "ring", *SMALL, "--gpu", "h900"], {}, "--gpu"),
        ("plan model bogus", ["plan", *SMALL, "--model", "guess"], {}, "--model"),
        ("plan top zero", ["plan", *SMALL, "--top", "-1"], {}, "--top"),
        ("routing bogus", ["simulate", "--algo", "ring", *SMALL[2:], "--gpus", "8", "--topology", "h100-ib:1", "--routing", "magic"], {}, "--routing"),
        ("topology bogus preset", ["simulate", "--algo", "ring", *SMALL, "--topology", "nosuch-9"], {}, "nosuch-9"),
        ("topology size mismatch", ["simulate", "--algo", "ring", *SMALL, "--topology", "ring-8"], {}, "ring-8"),
        ("channels negative", ["simulate", "--algo", "ring", *SMALL, "--channels", "-1"], {}, "--channels"),
        ("unknown flag", ["cost", "--algo", "ring", "--frobnicate"], {}, "--frobnicate"),
        ("long token", ["cost", "--algo", big], {}, "--algo"),
        ("bad utf8 algo", ["cost", "--algo", bad_utf8], {}, "--algo"),
        ("run backend bogus", ["run", "--algo", "ring", *SMALL, "--backend", "tpu"], {}, "--backend"),
        ("run watchdog negative", ["run", "--algo", "ring", *SMALL, "--watchdog-s", "-1"], {}, "--watchdog-s"),
        ("calibrate sides huge", ["calibrate", "--output", "c.json", "--sides", "1G,2G,4G"], {}, "--sides"),
        ("calibrate sides few", ["calibrate", "--output", "c.json", "--sides", "64"], {}, "--sides"),
        ("calibrate repeats zero", ["calibrate", "--output", "c.json", "--repeats", "0"], {}, "--repeats"),
        ("calibrate repeats huge", ["calibrate", "--output", "c.json", "--repeats", "1000000000"], {}, "--repeats"),
        ("schedule file endless", ["check", "/dev/zero"], {}, "/dev/zero"),
        ("calibration endless", ["simulate", "--algo", "ring", *SMALL, "--calibration", "/dev/zero"], {}, "/dev/zero"),
        ("assignment endless", ["cost", "--algo", "assignment", "--input", "/dev/zero", "--gpus", "2", "--seq", "2"], {},
         "/dev/zero"),
        ("algo empty", ["cost", "--algo", "", *SMALL], {}, "--algo"),
        ("calibrate unwritable", ["calibrate", "--output", "/proc/nope/c.json", "--sides", "16,32,64"], {}, "/proc/nope/c.json"),
        ("trace unwritable", ["simulate", "--algo", "ring", *SMALL, "--trace", "/proc/nope/t.json"], {}, "/proc/nope/t.json"),
        ("ops csv into a directory", ["simulate", "--algo", "ring", *SMALL, "--ops-csv", "."], {}, "--ops-csv"),
        ("output unwritable", ["schedule", "--algo", "ring", *SMALL, "-o", "/proc/nope/s.json"], {}, "/proc/nope/s.json"),
        # Resource limits: refused up front with an estimate.
        ("plan 65536 analytic", ["plan", "--gpus", "65536", "--model", "analytic"], {}, "memory"),
        ("all-gather 8K", ["schedule", "--algo", "all-gather", "--gpus", "8K", "--seq", "1M", "-o", "/dev/null"], {}, "memory"),
        ("all-to-all 8K", ["simulate", "--collective", "all-to-all", "--gpus", "8K"], {}, "memory"),
        ("chunk 1", ["simulate", "--algo", "ring", "--gpus", "64", "--seq", "1M", "--chunk", "1"], {}, "memory"),
        ("topo full-8000", ["topo", "show", "full-8000"], {}, "supported"),
        ("topo ring 2^32+1", ["topo", "show", "ring", "--gpus", "4294967297"], {}, "--gpus"),
        ("topo bogus action", ["topo", "dance", "ring-8"], {}, "dance"),
        # Files: schedule JSON.
        ("schedule missing", ["check", "nosuch.json"], {}, "nosuch.json"),
        ("schedule is a directory", ["check", "."], {}, "."),
        ("schedule empty", ["check", "empty.json"], {"empty.json": b""}, "empty.json"),
        ("schedule truncated", ["check", "cut.json"], {"cut.json": s[: len(s) // 2]}, "cut.json"),
        ("schedule 1e999", ["check", "inf.json"], {"inf.json": s.replace(b'"gpus":4', b'"gpus":1e999', 1)}, "inf.json"),
        ("schedule gpus string", ["check", "str.json"], {"str.json": s.replace(b'"gpus":4', b'"gpus":"4"', 1)}, "gpus"),
        ("schedule peer string", ["check", "peer.json"], {"peer.json": s.replace(b'"peer":1', b'"peer":"x"', 1)}, "peer"),
        ("schedule peer out of range", ["check", "peer2.json"], {"peer2.json": s.replace(b'"peer":1', b'"peer":99', 1)}, "peer"),
        ("schedule gpus huge", ["check", "huge.json"], {"huge.json": s.replace(b'"gpus":4', b'"gpus":4000000000', 1)}, "gpus"),
        ("schedule batch 2 run", ["run", "--algo", "file", "--input", "b2.json"],
         {"b2.json": s.replace(b'"batch":1', b'"batch":2', 1)}, "batch"),
        ("file with --seq", ["cost", "--algo", "file", "--input", "ok.json", "--seq", "8K"], {"ok.json": s}, "--seq"),
        ("schedule ops not array", ["check", "ops.json"], {"ops.json": s.replace(b'"ops":[', b'"ops":{"x":[', 1)}, "ops"),
        ("schedule bad utf8", ["check", "utf.json"], {"utf.json": s.replace(b'"ring"', b'"r\xffng"', 1)}, "utf.json"),
        # Assignment JSON.
        ("assignment 1e999", ["cost", "--algo", "assignment", "--input", "a.json", "--gpus", "2", "--seq", "1K"],
         {"a.json": ASSIGNMENT.replace("[0, 1]", "[0, 1e999]").encode()}, "a.json"),
        ("assignment gpu out of range", ["cost", "--algo", "assignment", "--input", "a2.json", "--gpus", "2", "--seq", "1K"],
         {"a2.json": ASSIGNMENT.replace("[0, 1]", "[0, 7]").encode()}, "assignment[0][1]"),
        ("assignment rows short", ["cost", "--algo", "assignment", "--input", "a3.json", "--gpus", "2", "--seq", "1K"],
         {"a3.json": b'{"gpus": 2, "assignment": [[0, 1]]}'}, "assignment"),
        # Calibration JSON.
        ("calibration gpu number", ["simulate", "--algo", "ring", *SMALL, "--calibration", "c1.json"],
         {"c1.json": CALIBRATION.replace('"h100"', "5").encode()}, "gpu"),
        ("calibration 1e999", ["simulate", "--algo", "ring", *SMALL, "--calibration", "c2.json"],
         {"c2.json": CALIBRATION.replace("9.89e14", "1e999").encode()}, "c2.json"),
        ("calibration tiny peak", ["simulate", "--algo", "ring", *SMALL, "--calibration", "c3.json"],
         {"c3.json": CALIBRATION.replace("9.89e14", "1e-300").encode()}, "peak_flops_per_s_16bit"),
        ("calibration tiny efficiency", ["simulate", "--algo", "ring", *SMALL, "--calibration", "c4.json"],
         {"c4.json": CALIBRATION.replace("0.6", "1e-300").encode()}, "max_efficiency"),
        ("calibration not object", ["validate", "--algo", "ring", *SMALL, "--calibration", "c5.json"],
         {"c5.json": b"[1, 2, 3]"}, "c5.json"),
        # Topology YAML.
        ("topology yaml inf bandwidth", ["topo", "check", "t1.yaml"],
         {"t1.yaml": TOPOLOGY.replace("32GB/s", "infGB/s", 1).encode()}, "t1.yaml"),
        ("topology yaml gpus huge", ["topo", "check", "t2.yaml"],
         {"t2.yaml": TOPOLOGY.replace("gpus: 4", "gpus: 4000000").encode()}, "t2.yaml"),
        ("topology yaml latency nan", ["topo", "check", "t3.yaml"],
         {"t3.yaml": TOPOLOGY.replace("latency_us: 1", "latency_us: .nan", 1).encode()}, "t3.yaml"),
        ("topology yaml bad utf8 name", ["topo", "show", "t4.yaml", "--json"],
         {"t4.yaml": TOPOLOGY.replace("name: probe", "name: pr\xffbe").encode("latin-1")}, "t4.yaml"),
        ("topology yaml not a map", ["topo", "check", "t5.yaml"], {"t5.yaml": b"- 1\n- 2\n"}, "t5.yaml"),
        ("topology yaml syntax", ["topo", "check", "t6.yaml"], {"t6.yaml": b"name: [unclosed\n"}, "t6.yaml"),
        ("topology ring file 4M", ["topo", "show", "t7.yaml"],
         {"t7.yaml": b"name: big\nring: {gpus: 4000000, bandwidth: 50GB/s, latency_us: 1}\n"}, "t7.yaml"),
        # Sweep specs.
        ("sweep spec missing", ["sweep", "nosuch.yaml", "--count"], {}, "nosuch.yaml"),
        ("sweep spec inf latency", ["sweep", "w1.yaml", "--count"],
         {"w1.yaml": (SPEC + "  - latency_us: [.inf]\n").encode()}, "w1.yaml"),
        ("sweep spec count wraps", ["sweep", "w2.yaml", "--count"], {"w2.yaml": spec_with_points(8, 256)}, "w2.yaml"),
        ("sweep spec bad utf8 name", ["sweep", "w3.yaml", "--out", "w3", "-q"],
         {"w3.yaml": SPEC.replace("name: probe", "name: pr\xffbe").encode("latin-1")}, "w3.yaml"),
        ("sweep jobs negative", ["sweep", "w4.yaml", "--jobs", "-1", "--out", "w4"], {"w4.yaml": SPEC.encode()}, "--jobs"),
        ("sweep out is a file", ["sweep", "w5.yaml", "--out", "w5.yaml", "-q"], {"w5.yaml": SPEC.encode()}, "w5.yaml"),
        # Results CSV for plot.
        ("plot missing", ["plot", "nosuch.csv", "--x", "gpus", "--y", "time_s", "-o", "f.svg"], {}, "nosuch.csv"),
        ("plot ragged csv", ["plot", "r.csv", "--x", "gpus", "--y", "time_s", "-o", "f.svg"],
         {"r.csv": b"gpus,time_s\n4,1.0\n8\n"}, "r.csv"),
        ("plot column missing", ["plot", "r2.csv", "--x", "gpus", "--y", "nope", "-o", "f.svg"],
         {"r2.csv": b"gpus,time_s\n4,1.0\n8,2.0\n"}, "nope"),
        ("plot kind bogus", ["plot", "r3.csv", "--x", "gpus", "--y", "time_s", "--kind", "pie", "-o", "f.svg"],
         {"r3.csv": b"gpus,time_s\n4,1.0\n8,2.0\n"}, "--kind"),
    ]


FIELDS = ["seq", "gpus", "heads", "head_dim", "batch", "window", "latency_us", "overhead_us", "channels",
          "head_dim_v", "kv_heads", "chunk"]


def spec_with_points(n_axes, values_per_axis):
    """A spec of values_per_axis ** n_axes points: one axis per field, whole-number values."""
    axes = "".join(f"  - {field}: [{', '.join(str(i + 1) for i in range(values_per_axis))}]\n"
                   for field in FIELDS[:n_axes])
    return ("name: big\nfixed: {algo: ring}\naxes:\n" + axes).encode()


def works(schedule_json):
    """(name, arguments, files, a text stdout must contain): inputs at the edge that must be handled."""
    yield from [
        # 40^10 = 10,485,760,000,000,000 points, counted without enumerating them.
        ("sweep count 1e16", ["sweep", "c1.yaml", "--count"], {"c1.yaml": spec_with_points(10, 40)},
         str(40 ** 10)),
        ("long utf8 name in JSON", ["topo", "show", "u.yaml", "--json"],
         {"u.yaml": TOPOLOGY.replace("name: probe", "name: caf\u00e9").encode()}, "caf\u00e9"),
    ]


def run(tessera, arguments, folder):
    arguments = [a if isinstance(a, bytes) else a.encode() for a in arguments]
    try:
        result = subprocess.run([tessera.encode(), *arguments], cwd=folder, capture_output=True,
                                timeout=TIME_LIMIT_S, preexec_fn=limit_resources)
    except subprocess.TimeoutExpired:
        return None, b""
    return result.returncode, result.stderr


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    tessera, scratch = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    verbose = "--verbose" in sys.argv
    folder = os.path.join(scratch, "bad_input_probe")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    made = subprocess.run([tessera, "schedule", "--algo", "ring", *SMALL, "--pass", "forward"], capture_output=True)
    if made.returncode != 0:
        print("cannot write the seed schedule:", made.stderr.decode(errors="replace"))
        return 1
    schedule_json = made.stdout
    failures = 0
    total = 0
    for name, arguments, files, place in cases(schedule_json):
        total += 1
        for file_name, content in files.items():
            with open(os.path.join(folder, file_name), "wb") as out:
                out.write(content if isinstance(content, bytes) else content.encode())
        code, stderr = run(tessera, arguments, folder)
        text = stderr.decode("utf-8", errors="replace")
        lines = text.splitlines()
        problems = []
        if code is None:
            problems.append(f"no answer within {TIME_LIMIT_S} s")
        elif code != 2:
            problems.append(f"exit {code}, expected 2")
        if code is not None:
            if len(lines) != 1:
                problems.append(f"{len(lines)} lines on stderr, expected 1")
            if "internal error" in text:
                problems.append("internal error")
            if len(text) > MAX_MESSAGE_CHARS:
                problems.append(f"message of {len(text)} characters")
            if place not in text:
                problems.append(f"does not name {place!r}")
            try:
                stderr.decode("utf-8")
            except UnicodeDecodeError:
                problems.append("message is not UTF-8")
        if problems:
            failures += 1
            print(f"FAIL {name}: {'; '.join(problems)}: {text[:300].strip()!r}")
        elif verbose:
            print(f"ok   {name}: {text.strip()[:200]}")
    for name, arguments, files, expected in works(schedule_json):
        total += 1
        for file_name, content in files.items():
            with open(os.path.join(folder, file_name), "wb") as out:
                out.write(content)
        try:
            result = subprocess.run([tessera, *arguments], cwd=folder, capture_output=True, timeout=TIME_LIMIT_S,
                                    preexec_fn=limit_resources)
            answer = result.stdout.decode("utf-8", errors="replace")
            ok = result.returncode == 0 and expected in answer
            why = f"exit {result.returncode}: {result.stderr.decode(errors='replace')[:200]!r} {answer[:200]!r}"
        except subprocess.TimeoutExpired:
            ok, why = False, f"no answer within {TIME_LIMIT_S} s"
        if not ok:
            failures += 1
            print(f"FAIL {name}: expected exit 0 and {expected!r}: {why}")
        elif verbose:
            print(f"ok   {name}")
    print(f"{total - failures} of {total} bad inputs got exit 2 and one line naming the place")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
