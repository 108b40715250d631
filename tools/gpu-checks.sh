#!/usr/bin/env bash
# Issue 19's GPU checks in one call of a lent GPU machine (one H100 or H200, bare: CUDA driver,
# PyTorch's pip wheels with NCCL and cuBLAS, no apt). The machine's time is short (minutes), so
# the binaries are built here and travel with the call instead of being built there.
#
#   here:   tools/gpu-checks.sh pack      builds the `gpu-device` preset (sm_90, no GUI/MPI/Python)
#                                         and copies
#                                         tessera, gpu_tests, tessera_bench_kernels,
#                                         libyaml-cpp and libcudart into .gpu/ (ignored by git)
#   there:  tools/gpu-checks.sh run       (device tool: carry [".gpu"]) runs, each step's log
#                                         under $OUT (or ./gpu-checks-out):
#             1. nvidia-smi
#             2. gpu_tests (Catch2)
#             3. bench_gpu: the kernels' TFLOP/s at N = 16K, d = 128, 32 heads beside a cuBLAS
#                bf16 GEMM of the same run (targets: forward >= 35 %, backward >= 25 %)
#             4. calibrate --backend cuda, then validate ring and mesh 4x4 with 16 virtual ranks on
#                the one GPU at 64K tokens, 32 heads, d = 128, forward + backward (target: end to
#                end within 10 %)
# Every step has its own time limit (STEP_TIMEOUT_S, default 150 s) so that one hung step leaves
# the others' results; the script's exit status is the number of steps that failed.
set -uo pipefail
mode=${1:-}
root=$(cd "$(dirname "$0")/.." && pwd)
pack_dir=$root/.gpu

pack() {
  set -e
  cd "$root"
  cmake --preset gpu-device >/dev/null
  cmake --build --preset gpu-device -j"$(nproc)" --target tessera gpu_tests tessera_bench_kernels
  rm -rf "$pack_dir" && mkdir -p "$pack_dir/lib"
  cp build/gpu-device/cli/tessera build/gpu-device/tests/gpu_tests build/gpu-device/bench/tessera_bench_kernels "$pack_dir/"
  # yaml-cpp and the CUDA runtime these were linked against travel; NCCL and cuBLAS (too large
  # to carry) come from PyTorch's wheels there.
  cp -L "$(ldconfig -p | awk '/libyaml-cpp\.so\.0/ {print $NF; exit}')" "$pack_dir/lib/"
  cp -L "$(dirname "$(command -v nvcc)")/../lib64/libcudart.so.13" "$pack_dir/lib/"
  exclude=$(git rev-parse --git-common-dir)/info/exclude
  grep -qx '/.gpu/' "$exclude" 2>/dev/null || echo '/.gpu/' >> "$exclude"
  du -sh "$pack_dir"
  echo "packed: call the device tool with carry [\".gpu\"] and command 'tools/gpu-checks.sh run'"
}

# NCCL and cuBLAS come with PyTorch's pip wheels there (nvidia/*/lib); add every such folder.
library_path() {
  local site folders=("$pack_dir/lib")
  for site in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    for lib in "$site"/nvidia/*/lib; do [[ -d $lib ]] && folders+=("$lib"); done
  done
  (IFS=:; echo "${folders[*]}")
}

run_checks() {
  local out=${OUT:-$root/gpu-checks-out} limit=${STEP_TIMEOUT_S:-150} failures=0
  mkdir -p "$out"
  export LD_LIBRARY_PATH="$(library_path)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local bin=$pack_dir
  step() {  # step NAME COMMAND...: runs it with a time limit, log in $out/NAME.log
    local name=$1; shift
    echo "== $name: $*"
    local started=$SECONDS
    timeout "$limit" "$@" > "$out/$name.log" 2>&1
    local rc=$?
    tail -n 40 "$out/$name.log"
    echo "== $name: exit $rc after $((SECONDS - started)) s"
    [[ $rc -eq 0 ]] || failures=$((failures + 1))
  }
  step nvidia-smi nvidia-smi
  ldd "$bin/tessera" | grep -i "not found" && echo "missing libraries (above): LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  step gpu_tests "$bin/gpu_tests"
  step bench_gpu "$bin/tessera_bench_kernels"
  local shape=(--heads 32 --kv-heads 32 --head-dim 128)
  step calibrate "$bin/tessera" calibrate --backend cuda "${shape[@]}" -o "$out/calibration.json"
  step validate_ring "$bin/tessera" validate --algo ring --gpus 16 --seq 64K "${shape[@]}" --pass both \
    --backend cuda --calibration "$out/calibration.json"
  step validate_mesh "$bin/tessera" validate --algo mesh --tile 4x4 --gpus 16 --seq 64K "${shape[@]}" --pass both \
    --backend cuda --calibration "$out/calibration.json"
  echo "gpu-checks: $failures step(s) failed; logs in $out"
  return "$failures"
}

case $mode in
  pack) pack ;;
  run) run_checks ;;
  *) echo "usage: tools/gpu-checks.sh pack|run   (pack here, run on the GPU machine; see the comment at the top)" >&2; exit 2 ;;
esac
