#!/usr/bin/env bash
# Installs what pathbench needs (Debian 12 / Ubuntu 24.04), then configures and builds a preset.
# Usage: scripts/setup.sh [release|sanitize] [--test-deps] [--target NAME]
#                                                        (called by run.sh, test.sh, fuzz.sh)
#   sanitize     the ASan+UBSan host-only build with the fuzz harnesses (build/sanitize), with
#                clang-14, else another clang, else gcc (then without the fuzz harnesses)
#   --test-deps  also what the test suite drives: Chromium (report screenshots), promtool and
#                node_exporter (Prometheus export), slurm-wlm and munge (a private Slurm cluster
#                for ci/slurm/), fio (scripts/reference/fio_storage.sh), libfuse3-dev and fuse3
#                (tests/helpers/latency_fuse: a slow read-only FUSE file for the queue-depth
#                test), and a venv with tests/requirements.txt
#   --target     build only that target (run.sh builds the binary alone, not the test suite)
# With CI=true (as CI runs), every compiler warning is an error.
set -euo pipefail

preset=release
test_deps=0
targets=()
usage() { echo "usage: scripts/setup.sh [release|sanitize] [--test-deps] [--target NAME]" >&2; exit 3; }
while (($#)); do
  case "$1" in
    release|sanitize) preset="$1" ;;
    --test-deps) test_deps=1 ;;
    --target) (($# > 1)) || usage; targets+=(--target "$2"); shift ;;
    *) usage ;;
  esac
  shift
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(build-essential cmake ninja-build pkg-config git python3 python3-venv
          libbenchmark-dev libgtest-dev libnuma-dev libhwloc-dev nlohmann-json3-dev libcli11-dev
          libre2-dev ccache)
if ((test_deps)); then
  packages+=(chromium prometheus prometheus-node-exporter slurm-wlm munge fio libfuse3-dev fuse3)
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
  # Packages such as munge, slurmd, slurmctld and prometheus start their services on install.
  # Where no policy-rc.d forbids that (a bare container), a temporary one does for this install,
  # so no system munged or slurmctld is left running; the tests start their own daemons, on
  # their own ports and sockets.
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [[ ! -e "$policy" ]]; then
    own_policy=1
    trap '"${sudo_cmd[@]}" rm -f "$policy"' EXIT
    printf '#!/bin/sh\n# scripts/setup.sh: no service starts during its apt-get install\nexit 101\n' |
      "${sudo_cmd[@]}" tee "$policy" >/dev/null
    "${sudo_cmd[@]}" chmod 755 "$policy"
  fi
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if ((own_policy)); then "${sudo_cmd[@]}" rm -f "$policy"; trap - EXIT; fi
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
configure=(-DPATHBENCH_WERROR="$([[ "${CI:-}" == true ]] && echo ON || echo OFF)")

# Every compile goes through ccache (PATHBENCH_CCACHE=0 turns it off). The cache is shared by
# every clone of this user (~/.cache/ccache): base_dir turns the clone's absolute paths into
# relative ones and hash_dir=false keeps the working directory out of the key, so a fresh clone
# hits what another clone compiled. Set through the launcher, so a plain `ninja -C build/...`
# gets the same settings.
launcher=""
if [[ "${PATHBENCH_CCACHE:-1}" != 0 ]] && command -v ccache >/dev/null; then
  launcher="$(command -v env);CCACHE_BASEDIR=$root;CCACHE_NOHASHDIR=true;$(command -v ccache)"
fi
for lang in C CXX CUDA; do configure+=(-DCMAKE_${lang}_COMPILER_LAUNCHER="$launcher"); done

# NVML's header, for every preset (the library itself is dlopen'ed at run time). CMake looks in the
# CUDA toolkit first; where the toolkit has none (CUDA 13 ships without nvml.h), the PyPI package
# nvidia-nvml-dev-cu12 provides it, in a venv of its own so the test venv's pins stay untouched.
# Without network and without the header the build still works: the inventory then reads
# nvidia-smi, and CMake says so.
nvml_toolkit_header=""
for dir in "$(dirname "$(command -v nvcc 2>/dev/null || echo /nonexistent/bin/nvcc)")/../include" \
           /usr/local/cuda/include /usr/include; do
  if [[ -f "$dir/nvml.h" ]]; then nvml_toolkit_header="$dir/nvml.h"; break; fi
done
if [[ -z "$nvml_toolkit_header" ]]; then
  nvml_venv="$root/build/nvml-venv"
  nvml_package="nvidia-nvml-dev-cu12==12.9.79"
  if [[ ! -x "$nvml_venv/bin/python" || "$(cat "$nvml_venv/.package" 2>/dev/null)" != "$nvml_package" ]]; then
    echo "pathbench setup: installing $nvml_package (nvml.h) into $nvml_venv" >&2
    if python3 -m venv "$nvml_venv" &&
       "$nvml_venv/bin/python" -m pip install -q --disable-pip-version-check "$nvml_package"; then
      echo "$nvml_package" > "$nvml_venv/.package"
    else
      echo "pathbench setup: could not install $nvml_package; building without nvml.h (the inventory uses nvidia-smi)" >&2
    fi
  fi
  # Where the installed package put the header, asked of the package itself.
  nvml_include="$("$nvml_venv/bin/python" - 2>/dev/null <<'PY' || true
import importlib.metadata as metadata
for f in metadata.files("nvidia-nvml-dev-cu12") or []:
    if f.name == "nvml.h":
        print(f.locate().parent.resolve())
        break
PY
)"
  [[ -n "$nvml_include" ]] && configure+=(-DPATHBENCH_NVML_HINT_DIR="$nvml_include")
fi
if [[ "$preset" == sanitize ]] && ! command -v clang++-14 >/dev/null; then
  # The preset names clang-14 (Debian 12's); any clang has libFuzzer, gcc only the sanitizers.
  if command -v clang++ >/dev/null && command -v clang >/dev/null; then
    configure+=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
  else
    configure+=(-DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++)
    echo "pathbench setup: no clang found; the sanitizer build uses gcc and builds no fuzz harnesses" >&2
  fi
fi
cmake --preset "$preset" "${configure[@]}" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" "${targets[@]}"
