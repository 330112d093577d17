#!/usr/bin/env bash
# Every test: set up, build, and run the whole suite through ctest.
# GPU tests (label `gpu`) skip themselves, saying why, on a machine without a GPU.
# Usage: scripts/test.sh [--sanitize] [ctest arguments...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
preset=release
if [[ "${1:-}" == "--sanitize" ]]; then preset=debug; shift; fi
"$root/scripts/setup.sh" "$preset" --test-deps
cd "$root"
ctest --preset "$preset" -j "$(nproc)" "$@"
