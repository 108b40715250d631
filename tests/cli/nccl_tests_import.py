#!/usr/bin/python3
"""tessera calibrate --from-nccl-tests on published nccl-tests tables (tests/data/nccl-tests/,
whose README cites each source), checked against a least-squares fit computed here with NumPy
from the same rows; a synthetic table built from a known latency and bandwidth is recovered
exactly; bad and truncated tables are refused with exit 2 naming the file and line.

Usage: nccl_tests_import.py TESSERA DATA_DIR SCRATCH_DIR.  Exit 77 (skipped) without NumPy.
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("skipped: NumPy is not installed (Debian: python3-numpy)")
    sys.exit(77)

TESSERA, DATA, SCRATCH = sys.argv[1:4]
os.makedirs(SCRATCH, exist_ok=True)
failures = []
ALL_REDUCE = os.path.join(DATA, "all_reduce_perf-h100-2x8.txt")  # 16 ranks on 2 hosts
SENDRECV = os.path.join(DATA, "sendrecv_perf-a100-1x8.txt")      # one server, no Rank lines


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def tessera(*arguments):
    return subprocess.run([TESSERA, *arguments], capture_output=True, text=True)


def samples(path, factor, steps):
    """(steps, bus bytes, time s) of every out-of-place and in-place time of a table's rows: the
    nccl-tests conventions (doc/PERFORMANCE.md) written out independently of the tool."""
    out = []
    for line in open(path):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        size = int(words[0])
        for time in (words[-8], words[-4]):
            if time != "N/A":
                out.append((steps, size * factor, float(time) * 1e-6))
    return out


def least_squares(points):
    """time = steps x latency + bytes / bandwidth, ordinary least squares (NumPy's lstsq)."""
    a = np.array([[s, b] for s, b, _ in points])
    t = np.array([t for _, _, t in points])
    (latency, seconds_per_byte), *_ = np.linalg.lstsq(a, t, rcond=None)
    return 1 / seconds_per_byte, latency


def close(a, b, tolerance=1e-9):
    return abs(a - b) <= tolerance * abs(b)


n = 16
all_reduce = samples(ALL_REDUCE, 2 * (n - 1) / n, 2 * (n - 1))  # ring all-reduce: 2(n-1)/n, 2(n-1) steps
sendrecv = samples(SENDRECV, 1.0, 1)                               # send/recv: busbw = algbw, one message

# One link from both tables, and one per level with a topology of 8-GPU servers.
output = os.path.join(SCRATCH, "nccl.json")
result = tessera("calibrate", "--from-nccl-tests", ALL_REDUCE, SENDRECV, "--topology", "h100-ib:2",
                 "--level", "intra-node", "-o", output)
print(result.stdout)
check(result.returncode == 0, "calibrate --from-nccl-tests exits 0: " + result.stderr.strip())
calibration = json.load(open(output))
for key, points in (("link", all_reduce + sendrecv), ("inter_node_link", all_reduce), ("intra_node_link", sendrecv)):
    bandwidth, latency = least_squares(points)
    got = calibration.get(key, {})
    print(f"{key}: NumPy fit {bandwidth / 1e9:.3f} GB/s, {latency * 1e6:.3f} us; "
          f"tessera {got.get('bytes_per_s', 0) / 1e9:.3f} GB/s, {got.get('latency_s', 0) * 1e6:.3f} us")
    check(close(got.get("bytes_per_s", 0), bandwidth) and close(got.get("latency_s", 0), latency),
          key + ": the fit equals NumPy's least squares over the same rows")
# The inter-node bandwidth sits with the large messages' busbw (338.82 GB/s at 8 GiB in the table).
check(300e9 < calibration["inter_node_link"]["bytes_per_s"] < 345e9, "inter-node bandwidth near the large-message busbw")

# A table made from a known link is recovered: all_gather on 8 ranks, latency 5 us, 40 GB/s.
synthetic = os.path.join(SCRATCH, "all_gather_perf-synthetic.txt")
with open(synthetic, "w") as file:
    file.write("#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n")
    for size in (1 << 20, 1 << 24, 1 << 28):
        time_us = (7 * 5e-6 + size * 7 / 8 / 40e9) * 1e6  # n-1 = 7 steps, (n-1)/n of the size each
        algbw = size / (time_us * 1e-6) / 1e9
        file.write(f"{size} {size // 4} float none -1 {time_us:.6f} {algbw:.6f} {algbw * 7 / 8:.6f} 0 "
                   f"{time_us:.6f} {algbw:.6f} {algbw * 7 / 8:.6f} 0\n")
result = tessera("calibrate", "--from-nccl-tests", synthetic, "-o", os.path.join(SCRATCH, "synthetic.json"))
check(result.returncode == 0, "synthetic table exits 0: " + result.stderr.strip())
link = json.load(open(os.path.join(SCRATCH, "synthetic.json")))["link"]
check(close(link["bytes_per_s"], 40e9, 1e-6) and close(link["latency_s"], 5e-6, 1e-4),
      f"synthetic: 40 GB/s and 5 us recovered ({link['bytes_per_s']:.6g} B/s, {link['latency_s']:.6g} s)")


def refused(text, name, needle, *extra):
    path = os.path.join(SCRATCH, name)
    with open(path, "w") as file:
        file.write(text)
    result = tessera("calibrate", "--from-nccl-tests", path, *extra, "-o", os.path.join(SCRATCH, "bad.json"))
    message = result.stderr.strip()
    check(result.returncode == 2 and needle.replace("PATH", path) in message and "\n" not in message,
          f"{name}: exit 2 with {needle!r} ({result.returncode}: {message})")


lines = open(ALL_REDUCE).read().splitlines(keepends=True)
header_end = next(i for i, line in enumerate(lines) if "(B)" in line) + 1
# Cut in the middle of the 5th row (a file copied while the test was still running).
cut = "".join(lines[:header_end + 4]) + lines[header_end + 4][:40]
refused(cut, "all_reduce_perf-cut.txt", f"PATH:{header_end + 5}: a row cut short")
bad_time = "".join(lines[:header_end]) + lines[header_end].replace("135.8", "13x.8")
refused(bad_time, "all_reduce_perf-badtime.txt", f"PATH:{header_end + 1}: time: expected microseconds")
refused("".join(lines[:header_end]), "all_reduce_perf-empty.txt", "PATH: the table has no rows")
refused("hello\n", "all_reduce_perf-notable.txt", "PATH: no nccl-tests header")
refused(open(SENDRECV).read(), "unnamed.txt", "PATH: cannot tell which test wrote it")
refused(open(SENDRECV).read(), "sendrecv_perf-nolevel.txt", "PATH: cannot tell intra-node from inter-node",
        "--topology", "h100-ib:2")
one_size = "".join(lines[:header_end + 1])
refused(one_size, "all_reduce_perf-onesize.txt", "cannot separate latency from bandwidth")
result = tessera("calibrate", "--from-nccl-tests", SENDRECV, "--level", "intra-node", "-o", os.path.join(SCRATCH, "x.json"))
check(result.returncode == 2 and "--level: only with --topology" in result.stderr, "--level without --topology refused")
result = tessera("calibrate", "--from-nccl-tests", SENDRECV, "--sides", "64,128,256", "-o", os.path.join(SCRATCH, "x.json"))
check(result.returncode == 2 and "--sides" in result.stderr, "--sides with --from-nccl-tests refused")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
