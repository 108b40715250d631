#!/usr/bin/env bash
# Installs what Tessera builds with on Debian 12 (bookworm): the core libraries, Qt 6 (the GUI
# and figure rendering, headless under the offscreen platform), Open MPI (sweeps across
# machines), pybind11 with NumPy and matplotlib (the Python module, its tests and example) and
# clang 14 with libFuzzer (the fuzz targets). CUDA + NCCL are not in Debian's archive; the build
# detects them when present.
set -euo pipefail
packages=(g++ cmake ninja-build make pkg-config
          nlohmann-json3-dev libcli11-dev catch2 libeigen3-dev libboost-graph-dev libboost-context-dev libyaml-cpp-dev
          qt6-base-dev qt6-charts-dev libqt6svg6-dev libqt6opengl6-dev libgl-dev
          libopenmpi-dev openmpi-bin python3
          pybind11-dev python3-dev python3-numpy python3-matplotlib  # the Python module, its example, and the NumPy checks of run --save
          clang-14 libclang-rt-14-dev)  # the libFuzzer targets (fuzz/README.md)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
run_as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
echo "installing: ${missing[*]}" >&2
run_as_root apt-get update -q
DEBIAN_FRONTEND=noninteractive run_as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
