#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pathbench {

// What the GPU actually did, as CUPTI's activity records tell it (or a recorded fixture). Times
// are GPU timestamps in nanoseconds (CUPTI's clock); only differences matter.
enum class ActivityKind {
  kMemcpy,  // a copy on a copy engine (or staged by the driver)
  kMemset,
  kKernel,
  kSynchronization,  // a host wait (stream/event/context synchronize), on the CPU side
  kNvtxRange,        // an NVTX push/pop range of the `pathbench` domain (CPU side)
  kUnifiedMemory,    // a unified-memory counter record (page-fault group, migration)
};
std::string_view to_string(ActivityKind k);

// Memory kinds the driver reports for each side of a copy (CUpti_ActivityMemoryKind).
enum class MemoryKind {
  kUnknown,
  kPageable,
  kPinned,
  kDevice,
  kArray,
  kManaged,
  kDeviceStatic,
  kManagedStatic
};
std::string_view to_string(MemoryKind k);

struct TimelineRecord {
  ActivityKind kind = ActivityKind::kKernel;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;       // CUPTI stream id (0 when not applicable)
  std::uint32_t correlation = 0;  // ties a GPU record to the API call that issued it
  std::string name;               // kernel name, NVTX text, UM counter name, sync type
  // kMemcpy / kMemset:
  std::string copy_kind;  // "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"
  MemoryKind src_kind = MemoryKind::kUnknown, dst_kind = MemoryKind::kUnknown;
  std::uint64_t bytes = 0;
  // kUnifiedMemory: the counter's value (bytes for transfers, fault count for fault groups).
  std::uint64_t value = 0;
};

struct Timeline {
  std::vector<TimelineRecord> records;
  std::uint64_t dropped_records = 0;  // CUPTI's own count; > 0 means the timeline is incomplete
  std::string unavailable_reason;     // why no timeline could be captured (empty when it was)
};

// What a timeline shows, computed from GPU-side records only (copies, memsets, kernels).
// - copy/kernel/busy seconds are unions of intervals (concurrent copies count once);
//   overlapped_copy_seconds is the part of the copy union covered by the kernel union, whatever
//   the streams (a copy on stream 14 under a kernel on stream 13 counts).
// - idle gaps: the gaps between consecutive intervals of the busy union (copies, memsets and
//   kernels together), strictly longer than the threshold; only inside the span.
// - copies_by_source_kind: memcpy records counted by to_string(src_kind).
// - streams: distinct (device, stream) pairs that carry a copy, memset or kernel.
// - unified memory: records of kind kUnifiedMemory add their `value` by name:
//     "gpu_page_fault_groups" or any name containing "GPU_PAGE_FAULT"
//                                                -> unified_memory_fault_groups
//     "bytes_transfer_htod" or containing "BYTES_TRANSFER_HTOD" -> unified_memory_bytes_h2d
//     "bytes_transfer_dtoh" or containing "BYTES_TRANSFER_DTOH" -> unified_memory_bytes_d2h
//     "bytes_transfer_dtod" or containing "BYTES_TRANSFER_DTOD" -> unified_memory_bytes_d2d
//   (the upper-case forms are CUPTI's CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_* names);
//   other counters (the capture's "cpu_page_fault_count", "thrashing", "throttling",
//   "remote_map", ...) are kept in the timeline but not summed.
// - complete: dropped_records == 0.
struct TimelineAnalysis {
  std::size_t copies = 0, kernels = 0, memsets = 0;
  std::uint64_t copy_bytes = 0;
  double copy_seconds = 0;             // union of copy intervals
  double kernel_seconds = 0;           // union of kernel intervals
  double overlapped_copy_seconds = 0;  // copy time during which some kernel also ran
  double overlap_fraction = 0;         // overlapped_copy_seconds / copy_seconds (0 without copies)
  double span_seconds = 0;             // first GPU start to last GPU end
  double busy_seconds = 0;             // union of all GPU activity
  std::size_t idle_gaps = 0;           // gaps longer than the threshold between GPU activities
  double idle_gap_seconds = 0, longest_idle_gap_seconds = 0;
  std::map<std::string, std::size_t> copies_by_source_kind;  // "pageable" -> 12
  std::size_t streams = 0;                                   // distinct streams with GPU work
  std::size_t unified_memory_fault_groups = 0;
  std::uint64_t unified_memory_bytes_h2d = 0, unified_memory_bytes_d2h = 0;
  std::uint64_t unified_memory_bytes_d2d = 0;  // GPU to GPU
  bool complete = true;                        // false when CUPTI dropped records
};

TimelineAnalysis analyze_timeline(const Timeline& timeline, double idle_gap_threshold_s = 5e-6);

// Copies against host-side work in the same timeline: how much of the copy time ran while some
// NVTX range named `range_name` was open (e.g. the storage reader's "pread" ranges, on any
// thread), and how much came after the last of those ranges had closed — the copies nothing
// hid. Copies are memcpy records of `copy_kind` ("HtoD"); both sides are unions of intervals, in
// the timeline's one clock (CUPTI stamps NVTX ranges and GPU records alike).
struct RangeCopyOverlap {
  std::size_t ranges = 0, copies = 0;
  double range_seconds = 0;  // union of the ranges
  double copy_seconds = 0;   // union of the copies
  double copy_during_ranges_seconds = 0;
  double copy_after_last_range_seconds = 0;
  double hidden_fraction = 0;  // copy_during_ranges / copy_seconds (0 without copies)
};
RangeCopyOverlap copies_under_ranges(const Timeline& timeline, std::string_view range_name,
                                     std::string_view copy_kind = "HtoD");

// Chrome trace-event JSON (opens in Perfetto UI and chrome://tracing): one track per stream for
// copies, memsets and kernels, NVTX ranges and synchronisations on a host track, microsecond
// timestamps relative to the first record, metadata (process/thread names, dropped records).
//   {"traceEvents": [...], "displayTimeUnit": "ns",
//    "otherData": {"title", "dropped_records", "unavailable_reason", "time_origin_ns"}}
// GPU work: "X" events, pid = device ("GPU <n>"), tid = stream ("stream <id>"), cat "copy" |
// "memset" | "kernel"; a copy is named "HtoD 256 MiB (pinned→device)" and its args carry bytes,
// copy_kind, src_kind, dst_kind, correlation (and the record's name, when it has one, as
// "detail"). Host: pid kChromeTraceHostPid ("host"), NVTX
// ranges (cat "nvtx") on tid kChromeTraceNvtxTid, synchronisations (cat "sync") on
// tid kChromeTraceSyncTid. Unified-memory counters: "C" events (cat "um") on the device's pid,
// the running total of each counter name. Every event has name, ph, ts, pid and tid ("M"
// metadata events at ts 0). Events are sorted by ts after the metadata.
inline constexpr int kChromeTraceHostPid = 1000000;
inline constexpr int kChromeTraceNvtxTid = 1;
inline constexpr int kChromeTraceSyncTid = 2;
nlohmann::ordered_json chrome_trace(const Timeline& timeline, const std::string& title);

// JSON form of a timeline (for fixtures) and back; throws std::invalid_argument on bad input,
// naming the field by its JSON pointer ("timeline: /records/3/end_ns: ...").
//   {"schema": "pathbench.timeline/v1", "dropped_records": 0, "unavailable_reason": "",
//    "records": [{"kind": "memcpy", "start_ns", "end_ns", "device", "stream", "correlation",
//                 "name", "copy_kind", "src_kind", "dst_kind", "bytes", "value"}, ...]}
// kind and memory kinds are the to_string() names. to_json writes copy_kind/src_kind/dst_kind/
// bytes for memcpy, dst_kind/bytes for memset, value for unified_memory, and any other field that
// is not at its default. The reader requires kind, start_ns and end_ns (end_ns >= start_ns);
// every other field is optional; unknown fields, wrong types, negative or fractional numbers,
// values that do not fit and unknown enum names are rejected. "schema", when present, must be
// "pathbench.timeline/v1".
inline constexpr const char* kTimelineSchema = "pathbench.timeline/v1";
nlohmann::ordered_json to_json(const Timeline& timeline);
Timeline timeline_from_json(const nlohmann::json& j);

}  // namespace pathbench
