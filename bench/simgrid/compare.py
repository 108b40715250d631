#!/usr/bin/env python3
"""Tessera against SimGrid on the same ring all-reduce (issue 18).

Runs `tessera simulate --collective all-reduce --size SIZE --topology ring-N` and a small SimGrid
program (ring_allreduce.cpp beside this script: the same ring, links, pieces and step order,
plain max-min with constant bandwidth) side by side, each in a child process, and prints both
wall times (median of --runs), both peak RSS figures (ru_maxrss) and both simulated times.

Needs SimGrid's development files (Debian: apt-get install libsimgrid-dev) and pkg-config;
without them it says so and exits 0. Not part of ctest: at N = 1024 SimGrid takes tens of seconds.

Usage: bench/simgrid/compare.py [--tessera build/release/cli/tessera] [--gpus 1024] [--size 1G]
                                [--runs 3] [--build-dir build/simgrid-compare]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cluster_scale import run_once, median  # noqa: E402

SIMGRID_CONFIG = ["--cfg=network/model:CM02", "--cfg=network/TCP-gamma:0", "--cfg=network/crosstraffic:0",
                  "--log=root.thres:warning"]


def simgrid_flags():
    if shutil.which("pkg-config") is None:
        return None
    found = subprocess.run(["pkg-config", "--cflags", "--libs", "simgrid"], capture_output=True, text=True)
    return found.stdout.split() if found.returncode == 0 else None


def measure(argv, runs):
    walls, peak_mb, output = [], 0.0, ""
    for _ in range(runs):
        wall, rss_mb, code, output = run_once(argv, 3600)
        if code != 0:
            raise SystemExit(f"compare.py: {' '.join(argv)} failed (exit {code}):\n{output}")
        walls.append(wall)
        peak_mb = max(peak_mb, rss_mb)
    return median(walls), peak_mb, output


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", default="build/release/cli/tessera")
    parser.add_argument("--gpus", type=int, default=1024)
    parser.add_argument("--size", default="1G")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--link-bytes-per-s", type=float, default=50e9, help="the ring-N preset's link bandwidth")
    parser.add_argument("--link-latency-s", type=float, default=5e-6, help="the ring-N preset's per-hop latency")
    parser.add_argument("--build-dir", default="build/simgrid-compare")
    args = parser.parse_args()

    flags = simgrid_flags()
    if flags is None:
        print("SimGrid comparison skipped: SimGrid is not installed (Debian: apt-get install libsimgrid-dev)")
        return 0
    if not os.path.exists(args.tessera):
        print(f"compare.py: {args.tessera} not found (cmake --build --preset release --target tessera)")
        return 2

    topology = f"ring-{args.gpus}"
    tessera_argv = [args.tessera, "simulate", "--collective", "all-reduce", "--size", args.size, "--gpus",
                    str(args.gpus), "--topology", topology, "--json"]
    t_wall, t_mb, t_out = measure(tessera_argv, args.runs)
    result = json.loads(t_out)
    t_sim = result["makespan_s"]
    size_bytes = result["size_bytes"]
    # The ring-N preset's link (`tessera topo list`): 50 GB/s per direction, 5 us per hop.
    bandwidth, latency_s = args.link_bytes_per_s, args.link_latency_s

    os.makedirs(args.build_dir, exist_ok=True)
    program = os.path.join(args.build_dir, "ring_allreduce")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ring_allreduce.cpp")
    if not os.path.exists(program) or os.path.getmtime(program) < os.path.getmtime(source):
        subprocess.run(["c++", "-O2", "-std=c++17", source, "-o", program] + flags, check=True)
    s_wall, s_mb, s_out = measure([program, str(args.gpus), repr(float(size_bytes)), repr(float(bandwidth)),
                                   repr(float(latency_s))] + SIMGRID_CONFIG, args.runs)
    s_sim = float(re.search(r"simulated time: ([0-9.eE+-]+) s", s_out).group(1))

    print(f"ring all-reduce of {args.size} ({size_bytes:.0f} bytes) on {topology} "
          f"({2 * (args.gpus - 1) * args.gpus} flows); median of {args.runs} runs")
    print(f"  Tessera: {t_wall:8.3f} s wall, {t_mb:7.0f} MB peak RSS, simulated {t_sim:.9f} s")
    print(f"  SimGrid: {s_wall:8.3f} s wall, {s_mb:7.0f} MB peak RSS, simulated {s_sim:.9f} s")
    print(f"  speed: Tessera {s_wall / t_wall:.1f}x SimGrid's (target >= 20x); memory: Tessera "
          f"{t_mb / s_mb:.2f}x SimGrid's (target <= 1x); simulated times differ by "
          f"{abs(t_sim - s_sim) / s_sim:.2e} (relative)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
