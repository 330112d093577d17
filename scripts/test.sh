#!/usr/bin/env bash
# Every test: set up, build, and run the whole suite through ctest; then the sanitizer stage.
# GPU tests (label `gpu`) skip themselves, saying why, on a machine without a GPU.
# Usage: scripts/test.sh [--fast [--since REF] | --no-sanitize | --sanitize] [ctest arguments...]
#   (default)      the release suite (ctest arguments apply to it), then the sanitizer stage:
#                  the ASan+UBSan build (preset sanitize) runs the unit tests (but the
#                  three false-alarm-rate runs, which the release suite runs), the host
#                  end-to-end tests and every fuzz harness's saved inputs, then fuzzes every
#                  parser for PATHBENCH_FUZZ_BUDGET seconds in all (default 120), spread
#                  evenly over the harnesses (PATHBENCH_FUZZ_SECONDS, if set, gives each harness
#                  that many seconds instead).
#   --fast         while developing: the release build, every unit test, and the end-to-end and
#                  report tests that the change can affect (scripts/affected_tests.py: the
#                  working tree against REF, default HEAD; the last commit when the tree is
#                  clean). No sanitizer stage; the full run stays the gate.
#   --no-sanitize  the release suite only (local use; CI runs the sanitizer stage)
#   --sanitize     the sanitizer stage only (ctest arguments, if any, replace its test selection)
# Every stage's time, each test's time and the compiler cache's hits go to build/ci-timing/;
# the table (scripts/ci_timing.py) is printed at the end and kept in build/ci-timing/ci-timing.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() {
  echo "usage: scripts/test.sh [--fast [--since REF] | --no-sanitize | --sanitize] [ctest arguments...]" >&2
  exit 3
}
mode=full
since=HEAD
case "${1:-}" in
  --fast) mode=fast; shift
          if [[ "${1:-}" == --since ]]; then (($# > 1)) || usage; since="$2"; shift 2; fi ;;
  --no-sanitize) mode=release; shift ;;
  --sanitize) mode=sanitize; shift ;;
esac
for arg in "$@"; do
  [[ "$arg" == --no-sanitize || "$arg" == --sanitize || "$arg" == --fast ]] && usage
done
fuzz_budget="${PATHBENCH_FUZZ_BUDGET:-120}"
[[ "$fuzz_budget" =~ ^[0-9]+$ ]] || { echo "scripts/test.sh: PATHBENCH_FUZZ_BUDGET must be an integer (seconds)" >&2; exit 3; }
fuzz_seconds="${PATHBENCH_FUZZ_SECONDS:-}"
[[ -z "$fuzz_seconds" || "$fuzz_seconds" =~ ^[0-9]+$ ]] ||
  { echo "scripts/test.sh: PATHBENCH_FUZZ_SECONDS must be an integer" >&2; exit 3; }
cd "$root"
jobs="$(nproc)"

timing="$root/build/ci-timing"
rm -rf "$timing"
mkdir -p "$timing"
report_timing() {
  local rc=$?
  if [[ -s "$timing/stages.tsv" ]] &&
     python3 "$root/scripts/ci_timing.py" "$timing" --out "$timing/ci-timing.md" --slowest 10; then
    echo "pathbench test: stage times (build/ci-timing/ci-timing.md):" >&2
    sed -n '/^| stage/,/^| \*\*total/p' "$timing/ci-timing.md" >&2
  fi
  return $rc
}
trap report_timing EXIT

# stage NAME COMMAND...: runs COMMAND, recording its wall time and exit status; a failure still
# ends the run (set -e) once recorded.
stage() {
  local name="$1" start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  printf '%s\t%s\t%s\n' "$name" "$((SECONDS - start))" "$rc" >> "$timing/stages.tsv"
  return $rc
}
ccache_stats() {  # ccache_stats FILE: the cache's counters, for the hits of one build
  # Before setup.sh has installed ccache (a fresh machine) the counters are nothing yet: an empty
  # file, so the first build's hits and misses are all of what it leaves.
  if command -v ccache >/dev/null; then ccache --print-stats > "$1" 2>/dev/null || true; else : > "$1"; fi
}
build() {  # build STAGE PRESET [setup.sh arguments...]
  local name="$1"
  shift
  ccache_stats "$timing/$name.ccache-before"
  stage "$name" "$root/scripts/setup.sh" "$@"
  ccache_stats "$timing/$name.ccache-after"
}
run_ctest() {  # run_ctest STAGE PRESET [ctest arguments...]
  local name="$1" preset="$2"
  shift 2
  ctest --preset "$preset" --show-only=json-v1 > "$timing/$name.tests.json" 2>/dev/null || true
  stage "$name" ctest --preset "$preset" -j "$jobs" --output-junit "$timing/$name.junit.xml" "$@"
}

if [[ "$mode" == fast ]]; then
  build fast-build release --test-deps
  affected="$(python3 "$root/scripts/affected_tests.py" --since "$since")"
  run_ctest fast-unit release -L unit -LE 'gpu|reports' "$@"
  if [[ -n "$affected" ]]; then
    echo "pathbench test: affected tests: $(python3 "$root/scripts/affected_tests.py" --since "$since" --list | tr '\n' ' ')" >&2
    run_ctest fast-affected release -R "$affected" "$@"
  else
    echo "pathbench test: the change touches no end-to-end or report test: unit tests only" >&2
  fi
  exit 0
fi

if [[ "$mode" == full || "$mode" == release ]]; then
  build release-build release --test-deps
  run_ctest release-tests release "$@"
fi

if [[ "$mode" == full || "$mode" == sanitize ]]; then
  echo "pathbench test: sanitizer stage (ASan+UBSan build in build/sanitize)" >&2
  build sanitize-build sanitize
  # Unit and host end-to-end tests run the sanitized library and binary; `reports` tests
  # exercise the Python report scripts (nothing sanitized) and `gpu` tests need a device. The
  # three false-alarm-rate tests repeat the gate thousands of times over synthetic data (the
  # same code the gate's other tests run once): about 90 s of the stage on two cores under ASan,
  # and the release stage runs them.
  statistics='^(Fleet\.FalseAlarmRateAndDetectionPowerOverRandomFleets|GateRule\.SkewedHostMetricsFalseAlarmsAtMostOnePercent|GateRule\.FalseFailureRateAtMostOnePerHundredMetrics)$'
  selection=(-L 'unit|e2e|fuzz' -LE 'gpu|reports' -E "$statistics")
  if [[ "$mode" == sanitize ]] && (($# > 0)); then selection=("$@"); fi
  run_ctest sanitize-tests sanitize "${selection[@]}"
  if [[ ! -s build/sanitize/fuzz/harnesses ]]; then
    echo "pathbench test: no clang, so no fuzz harnesses: fuzzing skipped" >&2
  else
    fuzz_args=(--budget "$fuzz_budget")
    [[ -n "$fuzz_seconds" ]] && fuzz_args=("$fuzz_seconds")
    if [[ "${fuzz_args[-1]}" != 0 ]]; then
      fuzz_rc=0
      stage fuzz "$root/scripts/fuzz.sh" "${fuzz_args[@]}" || fuzz_rc=$?
      if [[ -f build/sanitize/fuzz/logs/summary ]]; then cp build/sanitize/fuzz/logs/summary "$timing/fuzz.status"; fi
      exit "$fuzz_rc"
    fi
  fi
fi
