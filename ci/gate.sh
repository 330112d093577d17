#!/usr/bin/env bash
# The hardware-CI gate: compares RESULT with the baseline of its node type and writes JUnit XML.
#
#   ci/gate.sh RESULT [--baselines DIR] [--junit FILE] [--json FILE] [-- extra compare args]
#
# Exit codes are pathbench compare's: 0 pass, 1 regression / failed case / floor not met,
# 2 missing cases or incomparable results (or no baseline for this node type yet), 3 bad input.
# Without a baseline the node's absolute floors are still checked and reported, and the gate
# exits 2 so that a new node type is noticed rather than silently passed.
set -euo pipefail

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 3; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pathbench="${PATHBENCH:-$root/build/release/pathbench}"
baselines="$root/ci/baselines"
result=""
junit="pathbench-junit.xml"
json="pathbench-compare.json"
extra=()
while (($#)); do
  case "$1" in
    --baselines) baselines="${2:?}"; shift 2 ;;
    --junit) junit="${2:?}"; shift 2 ;;
    --json) json="${2:?}"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage ;;
    -*) echo "ci/gate.sh: unknown option $1" >&2; usage ;;
    *) [[ -z "$result" ]] || usage; result="$1"; shift ;;
  esac
done
[[ -n "$result" ]] || usage
[[ -x "$pathbench" ]] || { echo "ci/gate.sh: $pathbench not found; build first (scripts/setup.sh)" >&2; exit 3; }

set +e
baseline="$("$pathbench" baseline path "$result" --dir "$baselines")"
status=$?
set -e
case $status in
  0)
    echo "ci/gate.sh: comparing $result with $baseline" >&2
    exec "$pathbench" compare "$baseline" "$result" --junit "$junit" --json "$json" "${extra[@]}"
    ;;
  2)
    echo "ci/gate.sh: no baseline for this node type ($baseline); checking floors only." >&2
    echo "ci/gate.sh: promote a good run with: pathbench baseline promote $result --dir $baselines" >&2
    set +e
    "$pathbench" compare --floors "$result" --junit "$junit" --json "$json" "${extra[@]}"
    floors=$?
    set -e
    ((floors == 0)) && exit 2
    exit "$floors"
    ;;
  *) exit "$status" ;;
esac
