#!/usr/bin/env python3
"""Runs the experiments' sweeps with `tessera sweep` and writes each experiment's REPORT.md.

    python3 experiments/report.py [--tessera build/release/cli/tessera] [mesh-attention attention2d schedule-map]
    python3 experiments/report.py --check     # recompute every table and report from the committed results

Each sweep writes experiments/NAME/results/SPEC/ (results.csv, sweep.json, spec.yaml, figures/);
sweeps resume, so a second run only redraws the reports. Derived tables (speedups) are written
as CSV beside them and drawn with `tessera plot`. Every number a report quotes is computed here
from the results (experiments/reports/, one module per experiment); `--check` (the ctest
experiments_report_check) recomputes them all from the committed results, without running
Tessera, and fails naming every derived table or report that differs. Standard library only.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reports import attention2d, common, mesh_attention, schedule_map  # noqa: E402

EXPERIMENTS = {"mesh-attention": mesh_attention.mesh_attention, "attention2d": attention2d.attention2d,
               "schedule-map": schedule_map.schedule_map}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", default=str(common.ROOT.parent / "build" / "release" / "cli" / "tessera"))
    parser.add_argument("--check", action="store_true",
                        help="recompute from the committed results and compare; run nothing, write nothing")
    parser.add_argument("experiments", nargs="*", default=list(EXPERIMENTS))
    arguments = parser.parse_args()
    for experiment in arguments.experiments:
        if experiment not in EXPERIMENTS:
            sys.exit("report.py: unknown experiment '%s' (expected one of %s)" % (experiment, ", ".join(EXPERIMENTS)))
    common.RUN.check = arguments.check
    common.RUN.tessera = arguments.tessera
    if not arguments.check and not Path(arguments.tessera).exists():
        sys.exit("report.py: %s not found; build it: cmake --preset release && cmake --build --preset release "
                 "--target tessera" % arguments.tessera)
    for experiment in arguments.experiments:
        print("report.py: %s" % experiment, flush=True)
        EXPERIMENTS[experiment]()
        if not arguments.check:
            print("report.py: wrote %s" % (common.ROOT / experiment / "REPORT.md"), flush=True)
    if arguments.check:
        if common.RUN.mismatches:
            print("report.py --check: these differ from what the committed results give:", file=sys.stderr)
            for path in common.RUN.mismatches:
                print("  " + path, file=sys.stderr)
            sys.exit(1)
        print("report.py --check: every derived table and report matches the committed results")


if __name__ == "__main__":
    main()
