#!/usr/bin/env bash
# The container's entry point (ci/docker/Dockerfile; ci/kubernetes/job.yaml and daemonset.yaml):
# run the scenarios once, write the result, export it for node_exporter's textfile collector;
# with PATHBENCH_INTERVAL set, sleep and do it again (the DaemonSet), until the pod is stopped.
#
# Environment (every one optional except NODE_NAME, which the downward API sets from spec.nodeName):
#   NODE_NAME                the node; names the result (default: the host name)
#   PATHBENCH                the binary (default: pathbench on PATH)
#   PATHBENCH_SCENARIOS      scenario files or folders, space-separated (default: scenarios/default.json)
#   PATHBENCH_RESULTS_DIR    where results go (default: /results): <NODE_NAME>.json once, or
#                            <NODE_NAME>-<UTC time>.json per run with PATHBENCH_INTERVAL
#   PATHBENCH_KEEP           with PATHBENCH_INTERVAL: keep this many newest results (default: 30; 0 keeps all)
#   PATHBENCH_TEXTFILE_DIR   node_exporter's --collector.textfile.directory (default: /textfile;
#                            empty: no export); the file is pathbench.prom, replaced whole by each run
#   PATHBENCH_RUN_ARGS       extra `pathbench run` arguments, space-separated (e.g. "--device 0")
#   PATHBENCH_INTERVAL       0 or empty: run once and exit with pathbench's exit code (the Job);
#                            else the pause between runs, as sleep(1) takes it: 6h, 1d, 3600
#   PATHBENCH_INITIAL_DELAY  with PATHBENCH_INTERVAL: wait a random 0..N seconds before the first
#                            run (default: 0), so the nodes of a fresh rollout do not measure in step
# Exit codes (run once): pathbench run's (0 ok, 1 a case failed, 2 incomplete, 3 bad input); an
# export failure is 3. With PATHBENCH_INTERVAL it never exits on its own; SIGTERM ends it with 0.
set -euo pipefail

node="${NODE_NAME:-$(hostname)}"
pathbench="${PATHBENCH:-pathbench}"
results_dir="${PATHBENCH_RESULTS_DIR:-/results}"
textfile_dir="${PATHBENCH_TEXTFILE_DIR-/textfile}"
interval="${PATHBENCH_INTERVAL:-0}"
keep="${PATHBENCH_KEEP:-30}"
read -r -a scenarios <<< "${PATHBENCH_SCENARIOS:-scenarios/default.json}"
read -r -a run_args <<< "${PATHBENCH_RUN_ARGS:-}"

log() { echo "pathbench-node: $(date -u +%Y-%m-%dT%H:%M:%SZ) $*" >&2; }

# As PID 1 of the container this shell gets the kubelet's SIGTERM, and a trap runs only between
# commands: pathbench and sleep run in the background, and a stop is passed on to them, so
# pathbench can finish its result as incomplete (exit 2) within the grace period.
stop=0
child=""
on_term() {
  stop=1
  if [[ -n "$child" ]]; then kill -TERM "$child" 2>/dev/null || true; fi
}
trap on_term TERM INT
run_child() {
  local rc=0
  "$@" &
  child=$!
  wait "$child" || rc=$?
  while kill -0 "$child" 2>/dev/null; do  # the wait was cut short by the trap: wait again
    rc=0
    wait "$child" || rc=$?
  done
  child=""
  return "$rc"
}

# One measurement: run, then export whatever the run left (a failed case or an incomplete run
# still has finished cases worth exporting; pathbench_result_complete says which).
measure_once() {
  local out="$1" rc=0
  mkdir -p "$results_dir"
  log "running ${scenarios[*]} -> $out"
  run_child "$pathbench" run "${scenarios[@]}" --out "$out" "${run_args[@]}" || rc=$?
  if [[ -n "$textfile_dir" && -f "$out" ]]; then
    mkdir -p "$textfile_dir"
    # pathbench writes a temporary file beside the target and renames it into place, so
    # node_exporter never reads half a file.
    if ! "$pathbench" export "$out" --prometheus "$textfile_dir/pathbench.prom"; then
      log "export of $out failed"
      ((rc != 0)) || rc=3
    fi
  fi
  log "pathbench run exited $rc"
  return "$rc"
}

if [[ "$interval" == 0 ]]; then
  rc=0
  measure_once "$results_dir/$node.json" || rc=$?
  exit "$rc"
fi

# Periodic: the pod holds its GPU and cores while it sleeps (docs/kubernetes.md).
delay="${PATHBENCH_INITIAL_DELAY:-0}"
if ((delay > 0)); then run_child sleep "$((RANDOM % (delay + 1)))" || true; fi
while ((!stop)); do
  measure_once "$results_dir/$node-$(date -u +%Y%m%dT%H%M%SZ).json" || true
  if ((keep > 0)); then
    # Newest first by the timestamp in the name; the rest (and their .reruns/.timelines) go.
    mapfile -t old < <(find "$results_dir" -maxdepth 1 -name "$node-*.json" -printf '%f\n' |
                       sort -r | tail -n +"$((keep + 1))")
    for f in "${old[@]}"; do rm -rf -- "${results_dir:?}/$f" "${results_dir:?}/$f".*; done
  fi
  ((stop)) || run_child sleep "$interval" || true
done
log "stopped"
