#!/usr/bin/env python3
"""What sets the prediction of the H200's 16-virtual-rank ring validation (validate_ring.log):
`tessera validate --predict-only` on this folder's calibration file, one figure changed at a time,
against the measured 335.850 ms. Usage: sensitivity.py [path/to/tessera] (default:
build/release/cli/tessera, else build/default/cli/tessera, from the repository root)."""
import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
MEASURED_S = 0.335850  # validate_ring.log: the execution compared


def tessera_path():
    if len(sys.argv) > 1:
        return sys.argv[1]
    for candidate in ("build/release/cli/tessera", "build/default/cli/tessera"):
        path = os.path.join(ROOT, candidate)
        if os.access(path, os.X_OK):
            return path
    sys.exit("sensitivity.py: build the tessera command first, or give its path")


def predicted_s(tessera, calibration):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(calibration, file)
    try:
        out = subprocess.run([tessera, "validate", "--algo", "ring", "--gpus", "16", "--seq", "32K", "--heads", "32",
                              "--kv-heads", "32", "--head-dim", "128", "--pass", "both", "--backend", "cuda",
                              "--calibration", file.name, "--predict-only", "--json"],
                             capture_output=True, text=True, check=True)
    finally:
        os.unlink(file.name)
    return json.loads(out.stdout)["end_to_end"]["predicted_s"]


def curve_to(top):
    def change(calibration):
        measured = calibration["sharing"]["concurrency_speedup"]
        last = measured[-1]
        calibration["sharing"]["concurrency_speedup"] = measured + [last + (top - last) * (k - 4) / 12 for k in range(5, 17)]
    return change


def main():
    tessera = tessera_path()
    with open(os.path.join(HERE, "calibration.json")) as file:
        base = json.load(file)
    changes = [
        ("none", lambda c: None),
        ("per-block overhead -> 0", lambda c: c.__setitem__("launch_overhead_s", 1e-9)),
        ("per-block overhead halved", lambda c: c.__setitem__("launch_overhead_s", c["launch_overhead_s"] / 2)),
        ("concurrency curve rising linearly to 2.0x at 16", curve_to(2.0)),
        ("the same, to 2.5x at 16", curve_to(2.5)),
        ("no gain from sharing (1.0x at every k)", lambda c: c["sharing"].__setitem__("concurrency_speedup", [1, 1, 1, 1])),
        ("copies within the device 2x faster", lambda c: c["sharing"].__setitem__("copy_bytes_per_s", 2 * c["sharing"]["copy_bytes_per_s"])),
        ("merges 2x faster", lambda c: c.__setitem__("hbm_bytes_per_s", 2 * c["hbm_bytes_per_s"])),
    ]
    print(f"{'change to the calibration':<50} {'predicted':>10} {'error':>8}")
    for name, change in changes:
        calibration = copy.deepcopy(base)
        change(calibration)
        seconds = predicted_s(tessera, calibration)
        print(f"{name:<50} {seconds * 1e3:8.1f} ms {100 * (MEASURED_S / seconds - 1):+7.1f} %")


if __name__ == "__main__":
    main()
