#!/usr/bin/env bash
# An independent reference for the storage family's queue_depth axis: fio reads a file in a
# folder with O_DIRECT at queue depths 1, 4 and 16 and block sizes 128k and 1m (the settings of
# the scenario storage-queue-depth), so that pathbench's odirect_pinned figure can be set beside
# what the disk gives a tool that shares no code with it. Not part of the build or of pathbench.
#
#   scripts/reference/fio_storage.sh --storage-dir DIR [--size SIZE] [--ioengine ENGINE]
#                                    [--loops N] [--out FILE] [--with-pathbench] [--keep-file]
#
#   --storage-dir DIR  the folder to measure (the one given to `pathbench run --storage-dir`), on
#                      a disk file system (tmpfs has no O_DIRECT); a test file is written there
#                      and removed at the end (unless --keep-file)
#   --size SIZE        the test file's size, as fio reads it: digits and K, M or G (powers of
#                      1024); default 1G, the size of pathbench's storage-queue-depth cases
#   --ioengine ENGINE  libaio (default) or io_uring
#   --loops N          times fio reads the whole file per setting (default 3)
#   --out FILE         the JSON summary (default ./fio_storage.json), written atomically
#   --with-pathbench   then run `pathbench run scenarios/storage.json --filter queue_depth
#                      --storage-dir DIR` and print its median beside fio's, with the ratio;
#                      its result is kept beside the summary (FILE with .pathbench.json)
#   --keep-file        leave the test file in DIR
#
# Each setting drops the file's pages first (fio --invalidate=1; O_DIRECT bypasses the cache
# anyway) and runs fio --direct=1 --rw=read --iodepth=QD --bs=BS --output-format=json; the line
# printed is "qd QD bs BS GB/s X" (GB = 1e9 bytes), fio's read bandwidth over all loops.
# Environment: FIO (default fio), PATHBENCH (default build/release/pathbench), PYTHON (default
# python3, which reads fio's and pathbench's JSON).
# Exit: 0 done; 1 fio or pathbench failed; 3 bad input or usage (the message says which).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
fio="${FIO:-fio}"
pathbench="${PATHBENCH:-$root/build/release/pathbench}"
python="${PYTHON:-python3}"
me="fio_storage.sh"
queue_depths=(1 4 16)
block_sizes=(128k 1m)

usage() { sed -n '7,20p' "$0" | sed 's/^# \{0,1\}//'; }
bad() {
  echo "$me: $*" >&2
  echo "  (scripts/reference/fio_storage.sh --help for the options)" >&2
  exit 3
}

dir="" size="1G" engine="libaio" loops=3 out="fio_storage.json" with_pathbench=0 keep=0
while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --storage-dir|--size|--ioengine|--loops|--out)
      (($# > 1)) || bad "$1 needs a value"
      case "$1" in
        --storage-dir) dir="$2" ;;
        --size) size="$2" ;;
        --ioengine) engine="$2" ;;
        --loops) loops="$2" ;;
        --out) out="$2" ;;
      esac
      shift ;;
    --with-pathbench) with_pathbench=1 ;;
    --keep-file) keep=1 ;;
    *) bad "unknown argument '$1'" ;;
  esac
  shift
done

[[ -n "$dir" ]] || bad "--storage-dir is required: the folder on the disk to measure"
[[ -d "$dir" ]] || bad "--storage-dir '$dir' is not a folder"
[[ -w "$dir" ]] || bad "--storage-dir '$dir' is not writable"
[[ "$size" =~ ^[1-9][0-9]{0,12}[KMG]?$ ]] ||
  bad "--size '$size' is not digits with an optional K, M or G (e.g. 1G, 256M)"
case "$engine" in libaio|io_uring) ;; *) bad "--ioengine '$engine' is not libaio or io_uring" ;; esac
[[ "$loops" =~ ^[1-9][0-9]{0,3}$ ]] || bad "--loops '$loops' is not an integer in [1, 9999]"
[[ -e "$out" && ! -f "$out" ]] && bad "--out '$out' exists and is not a regular file"
out_dir="$(dirname -- "$out")"
[[ -d "$out_dir" && -w "$out_dir" ]] || bad "--out '$out': the folder '$out_dir' is not writable"

case "${size: -1}" in
  K) bytes=$((${size%K} * 1024)) ;;
  M) bytes=$((${size%M} * 1024 * 1024)) ;;
  G) bytes=$((${size%G} * 1024 * 1024 * 1024)) ;;
  *) bytes=$size ;;
esac
((bytes >= 1024 * 1024)) || bad "--size '$size' is under 1M: the 1m reads need at least one block"
((bytes % 4096 == 0)) || bad "--size '$size' is not a multiple of 4096 (O_DIRECT's block)"

magic_name="$(stat -f -c %T -- "$dir")"
case "$magic_name" in
  tmpfs|ramfs) bad "--storage-dir '$dir' is on $magic_name, which keeps files in memory: O_DIRECT cannot read there" ;;
esac
# df names ext4 as such, where statfs's magic number says "ext2/ext3".
fs_type="$(df --output=fstype -- "$dir" 2>/dev/null | tail -n 1)" || fs_type=""
[[ -n "$fs_type" ]] || fs_type="$magic_name"
free=$(($(stat -f -c '%a * %S' -- "$dir")))
((free > bytes + 256 * 1024 * 1024)) ||
  bad "--storage-dir '$dir' has $((free / 1048576)) MiB free; the $size file needs it plus 256 MiB"

command -v "$python" >/dev/null 2>&1 || bad "$python is needed to read fio's JSON (set PYTHON)"
command -v "$fio" >/dev/null 2>&1 ||
  bad "fio ('$fio') is not installed or not on PATH (apt-get install fio, or set FIO=/path/to/fio)"
if ((with_pathbench)); then
  [[ -x "$pathbench" ]] || bad "$pathbench not found; build it (scripts/setup.sh) or set PATHBENCH"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/fio_storage.XXXXXX")"
file="$dir/fio-storage-reference.$$"
cleanup() {
  rm -rf -- "$work"
  ((keep)) || rm -f -- "$file"
}
trap cleanup EXIT

fio_or_fail() {  # fio's own message on failure, then exit 1
  if ! "$fio" "$@" >"$work/fio.out" 2>"$work/fio.err"; then
    echo "$me: fio failed: $fio $*" >&2
    cat "$work/fio.err" "$work/fio.out" >&2
    exit 1
  fi
}

echo "$me: writing the $size test file $file ($fs_type)" >&2
fio_or_fail --name=layout --filename="$file" --rw=write --bs=1m --size="$bytes" --direct=1 \
  --ioengine=psync --end_fsync=1 --output-format=json --output="$work/layout.json"

for qd in "${queue_depths[@]}"; do
  for bs in "${block_sizes[@]}"; do
    json="$work/read-qd$qd-bs$bs.json"
    fio_or_fail --name="read-qd$qd-bs$bs" --filename="$file" --rw=read --direct=1 \
      --invalidate=1 --ioengine="$engine" --iodepth="$qd" --bs="$bs" --size="$bytes" \
      --loops="$loops" --numjobs=1 --output-format=json --output="$json"
    "$python" - "$json" "$qd" "$bs" <<'EOF'
import json, sys
path, qd, bs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
job = json.load(open(path))["jobs"][0]["read"]
rate = job.get("bw_bytes") or job["bw"] * 1024  # bytes/s (bw: KiB/s in older fio)
print(f"qd {qd:>3} bs {bs:>5} GB/s {rate / 1e9:.3f}")
EOF
  done
done

pb_result=""
pb_status=0
if ((with_pathbench)); then
  pb_result="${out%.json}.pathbench.json"
  echo "$me: pathbench run scenarios/storage.json --filter queue_depth --storage-dir $dir" >&2
  ((bytes == 1024 * 1024 * 1024)) ||
    echo "$me: note: pathbench's storage-queue-depth cases read a 1 GiB file, fio a $size one" >&2
  "$pathbench" run "$root/scenarios/storage.json" --filter queue_depth --storage-dir "$dir" \
    --out "$pb_result" >&2 || pb_status=$?
  if [[ ! -f "$pb_result" ]]; then
    echo "$me: pathbench exited $pb_status without a result" >&2
    exit 1
  fi
fi

# The summary, and pathbench's medians beside fio's (matched on queue depth and block size).
"$python" - "$work" "$out" "$dir" "$fs_type" "$bytes" "$engine" "$loops" "$pb_result" \
  "$("$fio" --version)" "${queue_depths[*]}" "${block_sizes[*]}" <<'EOF'
import json, os, sys, tempfile
work, out, folder, fs_type, size, engine, loops, pb_path, version, qds, bss = sys.argv[1:]
units = {"k": 1024, "m": 1024 * 1024}
rows = []
for qd in qds.split():
    for bs in bss.split():
        job = json.load(open(os.path.join(work, f"read-qd{qd}-bs{bs}.json")))["jobs"][0]["read"]
        rate = job.get("bw_bytes") or job["bw"] * 1024
        rows.append({"queue_depth": int(qd), "block_size": int(bs[:-1]) * units[bs[-1]],
                     "fio_gb_per_s": rate / 1e9})
pathbench_cases = {}
if pb_path:
    for case in json.load(open(pb_path)).get("cases", []):
        p = case.get("params", {})
        if "queue_depth" in p:
            pathbench_cases[(p["queue_depth"], p.get("chunk"))] = case
if pathbench_cases:
    print(f"{'qd':>3} {'bs':>5} {'fio GB/s':>9} {'pathbench GB/s':>15} {'ratio':>6}")
for row in rows:
    case = pathbench_cases.get((row["queue_depth"], row["block_size"]))
    if not pb_path:
        continue
    if case is None:
        row["pathbench"] = {"status": "absent"}
    elif case.get("status") == "ok":
        median = case["metrics"]["throughput"]["stats"]["median"]
        row["pathbench"] = {"status": "ok", "id": case["id"], "gb_per_s": median,
                            "ratio": median / row["fio_gb_per_s"]}
    else:
        row["pathbench"] = {"status": case.get("status"), "id": case["id"],
                            "reason": case.get("reason", "")}
    pb = row["pathbench"]
    figure = f"{pb['gb_per_s']:15.3f} {pb['ratio']:6.2f}" if pb["status"] == "ok" else \
        f"  {pb['status']}: {pb.get('reason', '')}"
    bs = next(b for b in bss.split() if int(b[:-1]) * units[b[-1]] == row["block_size"])
    print(f"{row['queue_depth']:>3} {bs:>5} {row['fio_gb_per_s']:9.3f} {figure}")
summary = {"schema": "pathbench.fio_storage_reference/v1", "fio_version": version,
           "storage_dir": os.path.abspath(folder), "fs_type": fs_type, "file_bytes": int(size),
           "ioengine": engine, "loops": int(loops), "unit": "GB/s (1e9 bytes per second)",
           "settings": rows}
out_dir = os.path.dirname(os.path.abspath(out))
fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".fio_storage.")
with os.fdopen(fd, "w") as f:
    json.dump(summary, f, indent=2)
    f.write("\n")
os.replace(tmp, out)
print(f"summary: {out}", file=sys.stderr)
EOF
((pb_status == 0 || pb_status == 2)) || exit 1
