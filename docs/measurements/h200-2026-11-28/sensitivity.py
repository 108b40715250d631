#!/usr/bin/env python3
"""What separates the H200's 16-virtual-rank mesh 4x4 validation from the ring one
(after/validate_*.log): `tessera validate --predict-only` on after/calibration.json, one figure
changed at a time, against the measured end to end of each. Predictions are at the calibration's
speed (the logs' "without the adjustment" lines). Usage: sensitivity.py [path/to/tessera]
(default: build/release/cli/tessera, else build/default/cli/tessera, from the repository root)."""
import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SCHEDULES = {  # the validate flags that pick each schedule, and its measured end to end (after/)
    "ring": (["--algo", "ring"], 0.303822),
    "mesh 4x4": (["--algo", "mesh", "--tile", "4x4"], 0.292020),
}


def tessera_path():
    if len(sys.argv) > 1:
        return sys.argv[1]
    for candidate in ("build/release/cli/tessera", "build/default/cli/tessera"):
        path = os.path.join(ROOT, candidate)
        if os.access(path, os.X_OK):
            return path
    sys.exit("sensitivity.py: build the tessera command first, or give its path")


def predicted_s(tessera, calibration, algorithm_flags):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(calibration, file)
    try:
        out = subprocess.run([tessera, "validate", *algorithm_flags, "--gpus", "16", "--seq", "32K", "--heads", "32",
                              "--kv-heads", "32", "--head-dim", "128", "--pass", "both", "--backend", "cuda",
                              "--calibration", file.name, "--predict-only", "--json"],
                             capture_output=True, text=True, check=True)
    finally:
        os.unlink(file.name)
    return json.loads(out.stdout)["end_to_end"]["predicted_s"]


def curve_gain(factor):
    """The concurrency curve with its gain above 1 scaled: 1 + factor * (speedup - 1)."""
    def change(calibration):
        sharing = calibration["sharing"]
        sharing["concurrency_speedup"] = [1 + factor * (x - 1) for x in sharing["concurrency_speedup"]]
    return change


def copies(factor):
    def change(calibration):
        calibration["sharing"]["copy_bytes_per_s"] *= factor
        calibration["link"]["bytes_per_s"] *= factor
    return change


def main():
    tessera = tessera_path()
    with open(os.path.join(HERE, "after", "calibration.json")) as file:
        base = json.load(file)
    changes = [
        ("none", lambda c: None),
        ("concurrency gain x0.75", curve_gain(0.75)),
        ("concurrency gain x0.6", curve_gain(0.6)),
        ("no gain from sharing (1.0x at every k)", curve_gain(0.0)),
        ("per-block overhead -> 0", lambda c: c.__setitem__("launch_overhead_s", 1e-9)),
        ("copies and transfers x0.5", copies(0.5)),
        ("copies and transfers x2", copies(2)),
        ("copies and transfers x10", copies(10)),
    ]
    print(f"{'change to the calibration':<42}" + "".join(f" {name + ': predicted, error':>28}" for name in SCHEDULES))
    for name, change in changes:
        calibration = copy.deepcopy(base)
        change(calibration)
        cells = []
        for flags, measured_s in SCHEDULES.values():
            seconds = predicted_s(tessera, calibration, flags)
            cells.append(f"{seconds * 1e3:8.1f} ms {100 * (measured_s / seconds - 1):+7.1f} %")
        print(f"{name:<42}" + "".join(f" {cell:>28}" for cell in cells))


if __name__ == "__main__":
    main()
