#!/usr/bin/env bash
# Submits a pathbench fleet sweep to Slurm: the per-node sweep (ci/slurm/pathbench.sbatch: one
# task per node, whole nodes, all of their GPUs, <host>.json per node) and, dependent on it with
# afterany, the fleet report (ci/slurm/fleet.sbatch: fleet.txt/.json/.html, fleet-junit.xml).
#
#   ci/slurm/submit.sh [SBATCH_OPTION...] [-- PATHBENCH_RUN_ARG...]
#   ci/slurm/submit.sh --nodes=8 --partition=gpu -- --quick --filter '^host_memory/'
#
# Options before `--` go to the sweep's sbatch (--nodes, --partition, --time, --nodelist, ...;
# they override the defaults below; the fleet report runs in the sweep's partition); arguments
# after it to `pathbench run` on every node.
# Prints "sweep <job id>", "fleet <job id>" and "results <folder>" on stdout.
# Environment:
#   PATHBENCH_ROOT       the pathbench checkout, on a filesystem every node reads (default: the
#                        one this script is in); exported to both jobs
#   PATHBENCH_BIN        the binary (default: $PATHBENCH_ROOT/build/release/pathbench)
#   PATHBENCH_SCENARIOS  space-separated scenario files or folders, relative ones to
#                        PATHBENCH_ROOT (default: scenarios/default.json)
#   PATHBENCH_RESULTS    the shared results folder, which must not hold results yet (default:
#                        results/<sweep job id> under the current directory, the submit dir)
#   PATHBENCH_GRES       the sweep's per-node GPU request, as sbatch --gres (default gpu:8: set
#                        it to the GPUs of one node, e.g. gpu:h200:8); "none" or empty asks for
#                        no GRES, for a cluster without GPU GRES (the GPU families then run on
#                        whatever GPUs a node shows, or are skipped with the reason)
#   PATHBENCH_FLEET_ARGS extra `pathbench fleet` options, e.g. "--z-limit 4"
# Exit status: sbatch's when a submission fails; 3 for bad input (the message names the variable).
set -euo pipefail

die() { echo "submit.sh: $*" >&2; exit 3; }

command -v sbatch >/dev/null || die "sbatch not found on PATH: run this on a Slurm submit host"

sbatch_options=()
run_args=()
while (($#)); do
  if [[ "$1" == -- ]]; then shift; run_args=("$@"); break; fi
  sbatch_options+=("$1"); shift
done

self_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
root="${PATHBENCH_ROOT:-$self_root}"
[[ -f "$root/ci/slurm/pathbench.sbatch" && -f "$root/ci/slurm/fleet.sbatch" ]] ||
  die "PATHBENCH_ROOT=$root is not a pathbench checkout (no ci/slurm/pathbench.sbatch there)"
root="$(cd "$root" && pwd -P)"
bin="${PATHBENCH_BIN:-$root/build/release/pathbench}"
[[ "$bin" == /* ]] || bin="$PWD/$bin"
[[ -x "$bin" ]] ||
  die "no pathbench binary at $bin: build it with scripts/setup.sh release in $root (on a filesystem every node reads), or set PATHBENCH_BIN (or PATHBENCH_ROOT) to where it is"
read -r -a scenario_args <<< "${PATHBENCH_SCENARIOS:-scenarios/default.json}"
((${#scenario_args[@]})) || die "PATHBENCH_SCENARIOS is empty"
for s in "${scenario_args[@]}"; do
  [[ "$s" == /* ]] || s="$root/$s"
  [[ -e "$s" ]] || die "PATHBENCH_SCENARIOS: no scenario file or folder $s"
done

submit_dir="$(pwd -P)"  # what Slurm records as SLURM_SUBMIT_DIR
results="${PATHBENCH_RESULTS:-}"
if [[ -n "$results" ]]; then
  [[ "$results" == /* ]] || results="$submit_dir/$results"
  if compgen -G "$results/*.json" >/dev/null; then
    die "PATHBENCH_RESULTS=$results already holds results (*.json): the fleet report would mix runs; name a new folder"
  fi
  mkdir -p "$results" || die "PATHBENCH_RESULTS: cannot create $results"
fi

gres="${PATHBENCH_GRES-gpu:8}"
gres_option=()
if [[ -n "$gres" && "$gres" != none ]]; then gres_option=(--gres="$gres"); fi

export PATHBENCH_ROOT="$root" PATHBENCH_BIN="$bin" PATHBENCH_SCENARIOS="${scenario_args[*]}"
if [[ -n "$results" ]]; then export PATHBENCH_RESULTS="$results"; fi

# --parsable prints "<job id>" or "<job id>;<cluster>".
sweep_out="$(sbatch --parsable --export=ALL "${gres_option[@]}" "${sbatch_options[@]}" \
               "$root/ci/slurm/pathbench.sbatch" "${run_args[@]}")"
sweep="${sweep_out%%;*}"
[[ "$sweep" =~ ^[0-9]+$ ]] || die "sbatch printed no job id for the sweep: $sweep_out"
if [[ -z "$results" ]]; then
  results="$submit_dir/results/$sweep"  # the sweep's own default
  mkdir -p "$results"
  export PATHBENCH_RESULTS="$results"
fi

# The report runs in the sweep's partition (whatever options chose it), one core for minutes.
fleet_options=()
partition="$(squeue -h -j "$sweep" -o %P 2>/dev/null || true)"
if [[ -n "$partition" ]]; then fleet_options+=(--partition="$partition"); fi
fleet_out="$(sbatch --parsable --export=ALL --dependency="afterany:$sweep" "${fleet_options[@]}" \
               --output="$results/fleet-%j.log" "$root/ci/slurm/fleet.sbatch")" || {
  echo "submit.sh: the sweep is job $sweep, but the fleet report could not be queued; run it by hand:" >&2
  echo "  PATHBENCH_RESULTS=$results sbatch --dependency=afterany:$sweep $root/ci/slurm/fleet.sbatch" >&2
  exit 1
}
fleet="${fleet_out%%;*}"
echo "sweep $sweep"
echo "fleet $fleet"
echo "results $results"
