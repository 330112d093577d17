#!/usr/bin/env bash
# The hardware-CI gate: judges RESULT against the baseline of its node type, re-runs suspect
# cases to confirm them, and writes JUnit XML and JSON.
#
#   ci/gate.sh RESULT [--baselines DIR] [--junit FILE] [--json FILE] [--confirm N] [-- extra gate args]
#
# Exit codes are pathbench's: 0 pass (flaky and unstable metrics are reported, not failed),
# 1 confirmed regression / failed case / floor not met, 2 missing cases, too few samples,
# incomparable or noisy results, or no baseline for this node type yet (the floors are still
# checked), 3 bad input. Run it from the directory the result was produced in: the re-runs use
# the scenario files the result names.
set -euo pipefail

usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 3; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pathbench="${PATHBENCH:-$root/build/release/pathbench}"
baselines="$root/ci/baselines"
result=""
junit="pathbench-junit.xml"
json="pathbench-compare.json"
confirm=-1  # sized to the gate's --false-alarm target (pathbench gate --help)
extra=()
while (($#)); do
  case "$1" in
    --baselines) baselines="${2:?}"; shift 2 ;;
    --junit) junit="${2:?}"; shift 2 ;;
    --json) json="${2:?}"; shift 2 ;;
    --confirm) confirm="${2:?}"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage ;;
    -*) echo "ci/gate.sh: unknown option $1" >&2; usage ;;
    *) [[ -z "$result" ]] || usage; result="$1"; shift ;;
  esac
done
[[ -n "$result" ]] || usage
[[ -x "$pathbench" ]] || { echo "ci/gate.sh: $pathbench not found; build first (scripts/setup.sh)" >&2; exit 3; }

exec "$pathbench" gate "$result" --baselines "$baselines" --confirm "$confirm" \
  --junit "$junit" --json "$json" "${extra[@]}"
