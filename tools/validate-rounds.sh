#!/usr/bin/env bash
# Issue 19's must-show on the machine at hand: ROUNDS rounds, each a fresh `tessera calibrate`
# of the CPU executor followed by CPU `tessera validate` runs of ring, mesh, attention2d and usp
# at P = 4, 8 and 16 (forward + backward, causal), P ranks as threads on the machine's cores.
# Each validate times the calibration's speed reference before and after its run and predicts at
# the machine's speed now (SPEED_REFERENCE=off predicts at the speed of the calibration instead).
# Prints every run's end-to-end error with the speed adjustment and without it (raw), its speed
# factors, and, per round, the median and the largest absolute end-to-end error, adjusted, raw
# and with the compute factor alone (SPEED_REFERENCE=compute makes that the headline), and in how
# many validations the speed reference itself moved by more than the 10 % a validation resolves
# (validate's reference_spread: the machine's speed changed within its seconds). Usage:
#   tools/validate-rounds.sh [path/to/tessera]      (default: build/release/cli/tessera,
#                                                    else build/default/cli/tessera)
# Environment: ROUNDS (3), SEQ (2K), HEADS (4), HEAD_DIM (32), SIDES (64,128,256,512),
# REPEATS (5, calibrate's timed runs per block), EXECUTIONS (3, validate's timed executions after a
# warm-up, the one of median measured / predicted compared), DEVICES (0 = every core), SPEED_REFERENCE (on), OUT (a scratch
# folder for the JSON it writes).
set -euo pipefail
tessera=${1:-}
if [[ -z $tessera ]]; then
  for candidate in build/release/cli/tessera build/default/cli/tessera; do
    [[ -x $candidate ]] && { tessera=$candidate; break; }
  done
fi
[[ -n $tessera && -x $tessera ]] || { echo "validate-rounds: build the tessera command first (cmake --build --preset release --target tessera)" >&2; exit 2; }
rounds=${ROUNDS:-3} seq=${SEQ:-2K} heads=${HEADS:-4} head_dim=${HEAD_DIM:-32}
sides=${SIDES:-64,128,256,512} repeats=${REPEATS:-5} devices=${DEVICES:-0} speed_reference=${SPEED_REFERENCE:-on}
executions=${EXECUTIONS:-3}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
shape=(--heads "$heads" --kv-heads "$heads" --head-dim "$head_dim")
echo "tessera: $tessera; $rounds rounds; seq $seq, $heads heads of $head_dim, causal, forward + backward; devices ${devices/#0/every core}; speed reference $speed_reference; validate: $executions executions, the median compared; files in $out"
for round in $(seq 1 "$rounds"); do
  calibration=$out/cpu-round$round.json
  echo
  echo "round $round: calibrate"
  "$tessera" calibrate "${shape[@]}" --sides "$sides" --repeats "$repeats" --devices "$devices" -o "$calibration" | sed 's/^/  /'
  results=()
  for algorithm in ring mesh attention2d usp; do
    for ranks in 4 8 16; do
      result=$out/round$round-$algorithm-$ranks.json
      "$tessera" validate --algo "$algorithm" --gpus "$ranks" --seq "$seq" "${shape[@]}" --pass both --devices "$devices" \
        --calibration "$calibration" --speed-reference "$speed_reference" --repeats "$executions" --json > "$result"
      line=$(python3 - "$result" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e, raw, speed = r["end_to_end"], r["end_to_end"]["unadjusted"], r["speed_reference"]
factors = (f'compute x{speed["compute_factor"]:.3f}, devices x{speed["devices_factor"]:.3f}' if speed["status"] == "applied"
           else speed["status"].split(" (")[0])
spread = r["executions"].get("reference_spread")
moved = (f'; reference moved {100 * (spread["compute"] - 1):.0f} / {100 * (spread["devices"] - 1):.0f} %'
         f' ({"steady" if spread["steady"] else "unsteady"})' if spread else '')
print(f'{r["schedule"]:<36} {r["ranks"]:>2} ranks on {r["devices"]} devices: predicted {e["predicted_s"]:.3f} s (raw {raw["predicted_s"]:.3f} s), '
      f'measured {e["measured_s"]:.3f} s, error {100 * e["relative_error"]:+.1f} % (raw {100 * raw["relative_error"]:+.1f} %); {factors}{moved}')
PY
)
      echo "  $line"
      results+=("$result")
    done
  done
  python3 - "$round" "${results[@]}" <<'PY'
import json, statistics, sys
round_, runs = sys.argv[1], [json.load(open(path)) for path in sys.argv[2:]]
adjusted = [r["end_to_end"]["abs_error"] for r in runs]
raw = [r["end_to_end"]["unadjusted"]["abs_error"] for r in runs]
compute = [r["end_to_end"]["compute_only"]["abs_error"] for r in runs]
print(f"round {round_}: median |error| {100 * statistics.median(adjusted):.1f} %, largest {100 * max(adjusted):.1f} % over {len(runs)} validations"
      f" (raw, at the calibration's speed: median {100 * statistics.median(raw):.1f} %, largest {100 * max(raw):.1f} %;"
      f" compute factor alone: median {100 * statistics.median(compute):.1f} %, largest {100 * max(compute):.1f} %)")
spreads = [r["executions"]["reference_spread"] for r in runs if "reference_spread" in r["executions"]]
if spreads:
    unsteady = sum(1 for spread in spreads if not spread["steady"])
    tolerance = 100 * spreads[0]["tolerance"]
    print(f"round {round_}: the speed reference moved by more than {tolerance:.0f} % (largest over smallest factor) within {unsteady} of"
          f" {len(spreads)} validations; its compute factor moved {100 * (statistics.median(s['compute'] for s in spreads) - 1):.0f} % in the median one")
PY
done
