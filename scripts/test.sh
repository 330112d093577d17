#!/usr/bin/env bash
# Every test: set up, build, and run the whole suite through ctest; then the sanitizer stage.
# GPU tests (label `gpu`) skip themselves, saying why, on a machine without a GPU.
# Usage: scripts/test.sh [--no-sanitize | --sanitize] [ctest arguments...]
#   (default)      the release suite (ctest arguments apply to it), then the sanitizer stage:
#                  the ASan+UBSan build (preset sanitize) runs the unit tests, the host
#                  end-to-end tests and every fuzz harness's saved inputs, then fuzzes each
#                  parser briefly (PATHBENCH_FUZZ_SECONDS per harness, default 20).
#   --no-sanitize  the release suite only (local use; CI runs the sanitizer stage)
#   --sanitize     the sanitizer stage only (ctest arguments, if any, replace its test selection)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { echo "usage: scripts/test.sh [--no-sanitize | --sanitize] [ctest arguments...]" >&2; exit 3; }
release=1
sanitize=1
case "${1:-}" in
  --no-sanitize) sanitize=0; shift ;;
  --sanitize) release=0; shift ;;
esac
for arg in "$@"; do
  [[ "$arg" == --no-sanitize || "$arg" == --sanitize ]] && usage
done
fuzz_seconds="${PATHBENCH_FUZZ_SECONDS:-20}"
[[ "$fuzz_seconds" =~ ^[0-9]+$ ]] || { echo "scripts/test.sh: PATHBENCH_FUZZ_SECONDS must be an integer" >&2; exit 3; }
cd "$root"

if ((release)); then
  "$root/scripts/setup.sh" release --test-deps
  ctest --preset release -j "$(nproc)" "$@"
fi

if ((sanitize)); then
  start=$SECONDS
  echo "pathbench test: sanitizer stage (ASan+UBSan build in build/sanitize)" >&2
  "$root/scripts/setup.sh" sanitize
  # Unit and host end-to-end tests run the sanitized library and binary; `reports` tests
  # exercise the Python report scripts (nothing sanitized) and `gpu` tests need a device.
  selection=(-L 'unit|e2e|fuzz' -LE 'gpu|reports')
  if ((!release && $# > 0)); then selection=("$@"); fi
  ctest --preset sanitize -j "$(nproc)" "${selection[@]}"
  if [[ ! -s build/sanitize/fuzz/harnesses ]]; then
    echo "pathbench test: no clang, so no fuzz harnesses: fuzzing skipped" >&2
  elif ((fuzz_seconds > 0)); then
    "$root/scripts/fuzz.sh" "$fuzz_seconds"
  fi
  echo "pathbench test: sanitizer stage took $((SECONDS - start)) s" >&2
fi
