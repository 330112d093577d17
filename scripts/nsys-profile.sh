#!/usr/bin/env bash
# Runs pathbench under Nsight Systems so the timeline reads like the scenario file: NVTX ranges
# of the `pathbench` domain (scenario -> case -> repetition) over CUDA API calls, copies, kernels
# and OS runtime calls.
#
#   scripts/nsys-profile.sh SCENARIO_FILE_OR_DIR... [-- extra `pathbench run` args]
#
# Environment: PATHBENCH (binary, default build/release/pathbench), NSYS (default nsys),
# PATHBENCH_PROFILE_DIR (default profiles/).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pathbench="${PATHBENCH:-$root/build/release/pathbench}"
nsys="${NSYS:-nsys}"
out_dir="${PATHBENCH_PROFILE_DIR:-$root/profiles}"

scenarios=()
while (($#)) && [[ "$1" != "--" ]]; do scenarios+=("$1"); shift; done
[[ "${1:-}" == "--" ]] && shift
if ((${#scenarios[@]} == 0)); then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 3
fi
if ! command -v "$nsys" >/dev/null 2>&1; then
  echo "nsys-profile.sh: Nsight Systems ('$nsys') is not installed or not on PATH." >&2
  echo "  Install it from the CUDA toolkit (nsight-systems package) or set NSYS=/path/to/nsys." >&2
  exit 3
fi
[[ -x "$pathbench" ]] || { echo "nsys-profile.sh: $pathbench not found; build first (scripts/setup.sh)" >&2; exit 3; }

mkdir -p "$out_dir"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
report="$out_dir/pathbench-$stamp"
# --cuda-memory-usage shows pinned/pageable allocations; the sampling and CPU context switch
# tracing are off: they add noise to the very copies being measured.
"$nsys" profile \
  --trace=cuda,nvtx,osrt \
  --cuda-memory-usage=true \
  --sample=none --cpuctxsw=none \
  --force-overwrite=true \
  --output="$report" \
  "$pathbench" run "${scenarios[@]}" --out "$report.result.json" "$@"
echo "nsys report: $report.nsys-rep"
echo "pathbench result: $report.result.json"
echo "open with: nsys-ui $report.nsys-rep   (or: nsys stats $report.nsys-rep)"
