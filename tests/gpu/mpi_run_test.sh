#!/usr/bin/env bash
# One process per GPU under mpirun: a ring and a mesh schedule through `tessera run --backend
# cuda --transport mpi` must pass the numerics check. Needs two GPUs (NCCL refuses two ranks on
# one device); elsewhere it reports itself skipped (exit 77).
set -euo pipefail
tessera=$1
mpiexec=$2
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); fi
if [ "$gpus" -lt 2 ]; then
  echo "SKIPPED: the mpi transport test needs two GPUs, found $gpus"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for algo in ring mesh; do
  "$mpiexec" --oversubscribe -np 2 "$tessera" run --algo "$algo" --gpus 2 --seq 2K --heads 8 --kv-heads 2 \
      --head-dim 64 --backend cuda --transport mpi --watchdog-s 120
done
