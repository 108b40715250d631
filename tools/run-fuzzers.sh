#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/README.md) with clang and runs each one for a bounded time
# on a copy of its committed seed corpus (the committed corpus never grows).
#
#   tools/run-fuzzers.sh [SECONDS_PER_TARGET] [--runs N] [--only TARGET]...
#
# SECONDS_PER_TARGET defaults to 60; 0 means no time limit (then give --runs). --runs N stops a
# target after N inputs; with both, whichever comes first. Prints one line per target,
#   fuzz_schedule_json: 1234567 runs, 0 crashes
# and exits 1 when any target found a crash, a sanitizer report, a timeout (-timeout=10) or
# ran out of memory (-rss_limit_mb=2048); the input that did it is kept under
# build/fuzz/findings/TARGET/ and its path printed. Exits 77 (and says why) when clang++-14 or
# its libFuzzer is missing, so that a caller can tell "not run" from "passed".
#
# Environment: TESSERA_FUZZ_BUILD (default build/fuzz), CXX_FOR_FUZZ (default clang++-14),
# TESSERA_MEMORY_LIMIT (default 256MB in every target: big requests must be refused, not tried).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TESSERA_FUZZ_BUILD:-$repo/build/fuzz}
cxx=${CXX_FOR_FUZZ:-clang++-14}
cc=${cxx/clang++/clang}

seconds=60
runs=0
only=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *)
      if [[ $1 =~ ^[0-9]+$ ]]; then seconds=$1; shift
      else echo "run-fuzzers: unknown argument '$1' (see --help)" >&2; exit 2; fi ;;
  esac
done
if [[ $seconds == 0 && $runs == 0 ]]; then
  echo "run-fuzzers: SECONDS_PER_TARGET 0 (no time limit) needs --runs N" >&2
  exit 2
fi

# --- clang and libFuzzer present? -------------------------------------------------------------
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "run-fuzzers: not run: $cxx not found (Debian: apt-get install clang-14 libclang-rt-14-dev)"
  exit 77
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' \
  > "$probe/probe.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" >"$probe/log" 2>&1; then
  echo "run-fuzzers: not run: $cxx cannot link a libFuzzer target (libclang_rt.fuzzer missing?):"
  head -3 "$probe/log"
  exit 77
fi

# --- build ------------------------------------------------------------------------------------
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
if [[ ! -f $build/CMakeCache.txt ]]; then
  CC=$cc CXX=$cxx cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_FUZZ=ON \
    -DTESSERA_ENABLE_CUDA=OFF -DTESSERA_ENABLE_GUI=OFF -DTESSERA_ENABLE_MPI=OFF -DTESSERA_ENABLE_PYTHON=OFF -DBUILD_TESTING=OFF \
    "${launcher[@]}" >/dev/null
fi
cmake --build "$build" --target fuzzers -j "${TESSERA_FUZZ_BUILD_JOBS:-2}" >"$build/fuzz-build.log" 2>&1 || {
  tail -30 "$build/fuzz-build.log"
  echo "run-fuzzers: the build failed (log: $build/fuzz-build.log)"
  exit 1
}

# --- run --------------------------------------------------------------------------------------
# Longest input per target: a little over the largest seed, so that mutations stay near the
# structure the parser expects rather than in megabytes of padding.
declare -A max_len=(
  [fuzz_schedule_json]=8192 [fuzz_assignment_json]=4096 [fuzz_calibration_json]=4096
  [fuzz_topology_yaml]=4096 [fuzz_sweep_spec]=4096 [fuzz_sweep_journal]=8192
  [fuzz_results_csv]=8192 [fuzz_flag_values]=256 [fuzz_npy_file]=1024 [fuzz_nccl_tests_table]=8192)
if [[ ${#only[@]} -gt 0 ]]; then targets=("${only[@]}"); else mapfile -t targets < <(printf '%s\n' "${!max_len[@]}" | sort); fi

export TESSERA_MEMORY_LIMIT=${TESSERA_MEMORY_LIMIT:-256MB}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
workdir=$(mktemp -d /tmp/tessera-fuzz-run.XXXXXX)
trap 'rm -rf "$probe" "$workdir"' EXIT
failed=0
for target in "${targets[@]}"; do
  binary=$build/fuzz/$target
  if [[ ! -x $binary || -z ${max_len[$target]:-} ]]; then
    echo "$target: no such fuzz target"; failed=1; continue
  fi
  corpus=$workdir/$target/corpus
  mkdir -p "$corpus" "$workdir/$target/cwd" "$build/findings/$target"
  cp "$repo/fuzz/corpus/$target"/* "$corpus"/
  options=(-max_len="${max_len[$target]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
           -artifact_prefix="$build/findings/$target/" -max_total_time="$seconds")
  [[ $runs != 0 ]] && options+=(-runs="$runs")
  [[ -f $repo/fuzz/dict/$target.dict ]] && options+=(-dict="$repo/fuzz/dict/$target.dict")
  log=$build/findings/$target.log
  # In an empty directory: a preset name the fuzzer makes up never names a real file.
  status=0
  (cd "$workdir/$target/cwd" && "$binary" "${options[@]}" "$corpus") >"$log" 2>&1 || status=$?
  executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  seconds_taken=$(sed -n 's/^stat::.*//; s/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  if [[ $status == 0 ]]; then
    echo "$target: ${executed:-?} runs, 0 crashes${seconds_taken:+ (${seconds_taken} s)}"
  else
    failed=1
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    reason=$(grep -m1 -E '^(==[0-9]+==ERROR|FINDING:|.*runtime error:|==[0-9]+== ERROR: libFuzzer)' "$log" || true)
    echo "$target: ${executed:-?} runs, 1 crash (exit $status): ${reason:-see log}"
    echo "$target:   input: ${artifact:-none written}; log: $log"
  fi
done
exit $failed
