#!/usr/bin/env bash
# An independent reference for the storage family's queue_depth axis: fio reads a file in a
# folder with O_DIRECT at the queue depths and block sizes given (default 1, 4, 16 x 128k, 1m: the
# settings of the scenario storage-queue-depth), so that pathbench's odirect_pinned figure can be
# set beside what the disk gives a tool that shares no code with it. Not part of pathbench.
#
#   scripts/reference/fio_storage.sh --storage-dir DIR [--size SIZE] [--queue-depths LIST]
#                                    [--block-sizes LIST] [--ioengine ENGINE] [--models LIST]
#                                    [--buffers LIST] [--loops N] [--rounds N] [--out FILE]
#                                    [--with-pathbench] [--pathbench-repetitions N]
#                                    [--staging-memories LIST] [--readers LIST] [--keep-file]
#
#   --storage-dir DIR  the folder to measure (the one given to `pathbench run --storage-dir`), on
#                      a disk file system (tmpfs has no O_DIRECT); a test file is written there
#                      and removed at the end (unless --keep-file)
#   --size SIZE        the test file's size, as fio (and with --with-pathbench pathbench) reads
#                      it: digits and K, M or G (powers of 1024), at least 1M; default 1G, the
#                      size of pathbench's storage-queue-depth cases
#   --queue-depths LIST  the reads in flight, comma-separated integers in [1, 256] (default
#                      1,4,16; e.g. 1,4,16,32,64 for an NVMe stripe)
#   --block-sizes LIST the bytes per read, comma-separated, digits followed by k or m (KiB, MiB),
#                      each a multiple of 4k and at most the file's size (default 128k,1m)
#   --ioengine ENGINE  the aio model's engine: libaio (default) or io_uring
#   --models LIST      how fio keeps QD reads in flight, comma-separated (default aio,threads):
#                        aio      one job submits QD asynchronous reads (ENGINE --iodepth=QD):
#                                 how pathbench's aio reader keeps its queue
#                        threads  QD threads, one synchronous read each (psync --numjobs=QD
#                                 --thread, each thread reading its own 1/QD of the file): how
#                                 pathbench's threads reader does. On a multi-queue disk
#                                 (virtio-blk, NVMe) reads submitted from several CPUs can spread
#                                 over several hardware queues where one job's stay on one
#   --buffers LIST     the memory fio reads into, comma-separated (default small,huge):
#                        small    fio's default buffers (--iomem=malloc, 4 KiB pages): a 1 MiB
#                                 O_DIRECT read is a request of 256 page segments, which a disk
#                                 with few segments per request (virtio's max_segments) splits
#                        huge     --iomem=shmhuge: SysV shared memory in hugetlb pages (2 MiB),
#                                 a read of few segments. Needs reserved huge pages (/proc/meminfo
#                                 HugePages_Free - HugePages_Rsvd): for the default 1G file 32 of
#                                 2 MiB (16 threads x (1 MiB rounded up to a page + 1 page)); with
#                                 too few (or where fio may not use them: not root), a --buffers
#                                 naming huge is refused (exit 3, saying how to reserve them) and
#                                 the default leaves huge out with a note (the summary's
#                                 buffers_skipped)
#                      fio runs once per model and buffers (a variant, e.g. aio/huge) at each
#                      setting; fio's figure for a setting is its best variant's median (all kept)
#   --loops N          times fio reads the whole file per setting (default 3)
#   --rounds N         times every setting is measured, fio and pathbench in turn (default 1):
#                      a disk whose rate drifts from minute to minute (a shared or virtual one)
#                      then moves both alike, and the figures compared are medians over rounds;
#                      with --with-pathbench, even rounds run pathbench before fio at each
#                      setting (whatever one run leaves the disk then falls on each tool alike),
#                      the table's "paired" column is the median over rounds of pathbench's
#                      best over fio's best at that setting in the same round (seconds apart, so
#                      the drift between rounds cancels out), a line gives each round's best
#                      against best, and the last line gives each best's drift between rounds
#                      ((max - min) / median) and says when the gap to fio is within it
#   --out FILE         the JSON summary (default ./fio_storage.json), written atomically after
#                      every round (a run stopped in round N keeps the medians of the rounds
#                      before it: "rounds" says how many, "rounds_asked" how many were asked for)
#   --with-pathbench   write a scenario of fio's settings (one scenario, fio-reference: family
#                      storage, method odirect_pinned, bytes the file's size, cache cold, chunk
#                      the block sizes, queue_depth the depths, staging_memory the
#                      --staging-memories, reader the --readers) and right after fio at each
#                      setting (before it in even rounds) run `pathbench run SCENARIO --filter
#                      '/chunk=BS/queue_depth=QD/staging_memory=[a-z0-9-]+/reader=[a-z]+$'
#                      --storage-dir DIR`: that setting's cases, one per staging memory and reader
#                      (a variant, e.g. pinned/aio; pinned: the slots in cudaHostAlloc'd memory;
#                      registered-4k, registered-thp, registered-hugetlb: one region of those
#                      pages), and print their medians beside fio's, the best one's ratio to fio's
#                      best, and both tools' best settings. pathbench refuses a queue depth above
#                      the file's chunk count (SIZE / BS, rounded up), and so does this script
#                      with it; DIR needs room for pathbench's file of SIZE too. The scenario and
#                      pathbench's results are kept beside the summary (FILE with .scenario.json,
#                      to rerun it; .pathbench.json: round 1, .pathbench.round2.json ...)
#   --pathbench-repetitions N  with --with-pathbench: the scenario's repetitions (samples per
#                      case, default 5), to keep a round short
#   --staging-memories LIST  with --with-pathbench: the staging memories of pathbench's cases,
#                      comma-separated, of pinned, registered-4k, registered-thp,
#                      registered-hugetlb (default all four)
#   --readers LIST     with --with-pathbench: how pathbench's reader keeps queue_depth reads in
#                      flight, comma-separated (default threads,aio):
#                        threads  queue_depth threads, one synchronous pread each
#                        aio      Linux native AIO: the measuring thread keeps them in flight with
#                                 io_submit / io_getevents (as fio's libaio engine, the aio model)
#   --keep-file        leave the test file in DIR
#
# Each setting drops the file's pages first (fio --invalidate=1; O_DIRECT bypasses the cache
# anyway) and runs fio --direct=1 --rw=read --bs=BS --output-format=json once per variant; the
# line printed is "qd QD bs BS GB/s X (aio/small A, aio/huge B, threads/small C, threads/huge D)"
# (GB = 1e9 bytes): fio's read bandwidth over all loops, X its best variant's; with
# --with-pathbench "  pathbench GB/s Y (pinned/threads P, pinned/aio Q, registered-4k/threads R,
# ...)" under it: each variant's median (staging memory/reader), Y the best (a case that did not
# run: "registered-hugetlb/aio skipped"). A variant whose staging slots lay in more than one run
# of physically contiguous pages (the median over its slots, direct_io's slot_page_runs_median;
# known when pathbench runs as root) gets "[N runs per slot]": a read into such a slot gathers one
# segment per run, which a disk of few segments per request (virtio's, NVMe's max_segments)
# splits. `pinned` slots lie in whatever pages the driver hands out: many runs when a case freed
# pinned slots just before (the README's staging memory paragraph).
# A file of fewer than QD blocks is read by one thread per block in the threads model.
# Environment: FIO (default fio), PATHBENCH (default build/release/pathbench), PYTHON (default
# python3, which reads fio's and pathbench's JSON).
# Exit: 0 done; 1 fio or pathbench failed; 3 bad input or usage (the message says which).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
fio="${FIO:-fio}"
pathbench="${PATHBENCH:-$root/build/release/pathbench}"
python="${PYTHON:-python3}"
me="fio_storage.sh"

chunk_of() {  # 128k -> 131072
  case "$1" in *k) echo $((${1%k} * 1024)) ;; *m) echo $((${1%m} * 1024 * 1024)) ;; esac
}
usage() { awk 'NR < 7 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; }
bad() {
  echo "$me: $*" >&2
  echo "  (scripts/reference/fio_storage.sh --help for the options)" >&2
  exit 3
}

dir="" size="1G" engine="libaio" models_arg="aio,threads" buffers_arg="small,huge" loops=3
rounds=1 out="fio_storage.json" with_pathbench=0 pb_repetitions="" keep=0 buffers_named=0
depths_arg="1,4,16" block_sizes_arg="128k,1m" memories_arg="" memories_named=0
readers_arg="" readers_named=0
while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --storage-dir|--size|--ioengine|--models|--buffers|--loops|--rounds|--out|\
      --pathbench-repetitions|--queue-depths|--block-sizes|--staging-memories|--readers)
      (($# > 1)) || bad "$1 needs a value"
      case "$1" in
        --storage-dir) dir="$2" ;;
        --size) size="$2" ;;
        --ioengine) engine="$2" ;;
        --models) models_arg="$2" ;;
        --buffers) buffers_arg="$2" buffers_named=1 ;;
        --loops) loops="$2" ;;
        --rounds) rounds="$2" ;;
        --out) out="$2" ;;
        --pathbench-repetitions) pb_repetitions="$2" ;;
        --queue-depths) depths_arg="$2" ;;
        --block-sizes) block_sizes_arg="$2" ;;
        --staging-memories) memories_arg="$2" memories_named=1 ;;
        --readers) readers_arg="$2" readers_named=1 ;;
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
# A comma-separated list of choices: the option, its value, the array to fill, the allowed
# values. A malformed list, a value not allowed and a value named twice are refused (exit 3).
choices() {
  local option="$1" value="$2"
  local -n into="$3"
  shift 3
  local allowed=("$@") listed="" either="" v a ok
  listed="$(printf '%s, ' "${allowed[@]}")" listed="${listed%, }"
  either="${listed%, *} or ${allowed[-1]}"
  [[ "$value" =~ ^[^,]+(,[^,]+)*$ ]] ||
    bad "$option '$value' is not a comma-separated list of $listed"
  IFS=, read -r -a into <<<"$value"
  local -A seen=()
  for v in "${into[@]}"; do
    ok=0
    for a in "${allowed[@]}"; do [[ "$v" == "$a" ]] && ok=1; done
    ((ok)) || bad "$option '$value': '$v' is not $either"
    [[ -z "${seen[$v]:-}" ]] || bad "$option '$value' names $v twice"
    seen[$v]=1
  done
}
models=() buffers=() staging_memories=() readers=()  # filled by choices
choices --models "$models_arg" models aio threads
choices --buffers "$buffers_arg" buffers small huge
[[ "$loops" =~ ^[1-9][0-9]{0,3}$ ]] || bad "--loops '$loops' is not an integer in [1, 9999]"
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || bad "--rounds '$rounds' is not an integer in [1, 99]"
if [[ -n "$pb_repetitions" ]]; then
  [[ "$pb_repetitions" =~ ^([1-9][0-9]{0,4}|100000)$ ]] ||
    bad "--pathbench-repetitions '$pb_repetitions' is not an integer in [1, 100000]"
  ((with_pathbench)) || bad "--pathbench-repetitions needs --with-pathbench"
fi
[[ "$depths_arg" =~ ^[^,]+(,[^,]+)*$ ]] ||
  bad "--queue-depths '$depths_arg' is not a comma-separated list of integers in [1, 256]"
IFS=, read -r -a queue_depths <<<"$depths_arg"
declare -A named_depths=()
for qd in "${queue_depths[@]}"; do
  if [[ ! "$qd" =~ ^[1-9][0-9]{0,2}$ ]] || ((qd > 256)); then
    bad "--queue-depths '$depths_arg': '$qd' is not an integer in [1, 256]"
  fi
  [[ -z "${named_depths[$qd]:-}" ]] || bad "--queue-depths '$depths_arg' names $qd twice"
  named_depths[$qd]=1
done
[[ "$block_sizes_arg" =~ ^[^,]+(,[^,]+)*$ ]] ||
  bad "--block-sizes '$block_sizes_arg' is not a comma-separated list of sizes such as 128k, 1m"
IFS=, read -r -a block_sizes <<<"$block_sizes_arg"
declare -A named_sizes=()  # bytes -> the name given (1024k and 1m are one size)
for bs in "${block_sizes[@]}"; do
  [[ "$bs" =~ ^[1-9][0-9]{0,6}[km]$ ]] ||
    bad "--block-sizes '$block_sizes_arg': '$bs' is not digits followed by k or m (e.g. 128k, 1m)"
  chunk=$(chunk_of "$bs")
  ((chunk % 4096 == 0)) ||
    bad "--block-sizes '$block_sizes_arg': '$bs' is not a multiple of 4k (O_DIRECT's block)"
  if [[ "${named_sizes[$chunk]:-}" == "$bs" ]]; then
    bad "--block-sizes '$block_sizes_arg' names $bs twice"
  elif [[ -n "${named_sizes[$chunk]:-}" ]]; then
    bad "--block-sizes '$block_sizes_arg' names one size twice: ${named_sizes[$chunk]} and $bs"
  fi
  named_sizes[$chunk]="$bs"
done
((memories_named && !with_pathbench)) && bad "--staging-memories needs --with-pathbench"
((memories_named)) || memories_arg="pinned,registered-4k,registered-thp,registered-hugetlb"
choices --staging-memories "$memories_arg" staging_memories \
  pinned registered-4k registered-thp registered-hugetlb
((readers_named && !with_pathbench)) && bad "--readers needs --with-pathbench"
((readers_named)) || readers_arg="threads,aio"
choices --readers "$readers_arg" readers threads aio
[[ -e "$out" && ! -f "$out" ]] && bad "--out '$out' exists and is not a regular file"
out_dir="$(dirname -- "$out")"
[[ -d "$out_dir" && -w "$out_dir" ]] || bad "--out '$out': the folder '$out_dir' is not writable"

case "${size: -1}" in
  K) bytes=$((${size%K} * 1024)) ;;
  M) bytes=$((${size%M} * 1024 * 1024)) ;;
  G) bytes=$((${size%G} * 1024 * 1024 * 1024)) ;;
  *) bytes=$size ;;
esac
((bytes >= 1024 * 1024)) || bad "--size '$size' is under 1M, the smallest file pathbench reads"
((bytes % 4096 == 0)) || bad "--size '$size' is not a multiple of 4096 (O_DIRECT's block)"
for bs in "${block_sizes[@]}"; do
  chunk=$(chunk_of "$bs")
  ((chunk <= bytes)) ||
    bad "--block-sizes '$block_sizes_arg': '$bs' is larger than the --size '$size' file"
done
if ((with_pathbench)); then
  # What pathbench's storage family refuses at load, refused here before fio runs.
  ((bytes <= 64 * 1024 * 1024 * 1024)) ||
    bad "--size '$size' is over 64G, the largest file pathbench's storage family reads"
  for bs in "${block_sizes[@]}"; do
    chunk=$(chunk_of "$bs")
    ((chunk <= 1024 * 1024 * 1024)) ||
      bad "--block-sizes '$block_sizes_arg': '$bs' is over 1024m, pathbench's largest chunk"
    chunks=$(((bytes + chunk - 1) / chunk))
    for qd in "${queue_depths[@]}"; do
      ((qd <= chunks)) || bad "--queue-depths '$depths_arg': $qd reads in flight are more than" \
        "the $chunks chunks of --block-sizes $bs in the --size $size file ($bytes bytes), which" \
        "pathbench refuses; lower the depth or the block size, or raise --size"
    done
  done
fi

magic_name="$(stat -f -c %T -- "$dir")"
case "$magic_name" in
  tmpfs|ramfs) bad "--storage-dir '$dir' is on $magic_name, which keeps files in memory: O_DIRECT cannot read there" ;;
esac
# df names ext4 as such, where statfs's magic number says "ext2/ext3".
fs_type="$(df --output=fstype -- "$dir" 2>/dev/null | tail -n 1)" || fs_type=""
[[ -n "$fs_type" ]] || fs_type="$magic_name"
free=$(($(stat -f -c '%a * %S' -- "$dir")))
if ((with_pathbench)); then  # pathbench writes its own file of the same size beside fio's
  ((free > 2 * bytes + 256 * 1024 * 1024)) || bad "--storage-dir '$dir' has $((free / 1048576))" \
    "MiB free; the $size file and pathbench's of the same size need them plus 256 MiB"
else
  ((free > bytes + 256 * 1024 * 1024)) ||
    bad "--storage-dir '$dir' has $((free / 1048576)) MiB free; the $size file needs it plus 256 MiB"
fi

command -v "$python" >/dev/null 2>&1 || bad "$python is needed to read fio's JSON (set PYTHON)"
command -v "$fio" >/dev/null 2>&1 ||
  bad "fio ('$fio') is not installed or not on PATH (apt-get install fio, or set FIO=/path/to/fio)"
if ((with_pathbench)); then
  [[ -x "$pathbench" ]] || bad "$pathbench not found; build it (scripts/setup.sh) or set PATHBENCH"
fi

threads_of() {  # the threads model's thread count at depth $1, block $2 bytes: QD, or one per block
  local blocks=$((bytes / $2))
  echo $(($1 < blocks ? $1 : blocks))
}

# fio's huge-page buffers: SysV shm in hugetlb pages, which must be reserved. Each job's buffer
# (aio: QD x BS; threads: BS per thread) rounded up to the huge page, plus a page for fio's
# alignment, at the setting that needs the most; the variants run one after the other.
buffers_skipped=""
hugepage_bytes=0
if [[ " ${buffers[*]} " == *" huge "* ]]; then
  hugepage_kib="$(awk '$1 == "Hugepagesize:" { print $2 }' /proc/meminfo 2>/dev/null)" || true
  huge_reason=""
  if [[ ! "$hugepage_kib" =~ ^[1-9][0-9]*$ ]]; then
    huge_reason="this kernel has no huge pages (no Hugepagesize in /proc/meminfo)"
  else
    hugepage_bytes=$((hugepage_kib * 1024))
    read -r pages_total pages_free < <(awk '$1 == "HugePages_Total:" { t = $2 }
      $1 == "HugePages_Free:" { f = $2 } $1 == "HugePages_Rsvd:" { r = $2 }
      END { print t + 0, f - r }' /proc/meminfo)
    pages_needed=0 needed_at=""
    for qd in "${queue_depths[@]}"; do
      for bs in "${block_sizes[@]}"; do
        chunk=$(chunk_of "$bs")
        for model in "${models[@]}"; do
          if [[ "$model" == aio ]]; then
            jobs=1 buffer=$((qd * chunk))
          else
            jobs=$(threads_of "$qd" "$chunk") buffer=$chunk
          fi
          per_job=$(((buffer + hugepage_bytes - 1) / hugepage_bytes + 1))
          if ((jobs * per_job > pages_needed)); then
            pages_needed=$((jobs * per_job)) needed_at="$model qd $qd bs $bs: $jobs x $per_job"
          fi
        done
      done
    done
    if ((pages_free < pages_needed)); then
      # nr_hugepages: the persistent pool (HugePages_Total adds surplus pages to it).
      pool="$(cat /proc/sys/vm/nr_hugepages 2>/dev/null)" || pool=""
      [[ "$pool" =~ ^[0-9]+$ ]] || pool=$pages_total
      reserve=$((pool + pages_needed - pages_free))
      huge_reason="$pages_free huge pages of $hugepage_kib KiB are free (HugePages_Free"
      huge_reason+=" - HugePages_Rsvd), $pages_needed are needed ($needed_at); reserve them"
      huge_reason+=" as root: echo $reserve > /proc/sys/vm/nr_hugepages"
    elif ! probe="$("$fio" --name=hugepage-probe --ioengine=null --size="$hugepage_bytes" \
        --bs="$hugepage_bytes" --iomem=shmhuge --hugepage-size="$hugepage_bytes" \
        --output-format=json --output=/dev/null 2>&1)"; then
      # Free pages, but shmget(SHM_HUGETLB) refused: not root, no CAP_IPC_LOCK, not in
      # /proc/sys/vm/hugetlb_shm_group.
      probe="$(tr '\n' ' ' <<<"$probe" | sed 's/ *$//')"
      huge_reason="fio cannot allocate huge pages here ($probe); run as root or add the"
      huge_reason+=" user's group to /proc/sys/vm/hugetlb_shm_group"
    fi
  fi
  if [[ -n "$huge_reason" ]]; then
    ((buffers_named)) &&
      bad "--buffers '$buffers_arg': $huge_reason; or leave huge out of --buffers"
    echo "$me: note: leaving out fio's huge-page buffers (default --buffers small,huge):" \
      "$huge_reason" >&2
    buffers_skipped="$huge_reason"
    buffers=(small)
  fi
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/fio_storage.XXXXXX")"
file="$dir/fio-storage-reference.$$"
cleanup() {
  rm -rf -- "$work"
  ((keep)) || rm -f -- "$file"
}
trap cleanup EXIT

# pathbench's cases at fio's settings: the same file size, block sizes and depths; kept beside the
# summary by the summary's step.
scenario="$work/fio-reference.scenario.json"
if ((with_pathbench)); then
  "$python" - "$scenario" "$bytes" "$size" "${pb_repetitions:-5}" "${queue_depths[*]}" \
    "${block_sizes[*]}" "${staging_memories[*]}" "${readers[*]}" <<'EOF'
import json, sys
path, size, label, repetitions, qds, bss, memories, readers = sys.argv[1:]
units = {"k": 1024, "m": 1024 * 1024}
chunks = [int(bs[:-1]) * units[bs[-1]] for bs in bss.split()]
description = ("Written by scripts/reference/fio_storage.sh: O_DIRECT into staging slots at the "
               f"settings fio read (a cold {label} file of {size} bytes, queue depths "
               f"{', '.join(qds.split())}, block sizes {', '.join(bss.split())}), each staging "
               "memory and reader given")
document = {
    "schema": "pathbench.scenario/v1",
    "description": description,
    "scenarios": [{
        "name": "fio-reference",
        "description": description,
        "family": "storage",
        "repetitions": int(repetitions),
        "axes": {"method": ["odirect_pinned"], "bytes": [int(size)], "cache": ["cold"],
                 "chunk": chunks, "queue_depth": [int(qd) for qd in qds.split()],
                 "staging_memory": memories.split(), "reader": readers.split()},
    }],
}
with open(path, "w") as f:
    json.dump(document, f, indent=2)
    f.write("\n")
EOF
fi

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

# The summary: per setting and fio variant (model/buffers) the median over rounds of fio's rate,
# fio's best variant; per pathbench variant (staging memory/reader) its median over rounds, the
# best one's ratio to fio's best variant; each tool's best setting; pathbench's results merged per
# round beside it.
summarize() {  # summarize ROUNDS_DONE FINAL(0|1)
PYTHONPATH="$root/scripts/reference" "$python" - "$work" "$out" "$dir" "$fs_type" "$bytes" \
  "$engine" "$loops" "$1" "$rounds" "$2" \
  "$with_pathbench" "$("$fio" --version)" "${queue_depths[*]}" "${block_sizes[*]}" \
  "${models[*]}" "${buffers[*]}" "$buffers_skipped" "$pb_repetitions" "${staging_memories[*]}" \
  "$scenario" "${readers[*]}" <<'EOF'
import json, os, statistics, sys, tempfile
from pathbench_variants import rank, slot_page_runs, variant
(work, out, folder, fs_type, size, engine, loops, rounds, rounds_asked, final, with_pb,
 version, qds,
 bss, models, buffers, buffers_skipped, pb_repetitions, memories, scenario, readers) = sys.argv[1:]
models, buffers = models.split(), buffers.split()
variants = [f"{m}/{b}" for m in models for b in buffers]
rounds, rounds_asked, final = int(rounds), int(rounds_asked), final == "1"
with_pb = with_pb == "1"
units = {"k": 1024, "m": 1024 * 1024}


def write_atomically(path, document):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".fio_storage.")
    with os.fdopen(fd, "w") as f:
        json.dump(document, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def drift(rates):
    """How far a figure moved between rounds: (max - min) / median of its rounds, None for one
    round (nothing to compare) or a median of 0."""
    middle = statistics.median(rates) if rates else 0
    return (max(rates) - min(rates)) / middle if len(rates) > 1 and middle > 0 else None


def percent(x):
    return f"{x * 100:.0f} %"


def pathbench_variants(cases):
    """Per variant (staging memory/reader, in pathbench_variants.rank's order): the
    median over rounds of its ok cases' medians, with each round's median runs of physically
    contiguous pages per slot (None where unknown), or the status and reason of its first case
    where none was ok."""
    grouped = {}
    for c in cases:
        grouped.setdefault(variant(c), []).append(c)
    result = {}
    for name in sorted(grouped, key=rank):
        ok = [c for c in grouped[name] if c.get("status") == "ok"]
        memory, reader = name.split("/")
        if ok:
            medians = [c["metrics"]["throughput"]["stats"]["median"] for c in ok]
            result[name] = {"status": "ok", "id": ok[0]["id"], "staging_memory": memory,
                            "reader": reader, "gb_per_s": statistics.median(medians),
                            "rounds": medians,
                            "slot_page_runs": [slot_page_runs(c) for c in ok]}
        else:
            first = grouped[name][0]
            result[name] = {"status": first.get("status"), "id": first.get("id"),
                            "staging_memory": memory, "reader": reader,
                            "reason": first.get("reason", "")}
    return result


def round_best(cases):
    """The highest median of the ok cases (one round of one setting, or of all), or None."""
    ok = [c["metrics"]["throughput"]["stats"]["median"] for c in cases if c.get("status") == "ok"]
    return max(ok) if ok else None


def paired(pathbench_bests, fio_bests):
    """Per round, pathbench's best over fio's best of the same round (the two read at most
    minutes apart, so a disk's drift between rounds cancels out); rounds without a pathbench
    figure are left out."""
    return [p / f for p, f in zip(pathbench_bests, fio_bests) if p is not None and f > 0]


rows, merged = [], {}
round_cases = {r: [] for r in range(1, rounds + 1)}  # every setting's cases, per round
round_fio = {r: 0.0 for r in range(1, rounds + 1)}  # fio's best rate over settings, per round
for qd in qds.split():
    for bs in bss.split():
        fio_rates, cases = {v: [] for v in variants}, []
        setting_round_cases = {}
        threads = 0
        for r in range(1, rounds + 1):
            for v in variants:
                name = f"read-r{r}-qd{qd}-bs{bs}-{v.replace('/', '-')}.json"
                job = json.load(open(os.path.join(work, name)))
                read = job["jobs"][0]["read"]
                fio_rates[v].append((read.get("bw_bytes") or read["bw"] * 1024) / 1e9)
                if v.startswith("threads/"):
                    threads = job["jobs"][0]["job options"]["numjobs"]
            if not with_pb:
                continue
            result = json.load(open(os.path.join(work, f"pathbench-r{r}-qd{qd}-bs{bs}.json")))
            merged.setdefault(r, {**result, "cases": []})["cases"].extend(result.get("cases", []))
            cases.extend(result.get("cases", []))
            setting_round_cases[r] = result.get("cases", [])
            round_cases[r].extend(result.get("cases", []))
        fio_round_best = [max(fio_rates[v][r - 1] for v in variants) for r in range(1, rounds + 1)]
        for r in range(1, rounds + 1):
            round_fio[r] = max(round_fio[r], fio_round_best[r - 1])
        fio = {v: {"gb_per_s": statistics.median(rates), "rounds": rates}
               for v, rates in fio_rates.items()}
        for v in variants:
            if v.startswith("threads/"):
                fio[v]["threads"] = int(threads)
        best_variant = max(fio, key=lambda v: fio[v]["gb_per_s"])
        row = {"queue_depth": int(qd), "block_size": int(bs[:-1]) * units[bs[-1]], "bs": bs,
               "fio_gb_per_s": fio[best_variant]["gb_per_s"], "fio_variant": best_variant,
               "fio_drift": drift(fio[best_variant]["rounds"]), "fio": fio}
        if with_pb:
            each = pathbench_variants(cases)
            ok = [v for v in each if each[v]["status"] == "ok"]
            if ok:
                best = max(ok, key=lambda v: each[v]["gb_per_s"])
                row["pathbench"] = {"status": "ok", "id": each[best]["id"],
                                    "gb_per_s": each[best]["gb_per_s"],
                                    "rounds": each[best]["rounds"],
                                    "drift": drift(each[best]["rounds"]),
                                    "ratio": each[best]["gb_per_s"] / row["fio_gb_per_s"],
                                    "variant": best,
                                    "staging_memory": each[best]["staging_memory"],
                                    "reader": each[best]["reader"]}
                pairs = paired([round_best(setting_round_cases[r]) for r in range(1, rounds + 1)],
                               fio_round_best)
                row["pathbench"]["paired_ratios"] = pairs
                row["pathbench"]["paired_ratio"] = statistics.median(pairs) if pairs else None
            elif cases:
                row["pathbench"] = {"status": cases[0].get("status"), "id": cases[0]["id"],
                                    "reason": cases[0].get("reason", "")}
            else:
                row["pathbench"] = {"status": "absent"}
            row["pathbench_variants"] = each
        rows.append(row)

summary = {"schema": "pathbench.fio_storage_reference/v2", "fio_version": version,
           "storage_dir": os.path.abspath(folder), "fs_type": fs_type, "file_bytes": int(size),
           "ioengine": engine, "models": models, "buffers": buffers,
           "buffers_skipped": {"huge": buffers_skipped} if buffers_skipped else {},
           "loops": int(loops), "rounds": rounds, "rounds_asked": rounds_asked,
           "queue_depths": [int(qd) for qd in qds.split()],
           "block_sizes": [int(bs[:-1]) * units[bs[-1]] for bs in bss.split()],
           "unit": "GB/s (1e9 bytes per second)", "settings": rows}
base = out[:-5] if out.endswith(".json") else out
if with_pb:
    summary["pathbench_repetitions"] = int(pb_repetitions) if pb_repetitions else None
    summary["staging_memories"] = memories.split()
    summary["readers"] = readers.split()
    summary["pathbench_scenario"] = os.path.abspath(base + ".scenario.json")
    widths = {v: max(11, len(v) + 4) for v in variants}
    show = print if final else (lambda *args, **kwargs: None)
    show(f"{'qd':>3} {'bs':>5} " + " ".join(f"{'fio ' + v:>{widths[v]}}" for v in variants)
          + f" {'pathbench':>10} {'ratio':>6}" + (f" {'paired':>6}" if rounds > 1 else "")
          + "  variant  (GB/s"
          + (f", medians of {rounds} rounds" if rounds > 1 else "")
          + "; pathbench: its best variant, staging memory/reader; ratio: to fio's best variant"
          + ("; paired: the median over rounds of the two bests' ratio within each round"
             if rounds > 1 else "") + ")")
    for row in rows:
        pb = row["pathbench"]
        pair = ""
        if rounds > 1 and pb["status"] == "ok":
            pair = f" {pb['paired_ratio']:6.2f}" if pb["paired_ratio"] is not None else f" {'-':>6}"
        figure = f"{pb['gb_per_s']:10.3f} {pb['ratio']:6.2f}{pair}  {pb['variant']}" \
            if pb["status"] == "ok" else f"  {pb['status']}: {pb.get('reason', '')}"
        each = " ".join(f"{row['fio'][v]['gb_per_s']:{widths[v]}.3f}" for v in variants)
        show(f"{row['queue_depth']:>3} {row['bs']:>5} {each} {figure}")
    fio_best = max(rows, key=lambda r: r["fio_gb_per_s"])
    measured = [r for r in rows if r["pathbench"]["status"] == "ok"]
    if measured:
        pb_best = max(measured, key=lambda r: r["pathbench"]["gb_per_s"])
        best = {"fio_gb_per_s": fio_best["fio_gb_per_s"],
                "fio_setting": {"queue_depth": fio_best["queue_depth"],
                                "block_size": fio_best["block_size"],
                                "variant": fio_best["fio_variant"]},
                "pathbench_gb_per_s": pb_best["pathbench"]["gb_per_s"],
                "pathbench_setting": {"queue_depth": pb_best["queue_depth"],
                                      "block_size": pb_best["block_size"],
                                      "staging_memory": pb_best["pathbench"]["staging_memory"],
                                      "reader": pb_best["pathbench"]["reader"]},
                "ratio": pb_best["pathbench"]["gb_per_s"] / fio_best["fio_gb_per_s"],
                "fio_drift": fio_best["fio_drift"],
                "pathbench_drift": pb_best["pathbench"]["drift"]}
        summary["best"] = best
        show(f"best: fio {best['fio_gb_per_s']:.3f} (qd {fio_best['queue_depth']} bs "
              f"{fio_best['bs']} {fio_best['fio_variant']}), pathbench "
              f"{best['pathbench_gb_per_s']:.3f} (qd {pb_best['queue_depth']} bs {pb_best['bs']} "
              f"{pb_best['pathbench']['variant']}): ratio {best['ratio']:.2f}")
        # A ratio is only as good as the disk is steady: say how far both bests moved between
        # rounds, and when the gap to fio is no wider than that. Within a round the two tools
        # read minutes apart at most, so the ratio of each round's bests is spared the drift
        # between rounds.
        if rounds > 1:
            pairs = paired([round_best(round_cases[r]) for r in range(1, rounds + 1)],
                           [round_fio[r] for r in range(1, rounds + 1)])
            best["round_ratios"] = pairs
            best["round_ratio"] = statistics.median(pairs) if pairs else None
            if pairs:
                show("per round, pathbench's best against fio's best of the same round: "
                     + ", ".join(f"{x:.2f}" for x in pairs)
                     + f" (median {best['round_ratio']:.2f})")
            widest = max(best["fio_drift"] or 0, best["pathbench_drift"] or 0)
            gap = abs(1 - best["ratio"])
            show(f"drift between rounds ((max - min) / median): fio's best "
                 f"{percent(best['fio_drift'] or 0)}, pathbench's best "
                 f"{percent(best['pathbench_drift'] or 0)}"
                 + (f"; the gap to fio ({percent(gap)}) is within it: more rounds or a quieter "
                    "disk tell the two apart" if gap <= widest else ""))
        else:
            show("one round: how far this disk drifts between minutes is not measured "
                 "(--rounds 3 or more on a shared or virtual disk)")
for row in rows:
    del row["bs"]
if with_pb:
    write_atomically(summary["pathbench_scenario"], json.load(open(scenario)))
write_atomically(out, summary)
for r, document in merged.items():
    write_atomically(base + (".pathbench.json" if r == 1 else f".pathbench.round{r}.json"),
                     document)
print(f"summary: {out}" if final else
      f"summary of round{'s 1 to' if rounds > 1 else ''} {rounds} of {rounds_asked}: {out}",
      file=sys.stderr)
EOF
}

# One setting's fio variants, each line printed as it ends.
read_with_fio() {  # read_with_fio ROUND QD BS CHUNK
  local round="$1" qd="$2" bs="$3" chunk="$4" model buffer json jobs part memory
  for model in "${models[@]}"; do
    for buffer in "${buffers[@]}"; do
      json="$work/read-r$round-qd$qd-bs$bs-$model-$buffer.json"
      if [[ "$buffer" == huge ]]; then
        memory=(--iomem=shmhuge --hugepage-size="$hugepage_bytes")
      else
        memory=(--iomem=malloc)
      fi
      if [[ "$model" == aio ]]; then
        fio_or_fail --name="read-qd$qd-bs$bs-aio-$buffer" --filename="$file" --rw=read \
          --direct=1 --invalidate=1 --ioengine="$engine" --iodepth="$qd" --bs="$bs" \
          "${memory[@]}" --size="$bytes" --loops="$loops" --numjobs=1 \
          --output-format=json --output="$json"
      else
        # Each thread reads its own whole blocks: bytes / jobs, cut to a multiple of BS.
        jobs=$(threads_of "$qd" "$chunk")
        part=$((bytes / jobs / chunk * chunk))
        fio_or_fail --name="read-qd$qd-bs$bs-threads-$buffer" --filename="$file" --rw=read \
          --direct=1 --invalidate=1 --ioengine=psync --iodepth=1 --bs="$bs" "${memory[@]}" \
          --thread --numjobs="$jobs" --size="$part" --offset_increment="$part" \
          --group_reporting --loops="$loops" --output-format=json --output="$json"
      fi
    done
  done
  "$python" - "$work/read-r$round-qd$qd-bs$bs" "$qd" "$bs" "${models[*]}" "${buffers[*]}" \
    <<'EOF'
import json, sys
stem, qd, bs, models, buffers = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
rates = {}
for model in models.split():
    for buffer in buffers.split():
        read = json.load(open(f"{stem}-{model}-{buffer}.json"))["jobs"][0]["read"]
        # bw: KiB/s in older fio
        rates[f"{model}/{buffer}"] = (read.get("bw_bytes") or read["bw"] * 1024) / 1e9
each = ", ".join(f"{v} {r:.3f}" for v, r in rates.items())
print(f"qd {qd:>3} bs {bs:>5} GB/s {max(rates.values()):.3f} ({each})")
EOF
}

# One setting's pathbench cases, their result written to PB (printed by pathbench_line).
read_with_pathbench() {  # read_with_pathbench PB QD CHUNK
  local pb="$1" qd="$2" chunk="$3" status=0
  # That setting's cases, one per staging memory and reader (the scenario has only fio's
  # settings).
  "$pathbench" run "$scenario" \
    --filter "/chunk=$chunk/queue_depth=$qd/staging_memory=[a-z0-9-]+/reader=[a-z]+\$" \
    --storage-dir "$dir" --out "$pb" >"$work/pathbench.log" 2>&1 || status=$?
  if [[ ! -f "$pb" ]]; then
    cat "$work/pathbench.log" >&2
    echo "$me: pathbench exited $status without a result" >&2
    exit 1
  fi
  ((status == 0 || status == 2)) || pb_status=$status
}

# The line under fio's: each pathbench variant's median (or each status and reason once).
pathbench_line() {  # pathbench_line PB
  PYTHONPATH="$root/scripts/reference" "$python" - "$1" <<'EOF'
import json, sys
from pathbench_variants import rank, slot_page_runs, variant, with_runs
cases = json.load(open(sys.argv[1])).get("cases", [])
by_variant = {}  # staging memory/reader -> its case (an ok one where there are several)
for c in cases:
    if variant(c) not in by_variant or c.get("status") == "ok":
        by_variant[variant(c)] = c
order = sorted(by_variant, key=rank)
rates = {v: by_variant[v]["metrics"]["throughput"]["stats"]["median"]
         for v in order if by_variant[v].get("status") == "ok"}
if rates:
    each = ", ".join(with_runs(v, f"{rates[v]:.3f}", slot_page_runs(by_variant[v])) if v in rates
                     else f"{v} {by_variant[v].get('status')}" for v in order)
    print(f"  pathbench GB/s {max(rates.values()):.3f} ({each})")
else:  # each status and reason once (the variants of a GPU-less node skip alike)
    said = [f"{c.get('status')}: {c.get('reason', '')}" for c in cases]
    print("  pathbench " + "; ".join(dict.fromkeys(said)))
EOF
}

pb_status=0
for ((round = 1; round <= rounds; round++)); do
  ((rounds == 1)) || echo "$me: round $round of $rounds" >&2
  for qd in "${queue_depths[@]}"; do
    for bs in "${block_sizes[@]}"; do
      chunk=$(chunk_of "$bs")
      pb="$work/pathbench-r$round-qd$qd-bs$bs.json"
      if ((with_pathbench && round % 2 == 0)); then
        # Even rounds read with pathbench first: whatever the run before leaves a disk (its
        # writes, a warmed or drained cache on the host of a virtual disk) then falls on each
        # tool in half the rounds, and the medians over an even number of rounds share it.
        read_with_pathbench "$pb" "$qd" "$chunk"
        read_with_fio "$round" "$qd" "$bs" "$chunk"
      else
        read_with_fio "$round" "$qd" "$bs" "$chunk"
        ((with_pathbench)) || continue
        read_with_pathbench "$pb" "$qd" "$chunk"
      fi
      pathbench_line "$pb"
    done
  done
  ((round == rounds)) || summarize "$round" 0
done
summarize "$rounds" 1
((pb_status == 0 || pb_status == 2)) || exit 1
