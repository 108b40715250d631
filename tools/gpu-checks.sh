#!/usr/bin/env bash
# Issue 19's GPU checks in one call of a lent GPU machine (one H100 or H200, bare: CUDA driver,
# PyTorch's pip wheels with NCCL and cuBLAS, no apt). The machine's time is short (minutes), so
# the binaries are built here and travel with the call instead of being built there.
#
#   here:   tools/gpu-checks.sh pack      builds the `gpu-device` preset (sm_90, no GUI/MPI/Python)
#                                         and copies
#                                         tessera, gpu_tests, tessera_bench_kernels,
#                                         libyaml-cpp and libcudart into .gpu/ (ignored by git)
#   there:  tools/gpu-checks.sh run [STEP...]   (device tool: carry [".gpu"]) runs these steps
#                                         (default: all), each step's log
#                                         under $OUT (or ./gpu-checks-out):
#             1. nvidia-smi
#             2. bench_gpu: the kernels' TFLOP/s at N = 16K, d = 128, 32 heads beside a cuBLAS
#                bf16 GEMM of the same run (targets: forward >= 35 %, backward >= 25 %)
#             3. gpu_tests (Catch2, with each test case's duration)
#             4. calibrate --backend cuda, then validate ring and mesh 4x4 with 16 virtual ranks on
#                the one GPU at VALIDATE_SEQ (32K) tokens, 32 heads, d = 128, forward + backward
#                (target: end to end within 10 %). At 64K, as the issue measured, a validation
#                would take the host about four times the 103 s it took at 32K (an estimate):
#                more than a lease holds.
# Every step has its own time limit (BENCH_LIMIT_S 60, TESTS_LIMIT_S 120, CALIBRATE_LIMIT_S 240,
# VALIDATE_LIMIT_S 120 each: 660 s in all, inside a 15-minute lease with the machine's start; on an
# H200 they took 11 s, 76 s, 139 s (concurrency to 4) and 103 s for ring) so that one hung step
# leaves the others' results; the exit status is the number of steps that failed.
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

# NCCL and cuBLAS come with PyTorch's pip wheels there (nvidia/*/lib); add every such folder,
# then, for any of the three still missing, the folder where the image keeps it elsewhere.
library_path() {
  local site lib name found folders=("$pack_dir/lib")
  for site in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    for lib in "$site"/nvidia/*/lib; do [[ -d $lib ]] && folders+=("$lib"); done
  done
  for name in libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
    found=no
    for lib in "${folders[@]}"; do [[ -e $lib/$name ]] && found=yes; done
    if [[ $found == no ]]; then
      lib=$(find /opt /usr/local /usr/lib -name "$name" -print -quit 2>/dev/null)
      [[ -n $lib ]] && folders+=("$(dirname "$lib")")
    fi
  done
  (IFS=:; echo "${folders[*]}")
}

run_checks() {
  local out=${OUT:-$root/gpu-checks-out} failures=0
  mkdir -p "$out"
  export LD_LIBRARY_PATH="$(library_path)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local bin=$pack_dir
  local wanted=" ${*:-nvidia-smi bench_gpu gpu_tests calibrate validate_ring validate_mesh} "
  step() {  # step NAME LIMIT_S COMMAND...: runs it with a time limit, log in $out/NAME.log
    local name=$1 limit=$2; shift 2
    [[ $wanted == *" $name "* ]] || return 0
    echo "== $name (limit ${limit} s): $*"
    local started=$SECONDS
    timeout "$limit" "$@" > "$out/$name.log" 2>&1
    local rc=$?
    tail -n 40 "$out/$name.log"
    echo "== $name: exit $rc after $((SECONDS - started)) s"
    [[ $rc -eq 0 ]] || failures=$((failures + 1))
  }
  step nvidia-smi 20 nvidia-smi
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  for binary in tessera gpu_tests tessera_bench_kernels; do
    ldd "$bin/$binary" | grep -i "not found" && echo "$binary: missing libraries (above)"
  done
  step bench_gpu "${BENCH_LIMIT_S:-60}" "$bin/tessera_bench_kernels"
  step gpu_tests "${TESTS_LIMIT_S:-120}" "$bin/gpu_tests" --durations yes
  # validate runs 2K-token blocks (32K tokens over 16 ranks): the calibration's sides reach them.
  local shape=(--heads 32 --kv-heads 32 --head-dim 128)
  local seq=${VALIDATE_SEQ:-32K}
  # The concurrency curve up to the 16 ranks validated: on the first H200 lease it was measured to
  # 4 (1.74x) and extrapolated flat, and `validate --predict-only` with the curve rising to 2.0x
  # at 16 moves that run's error from -14.8 % to -2.4 % (README, "Measured on an H200").
  # Its blocks are the validations' (32K tokens over 16 ranks: 2048): on the 2026-11-28 lease the
  # curve measured with 1024-token blocks left mesh 4x4 at +19.8 % and ring at +7.3 %, and three
  # quarters of its gain would have fit both (README, "Measured again on an H200").
  step calibrate "${CALIBRATE_LIMIT_S:-240}" "$bin/tessera" calibrate --backend cuda "${shape[@]}" \
    --sides "${CALIBRATE_SIDES:-256,512,1024,2048}" --repeats 3 --block-attempts "${BLOCK_ATTEMPTS:-2}" \
    --concurrency "${CALIBRATE_CONCURRENCY:-16}" --concurrency-side "${CONCURRENCY_SIDE:-2048}" -o "$out/calibration.json"
  step validate_ring "${VALIDATE_LIMIT_S:-120}" "$bin/tessera" validate --algo ring --gpus 16 --seq "$seq" "${shape[@]}" --pass both \
    --backend cuda --calibration "$out/calibration.json"
  step validate_mesh "${VALIDATE_LIMIT_S:-120}" "$bin/tessera" validate --algo mesh --tile 4x4 --gpus 16 --seq "$seq" "${shape[@]}" \
    --pass both --backend cuda --calibration "$out/calibration.json"
  echo "gpu-checks: $failures step(s) failed; logs in $out"
  return "$failures"
}

case $mode in
  pack) pack ;;
  run) shift; run_checks "$@" ;;
  *) echo "usage: tools/gpu-checks.sh pack|run   (pack here, run on the GPU machine; see the comment at the top)" >&2; exit 2 ;;
esac
