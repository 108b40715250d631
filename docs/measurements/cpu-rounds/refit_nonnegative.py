#!/usr/bin/env python3
"""Issue 19's CPU rounds recorded here, predicted again with each calibration's compute model
refitted from its own recorded block timings (`measured.blocks`) by the non-negative fit that
`tessera calibrate` uses since 2026-12-02 (backend/src/calibration.cpp,
nonnegative_relative_least_squares), against the fit it was recorded with, which clamped a
negative term to zero after an unconstrained fit and floored the half efficiency at one token.

The fit is done again here in Python, term for term as the C++ does it (so that files written
before the change can be refitted; `check` below compares it with a file the new build wrote).
Each validation is then predicted again by `validate --predict-only --speed-reference off` on the
refitted calibration, scaled as validate scales it with the speed factors the run recorded: the
compute factor over the refitted model's time for the reference block (the reference's timings
before and after the compared execution, their mean), the busy-devices curve times the recorded
devices factor. The recorded calibration, scaled the same way, gives back the recorded prediction
(printed as a check). Prints per round the median / largest absolute end-to-end error as
recorded and refitted, adjusted by both factors, by the compute factor alone, and raw; then over
every calibration, how often the unconstrained fit put the overhead or the half efficiency below
zero, and how far the clamped and the refitted models are off on the smallest (64-token) blocks.

Usage: refit_nonnegative.py [path/to/tessera] [--check CALIBRATION.json] (default tessera:
build/rel, build/release, then build/default, from the repository root).
"""
import copy
import glob
import itertools
import json
import os
import statistics
import sys

from compare_compute_factor import predicted_s, slowed

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def tessera_path(arguments):
    if arguments:
        return arguments[0]
    for candidate in ("build/rel/cli/tessera", "build/release/cli/tessera", "build/default/cli/tessera"):
        path = os.path.join(ROOT, candidate)
        if os.access(path, os.X_OK):
            return path
    sys.exit("refit_nonnegative.py: build the tessera command first, or give its path")


def relative_least_squares(rows, times):
    """Least squares with each equation divided by its time (the C++ does the same)."""
    n = len(rows[0])
    m = [[0.0] * n for _ in range(n)]
    v = [0.0] * n
    for row, time in zip(rows, times):
        weight = 1 / time
        for i in range(n):
            v[i] += weight * row[i]
            for j in range(n):
                m[i][j] += weight * weight * row[i] * row[j]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        v[col], v[pivot] = v[pivot], v[col]
        if abs(m[col][col]) < 1e-300:
            raise ArithmeticError("singular")
        for r in range(col + 1, n):
            factor = m[r][col] / m[col][col]
            for j in range(col, n):
                m[r][j] -= factor * m[col][j]
            v[r] -= factor * v[col]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (v[r] - sum(m[r][j] * x[j] for j in range(r + 1, n))) / m[r][r]
    return x


def nonnegative(rows, times):
    """Every subset of terms 1.. fitted with the rest at 0; the best all-non-negative one."""
    n, best = len(rows[0]), None
    for kept in itertools.product((0, 1), repeat=n - 1):
        columns = [0] + [i + 1 for i in range(n - 1) if kept[i]]
        try:
            solution = relative_least_squares([[row[c] for c in columns] for row in rows], times)
        except ArithmeticError:
            continue
        if any(term < 0 for term in solution[1:]):
            continue
        full = [0.0] * n
        for column, term in zip(columns, solution):
            full[column] = term
        error = sum(((sum(r * p for r, p in zip(row, full)) - t) / t) ** 2 for row, t in zip(rows, times))
        if best is None or error < best[0]:
            best = (error, full)
    return best[1]


def clamped(rows, times):
    """The fit before: unconstrained, then each term floored at 0."""
    return [p if i == 0 else max(0.0, p) for i, p in enumerate(relative_least_squares(rows, times))]


def forward_rows(blocks):
    """The forward fit's equations, full then diagonal block of each side in the file's order:
    terms (visible FLOPs, masked FLOPs, FLOPs / side, 1) against seconds."""
    rows, times = [], []
    for block in blocks:
        side, flops = block["side_tokens"], block["flops"]
        rows.append([flops, 0, flops / side, 1])
        times.append(block["forward_s"])
        rows.append([flops * (side + 1) / (2 * side), flops * (side - 1) / (2 * side), flops / side, 1])
        times.append(block["diagonal_forward_s"])
    return rows, times


def fitted(blocks, solve):
    """fit_compute_model's figures from the recorded blocks (full and diagonal, both passes)."""
    a, mu, half, overhead = solve(*forward_rows(blocks))
    rate = 1 / a
    rows, times = [], []
    for block in blocks:
        side, flops = block["side_tokens"], 2.5 * block["flops"]
        rows.append([flops / rate, 0, flops / side / rate])
        times.append(max(block["backward_s"] - overhead, 0.1 * block["backward_s"]))
        rows.append([flops * (side + 1) / (2 * side) / rate, flops * (side - 1) / (2 * side) / rate, flops / side / rate])
        times.append(max(block["diagonal_backward_s"] - overhead, 0.1 * block["diagonal_backward_s"]))
    q = solve(rows, times)
    return {"rate": rate, "masked": max(0.0, mu / a), "half": max(0.0, half / a), "overhead": max(0.0, overhead),
            "backward_ratio": 1 / q[0], "backward_masked": max(0.0, q[1] / q[0]), "backward_half": max(0.0, q[2] / q[0])}


def refitted(calibration, half_floor=1e-3):
    fit = fitted(calibration["measured"]["blocks"], nonnegative)
    new = copy.deepcopy(calibration)
    new["peak_flops_per_s_16bit"] = fit["rate"]
    new["half_efficiency_tokens"] = max(half_floor, fit["half"])
    new["launch_overhead_s"] = max(1e-9, fit["overhead"])
    new["backward_rate_ratio"] = fit["backward_ratio"]
    new["block_model"] = {"forward_masked_pair_cost": fit["masked"], "backward_masked_pair_cost": fit["backward_masked"],
                          "backward_half_efficiency_tokens": fit["backward_half"]}
    return new


def adjusted(calibration, compute_factor, devices_factor):
    """As validate scales it (scenario/speed_adjustment.cpp): the compute as compare_compute_factor's
    `slowed`; the busy-devices curve's entry n times 1 + (f - 1) (n - 1) / (D - 1), within [1e-3, n]."""
    new = slowed(calibration, compute_factor)
    devices = new.get("speed_reference", {}).get("devices", 1)
    curve = new.get("sharing", {}).get("devices_speedup")
    if curve and devices >= 2 and devices_factor != 1:
        for index in range(1, len(curve)):
            busy = index + 1
            share = min(1.0, (busy - 1) / (devices - 1))
            curve[index] = min(max(curve[index] * (1 + (devices_factor - 1) * share), 1e-3), busy)
    return new


def block_residuals(blocks, solve):
    """The 64-token (smallest) blocks' modelled time over measured, less 1, full and diagonal,
    forward: how far a fit's model is off where the 16-rank validations' blocks are."""
    rows, times = forward_rows(blocks)
    p = solve(rows, times)
    smallest = min(range(len(blocks)), key=lambda index: blocks[index]["side_tokens"])
    full, diagonal = 2 * smallest, 2 * smallest + 1
    modelled = [sum(x * y for x, y in zip(rows[row], p)) for row in (full, diagonal)]
    return modelled[0] / times[full] - 1, modelled[1] / times[diagonal] - 1


def summary(errors):
    median, largest = statistics.median(errors), max(errors)
    return f"{100 * median:4.1f} / {100 * largest:4.1f} %{' *' if median <= 0.10 and largest <= 0.25 else '  '}"


def check(path):
    """A file the new build wrote: its figures against this script's refit of its blocks."""
    with open(path) as file:
        calibration = json.load(file)
    new = refitted(calibration)
    names = ["peak_flops_per_s_16bit", "half_efficiency_tokens", "launch_overhead_s", "backward_rate_ratio"]
    worst = max(abs(new[name] / calibration[name] - 1) for name in names)
    for name in calibration["block_model"]:
        if calibration["block_model"][name] or new["block_model"][name]:
            worst = max(worst, abs(new["block_model"][name] - calibration["block_model"][name]) /
                        max(abs(calibration["block_model"][name]), 1e-12))
    print(f"{path}: the largest relative difference between the file's fit and this script's: {worst:.2e}")
    return worst < 1e-6


def main():
    arguments = sys.argv[1:]
    if "--check" in arguments:
        at = arguments.index("--check")
        ok = check(arguments[at + 1])
        sys.exit(0 if ok else 1)
    tessera = tessera_path(arguments)
    print(f"{'run':<16} {'round':<5} {'recorded':>11}   {'recorded again':>14}   {'refit':>11}   "
          f"{'refit, compute only':>19}   {'refit, raw':>11}")
    met = {"recorded": 0, "refit": 0, "compute": 0, "raw": 0}
    rounds = 0
    negative = {"overhead": 0, "half": 0}
    residuals = {"clamped": [], "refit": []}
    for folder in sorted(glob.glob(os.path.join(HERE, "2026-*"))):
        for calibration_path in sorted(glob.glob(os.path.join(folder, "cpu-round*.json"))):
            round_ = int(os.path.basename(calibration_path)[len("cpu-round"):-len(".json")])
            runs = sorted(glob.glob(os.path.join(folder, f"round{round_}-*.json")))
            if not runs:
                continue
            with open(calibration_path) as file:
                calibration = json.load(file)
            new = refitted(calibration)
            blocks = calibration["measured"]["blocks"]
            unconstrained = relative_least_squares(*forward_rows(blocks))
            negative["overhead"] += unconstrained[3] < 0
            negative["half"] += unconstrained[2] < 0
            residuals["clamped"].append(block_residuals(blocks, clamped))
            residuals["refit"].append(block_residuals(blocks, nonnegative))
            reference = calibration["speed_reference"]
            shape = ["--heads", str(reference["heads"]), "--kv-heads", str(reference["heads"]), "--head-dim",
                     str(reference["head_dim"])]
            block = ["--algo", "ring", "--gpus", "1", "--seq", str(reference["side_tokens"]), "--mask", "full",
                     "--pass", "forward", *shape]
            modelled_new = predicted_s(tessera, new, block)
            recorded, again, refit, compute_only, raw = [], [], [], [], []
            for path in runs:
                with open(path) as file:
                    run = json.load(file)
                speed, end = run["speed_reference"], run["end_to_end"]
                if speed.get("status") != "applied":
                    continue
                flags = ["--algo", run["schedule"].split()[0], "--gpus", str(run["ranks"]), "--devices", str(run["devices"]),
                         "--seq", "2K", *shape, "--pass", "both", "--mask", "causal"]
                compute_old = speed["compute_factor"]
                devices = speed["devices_factor"] if speed.get("devices_factor_applied", True) else 1
                # The reference's time around the compared execution over the refitted model's.
                compute_new = (speed["before"]["block_s"] + speed["after"]["block_s"]) / 2 / modelled_new
                measured = end["measured_s"]
                recorded.append(end["abs_error"])
                again.append(abs(measured / predicted_s(tessera, adjusted(calibration, compute_old, devices), flags) - 1))
                refit.append(abs(measured / predicted_s(tessera, adjusted(new, compute_new, devices), flags) - 1))
                compute_only.append(abs(measured / predicted_s(tessera, adjusted(new, compute_new, 1), flags) - 1))
                raw.append(abs(measured / predicted_s(tessera, new, flags) - 1))
            if not recorded:
                continue
            rounds += 1
            for name, errors in (("recorded", recorded), ("refit", refit), ("compute", compute_only), ("raw", raw)):
                met[name] += statistics.median(errors) <= 0.10 and max(errors) <= 0.25
            print(f"{os.path.basename(folder):<16} {round_:<5} {summary(recorded)} {summary(again):>16} {summary(refit)} "
                  f"{summary(compute_only):>21} {summary(raw)}", flush=True)
    print(f"rounds meeting the goal (* above: median at most 10 %, largest at most 25 %) of {rounds}: recorded "
          f"{met['recorded']}, refit {met['refit']}, refit with the compute factor alone {met['compute']}, refit raw {met['raw']}")
    print(f"the unconstrained forward fit put the overhead below 0 in {negative['overhead']} of {rounds} calibrations and "
          f"the half efficiency in {negative['half']}")
    for name, pairs in residuals.items():
        full = statistics.quantiles([100 * pair[0] for pair in pairs], n=4)
        diagonal = statistics.quantiles([100 * pair[1] for pair in pairs], n=4)
        print(f"64-token blocks modelled over measured, {name}: full {full[1]:+.1f} % (quartiles {full[0]:+.1f}, "
              f"{full[2]:+.1f}), diagonal {diagonal[1]:+.1f} % ({diagonal[0]:+.1f}, {diagonal[2]:+.1f})")


if __name__ == "__main__":
    main()
