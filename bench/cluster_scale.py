#!/usr/bin/env python3
"""Cluster-scale speed (issue 18): runs the release `tessera` binary on the rows of the issue's
table, each in a child process, and prints the median wall time of N runs, the peak resident
memory (the largest ru_maxrss of the runs, from wait4), the target and the ratio to it.

Usage: bench/cluster_scale.py [--tessera build/release/cli/tessera]
                              [--bench-sweep build/release/bench/bench_sweep]
                              [--runs 3] [--timeout-s 300] [--rows 1,2,...] [--scaling]

A run past --timeout-s is killed and its row shows "> T s" (no further runs of that row).
--scaling prints how time and memory grow with the GPU count for cost, simulate and plan
(the README's table) instead of the issue's rows.
Run by `cmake --build --preset release --target bench` (after the C++ benchmarks).
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

# (what, arguments, target seconds, target peak MB); None: no target on that axis.
ROWS = [
    ("plan (default: 256 GPUs, 1M tokens, flow)", ["plan"], 1.0, 200),
    ("plan --gpus 1024 --model analytic", ["plan", "--gpus", "1024", "--model", "analytic"], 5.0, 1000),
    ("cost --algo ring --gpus 1024 --seq 1M --pass both",
     ["cost", "--algo", "ring", "--gpus", "1024", "--seq", "1M", "--pass", "both"], 0.3, 150),
    ("cost --algo mesh --gpus 1024 --seq 1M --pass both (best tile)",
     ["cost", "--algo", "mesh", "--gpus", "1024", "--seq", "1M", "--pass", "both"], 0.2, None),
    ("simulate --algo ring --gpus 1024 --seq 1M --pass both --topology h100-ib:128",
     ["simulate", "--algo", "ring", "--gpus", "1024", "--seq", "1M", "--pass", "both", "--topology", "h100-ib:128"],
     2.0, 300),
    ("simulate --collective all-reduce --size 1G --gpus 1024 --topology ring-1024",
     ["simulate", "--collective", "all-reduce", "--size", "1G", "--gpus", "1024", "--topology", "ring-1024"],
     None, None),
]
SIMGRID_NOTE = "target: >= 20x SimGrid's speed in no more memory (bench/simgrid/compare.py)"
SWEEP_TARGETS = {"analytic": 10000.0, "flow": 2000.0}


def run_once(argv, timeout_s):
    """(wall seconds, peak RSS in MB, exit code, output) of one child run; wall None if killed.
    The output goes to a temporary file (no pipe to drain); wait4 gives the child's own rusage."""
    with tempfile.TemporaryFile(mode="w+") as output:
        start = time.monotonic()
        child = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT)
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid == child.pid:
                wall = time.monotonic() - start
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() - start > timeout_s:
                os.kill(child.pid, signal.SIGKILL)
                _, status, usage = os.wait4(child.pid, 0)
                wall, code = None, -9
                break
            time.sleep(0.005)
        child.returncode = code  # reaped here: keep Popen from waiting again
        output.seek(0)
        return wall, usage.ru_maxrss / 1024.0, code, output.read()


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def measure(argv, runs, timeout_s):
    """(median seconds or None when a run timed out, peak MB, last exit code, last output, runs done)."""
    walls, peak_mb, code, output = [], 0.0, 0, ""
    for _ in range(runs):
        wall, rss_mb, code, output = run_once(argv, timeout_s)
        peak_mb = max(peak_mb, rss_mb)
        if wall is None:
            return None, peak_mb, code, output, len(walls) + 1
        walls.append(wall)
    return median(walls), peak_mb, code, output, len(walls)


def ratio(value, target):
    return f"{value / target:.2f}x target" if target else ""


def print_rows(args):
    wanted = {int(r) for r in args.rows.split(",")} if args.rows else None
    print(f"cluster-scale bench (issue 18): {args.tessera}; median of {args.runs} runs, peak RSS = max over runs; "
          f"ratio = figure / target (<= 1 meets it)")
    for number, (what, extra, target_s, target_mb) in enumerate(ROWS, 1):
        if wanted and number not in wanted:
            continue
        seconds, peak_mb, code, output, done = measure([args.tessera] + extra, args.runs, args.timeout_s)
        if seconds is None:
            time_text = f"> {args.timeout_s:.0f} s (killed)"
        else:
            time_text = f"{seconds:.3f} s"
        line = f"{number}. {what}\n     {time_text} (median of {done}), {peak_mb:.0f} MB peak"
        if code not in (0, -9):
            line += f", exit {code}: {output.strip().splitlines()[-1] if output.strip() else ''}"
        targets = []
        if target_s:
            targets.append(f"target <= {target_s} s: " +
                           (ratio(seconds, target_s) if seconds is not None else "not met"))
        if target_mb:
            targets.append(f"<= {target_mb} MB: {ratio(peak_mb, target_mb)}")
        if not target_s and not target_mb:
            targets.append(SIMGRID_NOTE)
            match = re.search(r"time[^\n]*", output)
            if match:
                targets.append("simulated " + " ".join(match.group(0).split()))
        print(line + "\n     " + "; ".join(targets), flush=True)
    number = len(ROWS) + 1
    if (not wanted or number in wanted) and args.bench_sweep:
        if not os.path.exists(args.bench_sweep):
            print(f"{number}. sweep throughput: {args.bench_sweep} not built", flush=True)
            return
        wall, peak_mb, code, output = run_once([args.bench_sweep], args.timeout_s * 4)
        print(f"{number}. sweep throughput (bench_sweep, 4-32 GPUs; its own medians of 3), {peak_mb:.0f} MB peak")
        for fidelity, target in SWEEP_TARGETS.items():
            label = r"analytical" if fidelity == "analytic" else r"simulated \(flow\)"
            match = re.search(label + r"\s*:.*= ([0-9.e+]+) points/s", output)
            if match:
                rate = float(match.group(1))
                print(f"     {fidelity}: {rate:.0f} points/s; target >= {target:.0f}: {rate / target:.2f}x target")
            else:
                print(f"     {fidelity}: no figure (exit {code})")
        # Its second part: network points (24 per schedule), with the schedule cache and without.
        for fidelity in SWEEP_TARGETS:
            rates = {}
            for cache in ("cached", "uncached"):
                match = re.search(fidelity + ", " + cache + r"\s*:.*= ([0-9.e+]+) points/s", output)
                if match:
                    rates[cache] = float(match.group(1))
            if len(rates) == 2:
                print(f"     {fidelity}, 24 network points per schedule: {rates['cached']:.0f} points/s with the "
                      f"schedule cache, {rates['uncached']:.0f} without ({rates['cached'] / rates['uncached']:.1f}x)")


def print_scaling(args):
    """How time and memory grow with P (one run each; the README's table)."""
    commands = [
        ("cost ring", lambda p: ["cost", "--algo", "ring", "--gpus", str(p), "--seq", "1M", "--pass", "both"]),
        ("simulate ring", lambda p: ["simulate", "--algo", "ring", "--gpus", str(p), "--seq", "1M", "--pass", "both",
                                     "--topology", f"h100-ib:{max(1, p // 8)}"]),
        ("plan analytic", lambda p: ["plan", "--gpus", str(p), "--seq", "1M", "--model", "analytic"]),
        ("plan flow", lambda p: ["plan", "--gpus", str(p), "--seq", "1M"]),
    ]
    sizes = [int(p) for p in args.scaling_gpus.split(",")]
    print("| command (1M tokens, fwd+bwd) | " + " | ".join(f"P = {p}" for p in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name, make in commands:
        cells = []
        for p in sizes:
            seconds, peak_mb, code, _, _ = measure([args.tessera] + make(p), args.runs, args.timeout_s)
            cells.append((f"{seconds:.2f} s" if seconds is not None else f"> {args.timeout_s:.0f} s") +
                         f", {peak_mb:.0f} MB")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", default="build/release/cli/tessera")
    parser.add_argument("--bench-sweep", default="build/release/bench/bench_sweep")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout-s", type=float, default=300.0)
    parser.add_argument("--rows", default="", help="comma-separated row numbers (1-7); default all")
    parser.add_argument("--scaling", action="store_true", help="print the growth-with-P table instead")
    parser.add_argument("--scaling-gpus", default="64,128,256,512,1024")
    args = parser.parse_args()
    if not os.path.exists(args.tessera):
        print(f"cluster_scale.py: {args.tessera} not found (build it: cmake --build --preset release --target tessera)")
        return 2
    if args.scaling:
        print_scaling(args)
    else:
        print_rows(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
