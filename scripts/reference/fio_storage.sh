#!/usr/bin/env bash
# An independent reference for the storage family's queue_depth axis: fio reads a file in a
# folder with O_DIRECT at queue depths 1, 4 and 16 and block sizes 128k and 1m (the settings of
# the scenario storage-queue-depth), so that pathbench's odirect_pinned figure can be set beside
# what the disk gives a tool that shares no code with it. Not part of the build or of pathbench.
#
#   scripts/reference/fio_storage.sh --storage-dir DIR [--size SIZE] [--ioengine ENGINE]
#                                    [--loops N] [--rounds N] [--out FILE] [--with-pathbench]
#                                    [--keep-file]
#
#   --storage-dir DIR  the folder to measure (the one given to `pathbench run --storage-dir`), on
#                      a disk file system (tmpfs has no O_DIRECT); a test file is written there
#                      and removed at the end (unless --keep-file)
#   --size SIZE        the test file's size, as fio reads it: digits and K, M or G (powers of
#                      1024); default 1G, the size of pathbench's storage-queue-depth cases
#   --ioengine ENGINE  libaio (default) or io_uring
#   --loops N          times fio reads the whole file per setting (default 3)
#   --rounds N         times every setting is measured, fio and pathbench in turn (default 1):
#                      a disk whose rate drifts from minute to minute (a shared or virtual one)
#                      then moves both alike, and the figures compared are medians over rounds
#   --out FILE         the JSON summary (default ./fio_storage.json), written atomically
#   --with-pathbench   right after fio at each setting, run `pathbench run scenarios/storage.json
#                      --filter '/chunk=BS/queue_depth=QD$' --storage-dir DIR` (that setting's
#                      storage-queue-depth case) and print its median beside fio's, with the
#                      ratio, and both tools' best settings; pathbench's results are kept beside
#                      the summary (FILE with .pathbench.json: round 1, .pathbench.round2.json ...)
#   --keep-file        leave the test file in DIR
#
# Each setting drops the file's pages first (fio --invalidate=1; O_DIRECT bypasses the cache
# anyway) and runs fio --direct=1 --rw=read --iodepth=QD --bs=BS --output-format=json; the line
# printed is "qd QD bs BS GB/s X" (GB = 1e9 bytes), fio's read bandwidth over all loops, and
# with --with-pathbench "  pathbench GB/s Y" (its median) under it.
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

usage() { sed -n '7,27p' "$0" | sed 's/^# \{0,1\}//'; }
bad() {
  echo "$me: $*" >&2
  echo "  (scripts/reference/fio_storage.sh --help for the options)" >&2
  exit 3
}

dir="" size="1G" engine="libaio" loops=3 rounds=1 out="fio_storage.json" with_pathbench=0 keep=0
while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --storage-dir|--size|--ioengine|--loops|--rounds|--out)
      (($# > 1)) || bad "$1 needs a value"
      case "$1" in
        --storage-dir) dir="$2" ;;
        --size) size="$2" ;;
        --ioengine) engine="$2" ;;
        --loops) loops="$2" ;;
        --rounds) rounds="$2" ;;
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
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || bad "--rounds '$rounds' is not an integer in [1, 99]"
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

((with_pathbench && bytes != 1024 * 1024 * 1024)) &&
  echo "$me: note: pathbench's storage-queue-depth cases read a 1 GiB file, fio a $size one" >&2
pb_status=0
for ((round = 1; round <= rounds; round++)); do
  ((rounds == 1)) || echo "$me: round $round of $rounds" >&2
  for qd in "${queue_depths[@]}"; do
    for bs in "${block_sizes[@]}"; do
      json="$work/read-r$round-qd$qd-bs$bs.json"
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
      ((with_pathbench)) || continue
      case "$bs" in *k) chunk=$((${bs%k} * 1024)) ;; *m) chunk=$((${bs%m} * 1024 * 1024)) ;; esac
      pb="$work/pathbench-r$round-qd$qd-bs$bs.json"
      status=0
      "$pathbench" run "$root/scenarios/storage.json" --filter "/chunk=$chunk/queue_depth=$qd\$" \
        --storage-dir "$dir" --out "$pb" >"$work/pathbench.log" 2>&1 || status=$?
      if [[ ! -f "$pb" ]]; then
        cat "$work/pathbench.log" >&2
        echo "$me: pathbench exited $status without a result" >&2
        exit 1
      fi
      ((status == 0 || status == 2)) || pb_status=$status
      "$python" - "$pb" <<'EOF'
import json, sys
cases = json.load(open(sys.argv[1])).get("cases", [])
ok = [c for c in cases if c.get("status") == "ok"]
if ok:
    print(f"  pathbench GB/s {ok[0]['metrics']['throughput']['stats']['median']:.3f}")
else:
    print("  pathbench " + "; ".join(f"{c.get('status')}: {c.get('reason', '')}" for c in cases))
EOF
    done
  done
done

# The summary: per setting the median over rounds of fio's rate and of pathbench's median, the
# ratio, and each tool's best setting; pathbench's results merged per round beside it.
"$python" - "$work" "$out" "$dir" "$fs_type" "$bytes" "$engine" "$loops" "$rounds" \
  "$with_pathbench" "$("$fio" --version)" "${queue_depths[*]}" "${block_sizes[*]}" <<'EOF'
import json, os, statistics, sys, tempfile
(work, out, folder, fs_type, size, engine, loops, rounds, with_pb, version, qds,
 bss) = sys.argv[1:]
rounds, with_pb = int(rounds), with_pb == "1"
units = {"k": 1024, "m": 1024 * 1024}


def write_atomically(path, document):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".fio_storage.")
    with os.fdopen(fd, "w") as f:
        json.dump(document, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


rows, merged = [], {}
for qd in qds.split():
    for bs in bss.split():
        fio_rates, pb_medians, cases = [], [], []
        for r in range(1, rounds + 1):
            job = json.load(open(os.path.join(work, f"read-r{r}-qd{qd}-bs{bs}.json")))
            read = job["jobs"][0]["read"]
            fio_rates.append((read.get("bw_bytes") or read["bw"] * 1024) / 1e9)
            if not with_pb:
                continue
            result = json.load(open(os.path.join(work, f"pathbench-r{r}-qd{qd}-bs{bs}.json")))
            merged.setdefault(r, {**result, "cases": []})["cases"].extend(result.get("cases", []))
            cases.extend(result.get("cases", []))
            pb_medians.extend(c["metrics"]["throughput"]["stats"]["median"]
                              for c in result.get("cases", []) if c.get("status") == "ok")
        row = {"queue_depth": int(qd), "block_size": int(bs[:-1]) * units[bs[-1]], "bs": bs,
               "fio_gb_per_s": statistics.median(fio_rates), "fio_rounds": fio_rates}
        if with_pb:
            if pb_medians:
                median = statistics.median(pb_medians)
                row["pathbench"] = {"status": "ok", "id": cases[0]["id"], "gb_per_s": median,
                                    "rounds": pb_medians, "ratio": median / row["fio_gb_per_s"]}
            elif cases:
                row["pathbench"] = {"status": cases[0].get("status"), "id": cases[0]["id"],
                                    "reason": cases[0].get("reason", "")}
            else:
                row["pathbench"] = {"status": "absent"}
        rows.append(row)

summary = {"schema": "pathbench.fio_storage_reference/v1", "fio_version": version,
           "storage_dir": os.path.abspath(folder), "fs_type": fs_type, "file_bytes": int(size),
           "ioengine": engine, "loops": int(loops), "rounds": rounds,
           "unit": "GB/s (1e9 bytes per second)", "settings": rows}
if with_pb:
    print(f"{'qd':>3} {'bs':>5} {'fio GB/s':>9} {'pathbench GB/s':>15} {'ratio':>6}"
          + (f"  (medians of {rounds} rounds)" if rounds > 1 else ""))
    for row in rows:
        pb = row["pathbench"]
        figure = f"{pb['gb_per_s']:15.3f} {pb['ratio']:6.2f}" if pb["status"] == "ok" else \
            f"  {pb['status']}: {pb.get('reason', '')}"
        print(f"{row['queue_depth']:>3} {row['bs']:>5} {row['fio_gb_per_s']:9.3f} {figure}")
    fio_best = max(rows, key=lambda r: r["fio_gb_per_s"])
    measured = [r for r in rows if r["pathbench"]["status"] == "ok"]
    if measured:
        pb_best = max(measured, key=lambda r: r["pathbench"]["gb_per_s"])
        best = {"fio_gb_per_s": fio_best["fio_gb_per_s"],
                "fio_setting": {"queue_depth": fio_best["queue_depth"],
                                "block_size": fio_best["block_size"]},
                "pathbench_gb_per_s": pb_best["pathbench"]["gb_per_s"],
                "pathbench_setting": {"queue_depth": pb_best["queue_depth"],
                                      "block_size": pb_best["block_size"]},
                "ratio": pb_best["pathbench"]["gb_per_s"] / fio_best["fio_gb_per_s"]}
        summary["best"] = best
        print(f"best: fio {best['fio_gb_per_s']:.3f} (qd {fio_best['queue_depth']} bs "
              f"{fio_best['bs']}), pathbench {best['pathbench_gb_per_s']:.3f} (qd "
              f"{pb_best['queue_depth']} bs {pb_best['bs']}): ratio {best['ratio']:.2f}")
for row in rows:
    del row["bs"]
write_atomically(out, summary)
base = out[:-5] if out.endswith(".json") else out
for r, document in merged.items():
    write_atomically(base + (".pathbench.json" if r == 1 else f".pathbench.round{r}.json"),
                     document)
print(f"summary: {out}", file=sys.stderr)
EOF
((pb_status == 0 || pb_status == 2)) || exit 1
