#!/usr/bin/env bash
# Issue 19's must-show on the machine at hand: ROUNDS rounds, each a fresh `tessera calibrate`
# of the CPU executor followed by CPU `tessera validate` runs of ring, mesh, attention2d and usp
# at P = 4, 8 and 16 (forward + backward, causal), P ranks as threads on the machine's cores.
# Prints every run's end-to-end error and, per round, the median and the largest absolute
# end-to-end error. Usage:
#   tools/validate-rounds.sh [path/to/tessera]      (default: build/release/cli/tessera,
#                                                    else build/default/cli/tessera)
# Environment: ROUNDS (3), SEQ (2K), HEADS (4), HEAD_DIM (32), SIDES (64,128,256,512),
# REPEATS (5), DEVICES (0 = every core), OUT (a scratch folder for the JSON it writes).
set -euo pipefail
tessera=${1:-}
if [[ -z $tessera ]]; then
  for candidate in build/release/cli/tessera build/default/cli/tessera; do
    [[ -x $candidate ]] && { tessera=$candidate; break; }
  done
fi
[[ -n $tessera && -x $tessera ]] || { echo "validate-rounds: build the tessera command first (cmake --build --preset release --target tessera)" >&2; exit 2; }
rounds=${ROUNDS:-3} seq=${SEQ:-2K} heads=${HEADS:-4} head_dim=${HEAD_DIM:-32}
sides=${SIDES:-64,128,256,512} repeats=${REPEATS:-5} devices=${DEVICES:-0}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
shape=(--heads "$heads" --kv-heads "$heads" --head-dim "$head_dim")
echo "tessera: $tessera; $rounds rounds; seq $seq, $heads heads of $head_dim, causal, forward + backward; devices ${devices/#0/every core}; files in $out"
for round in $(seq 1 "$rounds"); do
  calibration=$out/cpu-round$round.json
  echo
  echo "round $round: calibrate"
  "$tessera" calibrate "${shape[@]}" --sides "$sides" --repeats "$repeats" --devices "$devices" -o "$calibration" | sed 's/^/  /'
  errors=()
  for algorithm in ring mesh attention2d usp; do
    for ranks in 4 8 16; do
      result=$out/round$round-$algorithm-$ranks.json
      "$tessera" validate --algo "$algorithm" --gpus "$ranks" --seq "$seq" "${shape[@]}" --pass both --devices "$devices" \
        --calibration "$calibration" --json > "$result"
      line=$(python3 - "$result" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e = r["end_to_end"]
print(f'{r["schedule"]:<40} {r["ranks"]:>2} ranks on {r["devices"]} devices: predicted {e["predicted_s"]:.3f} s, measured {e["measured_s"]:.3f} s, error {100 * e["relative_error"]:+.1f} %')
PY
)
      echo "  $line"
      errors+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end_to_end"]["abs_error"])' "$result")")
    done
  done
  python3 - "$round" "${errors[@]}" <<'PY'
import statistics, sys
round_, errors = sys.argv[1], [float(x) for x in sys.argv[2:]]
print(f"round {round_}: median |error| {100 * statistics.median(errors):.1f} %, largest {100 * max(errors):.1f} % over {len(errors)} validations")
PY
done
