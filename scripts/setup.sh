#!/usr/bin/env bash
# Installs the Debian packages liegrad builds with, when any is missing.
# Runs as root on a fresh Debian 12 machine (uses sudo when not root).
# Extra package names given as arguments are installed too (bench/reproduce.sh asks
# for python3-torch this way). pybind11-dev, python3-pybind11 and python3-dev build the
# optional Python module (python/); pkg-config is for the install test (docs/library.md);
# libopenmpi-dev and openmpi-bin for data-parallel training (docs/distributed.md).
set -euo pipefail
packages=(g++ cmake make libopenblas-dev liblapacke-dev doctest-dev nlohmann-json3-dev python3-numpy
  pybind11-dev python3-pybind11 python3-dev pkg-config libopenmpi-dev openmpi-bin "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
