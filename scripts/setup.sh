#!/usr/bin/env bash
# Installs what pathbench needs (Debian 12 / Ubuntu 24.04), then configures and builds a preset.
# Usage: scripts/setup.sh [release|debug] [--test-deps]    (called by run.sh and test.sh)
#   --test-deps  also what the test suite drives: Chromium (report screenshots), promtool and
#                node_exporter (Prometheus export), and a venv with tests/requirements.txt
set -euo pipefail

preset=release
test_deps=0
for arg in "$@"; do
  case "$arg" in
    release|debug) preset="$arg" ;;
    --test-deps) test_deps=1 ;;
    *) echo "usage: scripts/setup.sh [release|debug] [--test-deps]" >&2; exit 3 ;;
  esac
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(build-essential cmake ninja-build pkg-config git python3 python3-venv
          libbenchmark-dev libgtest-dev libnuma-dev libhwloc-dev nlohmann-json3-dev libcli11-dev)
if ((test_deps)); then
  packages+=(chromium prometheus prometheus-node-exporter)
fi

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
  # policy-rc.d-free containers may still try to start the packaged services; that is harmless.
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The CUDA toolkit is not an apt package here: use it where it is installed.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
command -v nvcc >/dev/null || echo "pathbench setup: no nvcc found; building the host-only parts (GPU families will be skipped)" >&2

cd "$root"
if ((test_deps)); then
  # Pinned Python packages for the report scripts and the SciPy cross-check, in a venv so the
  # system Python stays untouched. Re-installed only when the requirements change.
  venv="$root/build/venv"
  stamp="$venv/.requirements.sha256"
  want="$(cat reports/requirements.txt tests/requirements.txt | sha256sum | cut -d' ' -f1)"
  if [[ ! -x "$venv/bin/python" || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
    echo "pathbench setup: creating $venv (reports/requirements.txt, tests/requirements.txt)" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r tests/requirements.txt
    echo "$want" > "$stamp"
  fi
fi
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
