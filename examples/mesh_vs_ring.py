#!/usr/bin/env python3
"""Mesh against Ring over GPU counts: a figure (PNG) made with the tessera module and matplotlib.

For each GPU count, Ring (pass-KV) and Mesh (the tile the generator picks) are costed on the
same problem and network (tessera.cost, the analytical model of `tessera cost`), and their
times and the bytes the busiest GPU receives are drawn side by side. Headless: matplotlib's Agg
backend writes the file, no display is needed.

    PYTHONPATH=build/default/python python3 examples/mesh_vs_ring.py --out mesh_vs_ring.png
"""

import argparse
import sys

import matplotlib

matplotlib.use("Agg")  # headless: no display needed
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

import tessera  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="mesh_vs_ring.png", help="PNG file to write")
    parser.add_argument("--gpus", default="4,8,16,32,64", help="GPU counts, comma-separated")
    parser.add_argument("--seq", default="256K", help="sequence length in tokens (as --seq)")
    parser.add_argument("--bandwidth", default="400Gb/s", help="link bandwidth with its unit (as --bandwidth)")
    args = parser.parse_args(argv)

    gpu_counts = [int(text) for text in args.gpus.split(",")]
    common = {"seq": args.seq, "bandwidth": args.bandwidth}
    rows = []
    for gpus in gpu_counts:
        for algo in ("ring", "mesh"):
            report = tessera.cost(algo=algo, gpus=gpus, **common)
            rows.append({"gpus": gpus, "algo": algo, "schedule": report["schedule"],
                         "time_s": report["time_s"], "recv_bytes_max": report["recv_bytes_max"]})

    figure, (time_axis, bytes_axis) = plt.subplots(1, 2, figsize=(10, 4))
    for algo, marker in (("ring", "o"), ("mesh", "s")):
        mine = [row for row in rows if row["algo"] == algo]
        time_axis.plot([row["gpus"] for row in mine], [row["time_s"] * 1e3 for row in mine], marker=marker, label=algo)
        bytes_axis.plot([row["gpus"] for row in mine], [row["recv_bytes_max"] / 1e9 for row in mine], marker=marker,
                        label=algo)
    time_axis.set_yscale("log")  # compute shrinks as 1/GPUs: the gap shows on a log scale
    for axis, label in ((time_axis, "time (ms, alpha-beta model)"), (bytes_axis, "received by the busiest GPU (GB)")):
        axis.set_xscale("log", base=2)
        axis.set_xticks(gpu_counts, [str(gpus) for gpus in gpu_counts])
        axis.set_xlabel("GPUs")
        axis.set_ylabel(label)
        axis.grid(True, alpha=0.3)
        axis.legend()
    figure.suptitle(f"Mesh vs Ring: {args.seq} tokens, {args.bandwidth} links (tessera {tessera.__version__})")
    figure.tight_layout()
    figure.savefig(args.out, format="png", dpi=100)
    for row in rows:
        print(f"{row['gpus']:>5} GPUs  {row['schedule']:<24} {row['time_s'] * 1e3:10.3f} ms  "
              f"{row['recv_bytes_max'] / 1e9:8.3f} GB")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
