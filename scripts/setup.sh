#!/usr/bin/env bash
# Installs what pathbench needs (Debian 12 / Ubuntu 24.04), then configures and builds a preset.
# Usage: scripts/setup.sh [release|debug]    (sourced by run.sh and test.sh)
set -euo pipefail

preset="${1:-release}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(build-essential cmake ninja-build pkg-config git python3
          libbenchmark-dev libgtest-dev libnuma-dev libhwloc-dev nlohmann-json3-dev libcli11-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "pathbench setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "pathbench setup: need root or sudo to install: ${missing[*]}" >&2; exit 3; }
    sudo_cmd=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The CUDA toolkit is not an apt package here: use it where it is installed.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
command -v nvcc >/dev/null || echo "pathbench setup: no nvcc found; building the host-only parts (GPU families will be skipped)" >&2

cd "$root"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
