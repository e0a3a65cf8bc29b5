#!/usr/bin/env bash
# Installs the Debian packages tkc builds and tests with, if any is missing.
# Needs root (or sudo) and Debian 12's package archive. nvcc (CUDA 13) is not a
# Debian package: when it is absent, the tests that need it are reported
# UNSUPPORTED rather than failed.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3 git clang-format-14
  llvm-14-dev llvm-14-tools libclang-14-dev clang-14 libclang-rt-14-dev
  libyaml-cpp-dev libfmt-dev libgtest-dev
)

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "tkc: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
  "${missing[@]}"
