#!/usr/bin/env python3
"""Issue 19's CPU rounds recorded here (each folder: one `tools/validate-rounds.sh` run of three
rounds on the two-core machine, with its calibrations, every validation's JSON and its log),
predicted again with the compute factor taken two ways:
  reference: the reference block's time now over its own time at calibration (validate before
             0f5d33d);
  model:     the same time now over the calibrated model's time for that block (validate since:
             scenario/speed_adjustment.hpp).
The model's time is `validate --predict-only` of the reference's workload (one rank, one full
forward block); each validation is predicted again by `validate --predict-only --speed-reference
off` on its calibration scaled by the new factor (rates divided, overhead multiplied), and its
recorded adjusted prediction is scaled by the ratio of that to the recorded compute-only one, so
that the devices factor it had stays (the way a run was recorded gives back its own figures). Prints, per round, the median / largest absolute
end-to-end error both ways. Usage: compare_compute_factor.py [path/to/tessera] (default:
build/release/cli/tessera, else build/default/cli/tessera, from the repository root)."""
import copy
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def tessera_path():
    if len(sys.argv) > 1:
        return sys.argv[1]
    for candidate in ("build/release/cli/tessera", "build/default/cli/tessera"):
        path = os.path.join(ROOT, candidate)
        if os.access(path, os.X_OK):
            return path
    sys.exit("compare_compute_factor.py: build the tessera command first, or give its path")


def predicted_s(tessera, calibration, flags):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(calibration, file)
    try:
        out = subprocess.run([tessera, "validate", *flags, "--calibration", file.name, "--predict-only",
                              "--speed-reference", "off", "--json"], capture_output=True, text=True, check=True)
    finally:
        os.unlink(file.name)
    return json.loads(out.stdout)["end_to_end"]["predicted_s"]


def slowed(calibration, factor):
    """The calibration's compute `factor` times slower, as validate scales it."""
    slower = copy.deepcopy(calibration)
    for rate in ("peak_flops_per_s_16bit", "peak_flops_per_s_fp32", "hbm_bytes_per_s"):
        if rate in slower:
            slower[rate] /= factor
    slower["launch_overhead_s"] *= factor
    return slower


def errors(values):
    return f"{100 * statistics.median(values):4.1f} / {100 * max(values):4.1f} %"


def main():
    tessera = tessera_path()
    print(f"{'run':<17} {'round':<5} {'reference / model':>17}   {'by the reference':>16}   {'by the model':>14}")
    for folder in sorted(glob.glob(os.path.join(HERE, "2026-*"))):
        for round_ in (1, 2, 3):
            with open(os.path.join(folder, f"cpu-round{round_}.json")) as file:
                calibration = json.load(file)
            reference = calibration["speed_reference"]
            shape = ["--heads", str(reference["heads"]), "--kv-heads", str(reference["heads"]), "--head-dim",
                     str(reference["head_dim"])]
            modelled_s = predicted_s(tessera, calibration, ["--algo", "ring", "--gpus", "1", "--seq",
                                                            str(reference["side_tokens"]), "--mask", "full",
                                                            "--pass", "forward", *shape])
            by_reference, by_model = [], []
            for path in sorted(glob.glob(os.path.join(folder, f"round{round_}-*.json"))):
                with open(path) as file:
                    run = json.load(file)
                speed, end = run["speed_reference"], run["end_to_end"]
                now_s = (speed["before"]["block_s"] + speed["after"]["block_s"]) / 2
                flags = ["--algo", run["schedule"].split()[0], "--gpus", str(run["ranks"]), "--seq", "2K", *shape,
                         "--pass", "both", "--mask", "causal"]
                # The recorded prediction rescaled to each factor (the way it was recorded gives
                # back its own figure).
                for then_s, errors_of in ((reference["block_s"], by_reference), (modelled_s, by_model)):
                    compute_only_s = predicted_s(tessera, slowed(calibration, now_s / then_s), flags)
                    adjusted_s = end["predicted_s"] * compute_only_s / end["compute_only"]["predicted_s"]
                    errors_of.append(abs(end["measured_s"] / adjusted_s - 1))
            print(f"{os.path.basename(folder):<17} {round_:<5} {reference['block_s'] / modelled_s:17.3f}   "
                  f"{errors(by_reference):>16}   {errors(by_model):>14}")


if __name__ == "__main__":
    main()
