#!/usr/bin/env bash
# Fuzzes pathbench's parsers of untrusted text with the libFuzzer harnesses of tests/fuzz.
# Usage: scripts/fuzz.sh SECONDS [HARNESS...]
#        scripts/fuzz.sh --budget TOTAL [HARNESS...]
#   Builds the sanitize preset (ASan+UBSan, clang) when needed, then runs each harness (default:
#   every one) for SECONDS, two at a time (PATHBENCH_FUZZ_JOBS), with -rss_limit_mb=2048 and
#   -timeout=5. Each corpus starts from the harness's seeds (tests/fixtures, tests/fuzz/seeds,
#   saved findings), copied to build/sanitize/fuzz/corpus/<harness>; it grows across runs.
#   A crash, sanitizer report, leak, out-of-memory or timeout lands in
#   build/fuzz-findings/<harness>/ (save it under tests/fixtures/fuzz/<harness>/ once fixed).
#   --budget TOTAL spreads TOTAL seconds of wall time evenly over the harnesses (each gets
#   TOTAL / ceil(harnesses / jobs), at least 5 s), so adding a harness does not lengthen CI.
#   The outcome lines are also kept in build/sanitize/fuzz/logs/summary.
#   Exit 0: no finding; 1: a finding; 3: bad usage or no harness could be built (no clang).
set -euo pipefail

usage() {
  echo "usage: scripts/fuzz.sh SECONDS|--budget TOTAL [HARNESS...]   (harnesses: tests/fuzz/fuzz_*.cpp)" >&2
  exit 3
}
budget=""
seconds=""
if [[ "${1:-}" == --budget ]]; then
  [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || usage
  budget="$2"
  shift 2
else
  [[ $# -ge 1 && "$1" =~ ^[1-9][0-9]*$ ]] || usage
  seconds="$1"
  shift
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/sanitize"
out="$build/fuzz"
findings_root="$root/build/fuzz-findings"
jobs="${PATHBENCH_FUZZ_JOBS:-2}"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "scripts/fuzz.sh: PATHBENCH_FUZZ_JOBS must be a positive integer" >&2; exit 3; }

"$root/scripts/setup.sh" sanitize >&2
if [[ ! -s "$out/harnesses" ]]; then
  echo "scripts/fuzz.sh: no fuzz harnesses were built (they need clang with libFuzzer)" >&2
  exit 3
fi
mapfile -t known < "$out/harnesses"
if [[ $# -eq 0 ]]; then
  harnesses=("${known[@]}")
else
  harnesses=()
  for h in "$@"; do
    [[ " ${known[*]} " == *" $h "* ]] || { echo "scripts/fuzz.sh: unknown harness '$h' (known: ${known[*]})" >&2; usage; }
    harnesses+=("$h")
  done
fi

# Sanitizer reports abort (the build has -fno-sanitize-recover), with the stack printed.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# One harness: seeds into its corpus, SECONDS of fuzzing, the outcome in $out/logs/<harness>.status.
fuzz_one() {
  local h="$1" corpus="$out/corpus/$1" findings="$findings_root/$1" log="$out/logs/$1.log"
  mkdir -p "$corpus" "$findings" "$out/tmp/$h"
  # Named by content, as libFuzzer names what it adds: seeds of different folders may share a name.
  local dir seed
  while IFS= read -r dir; do
    [[ -d "$dir" ]] || continue
    for seed in "$dir"/*; do
      [[ -f "$seed" ]] && cp "$seed" "$corpus/$(sha1sum < "$seed" | cut -d' ' -f1)"
    done
  done < "$out/$h.seeds"
  local dict=()
  [[ -f "$out/$h.dict" ]] && dict=(-dict="$out/$h.dict")
  local rc=0
  # The outer timeout only guards against a harness that ignores -max_total_time (a hang in a
  # sanitizer's report, say); libFuzzer's own -timeout catches slow inputs.
  TMPDIR="$out/tmp/$h" timeout -k 10 $((seconds + 120)) "$build/tests/fuzz/$h" \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=5 -print_final_stats=1 \
    -artifact_prefix="$findings/" "${dict[@]}" "$corpus" > "$log" 2>&1 || rc=$?
  local runs cov corpus_size
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)"
  corpus_size="$(find "$corpus" -maxdepth 1 -type f | wc -l)"
  if ((rc == 0)); then
    echo "ok      $h: ${runs:-?} runs in ${seconds} s, coverage ${cov:-?}, corpus $corpus_size" \
      > "$out/logs/$h.status"
  else
    local artifact
    artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)"
    echo "FINDING $h: exit $rc, ${artifact:-no input saved}; log $log" > "$out/logs/$h.status"
  fi
}

if [[ -n "$budget" ]]; then
  waves=$(((${#harnesses[@]} + jobs - 1) / jobs))
  seconds=$((budget / waves))
  ((seconds >= 5)) || seconds=5
fi
mkdir -p "$out/logs"
echo "scripts/fuzz.sh: ${#harnesses[@]} harnesses, ${seconds} s each, ${jobs} at a time" >&2
running=0
for h in "${harnesses[@]}"; do
  rm -f "$out/logs/$h.status"
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$h" &
  running=$((running + 1))
done
wait || true

for h in "${harnesses[@]}"; do
  if [[ -f "$out/logs/$h.status" ]]; then
    cat "$out/logs/$h.status"
  else
    echo "FINDING $h: the fuzz run did not finish; log $out/logs/$h.log"
  fi
done | tee "$out/logs/summary"
grep -q '^FINDING' "$out/logs/summary" && exit 1
exit 0
