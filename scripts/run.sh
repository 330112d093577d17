#!/usr/bin/env bash
# The main job: set up, build, and run the default scenario set.
# Writes results/<node-type>-<UTC timestamp>.json and prints a short table.
# Extra arguments go to `pathbench run` (e.g. --quick, --node-type LABEL, --device 1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh" release --target pathbench
cd "$root"
exec "$root/build/release/pathbench" run scenarios/default.json "$@"
