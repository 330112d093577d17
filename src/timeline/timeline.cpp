#include "timeline/timeline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "core/units.hpp"

namespace pathbench {

namespace {

using ojson = nlohmann::ordered_json;

constexpr std::array<std::pair<ActivityKind, std::string_view>, 6> kActivityNames = {{
    {ActivityKind::kMemcpy, "memcpy"},
    {ActivityKind::kMemset, "memset"},
    {ActivityKind::kKernel, "kernel"},
    {ActivityKind::kSynchronization, "synchronization"},
    {ActivityKind::kNvtxRange, "nvtx_range"},
    {ActivityKind::kUnifiedMemory, "unified_memory"},
}};

constexpr std::array<std::pair<MemoryKind, std::string_view>, 8> kMemoryNames = {{
    {MemoryKind::kUnknown, "unknown"},
    {MemoryKind::kPageable, "pageable"},
    {MemoryKind::kPinned, "pinned"},
    {MemoryKind::kDevice, "device"},
    {MemoryKind::kArray, "array"},
    {MemoryKind::kManaged, "managed"},
    {MemoryKind::kDeviceStatic, "device_static"},
    {MemoryKind::kManagedStatic, "managed_static"},
}};

bool is_gpu_work(ActivityKind k) {
  return k == ActivityKind::kMemcpy || k == ActivityKind::kMemset || k == ActivityKind::kKernel;
}

// ---------------------------------------------------------------------------------------------
// Interval arithmetic on [start, end) in nanoseconds.

using Interval = std::pair<std::uint64_t, std::uint64_t>;

// Sorted, disjoint, non-empty intervals covering the same time as the input.
std::vector<Interval> merge(std::vector<Interval> v) {
  std::erase_if(v, [](const Interval& i) { return i.second <= i.first; });
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

std::uint64_t total(const std::vector<Interval>& merged) {
  std::uint64_t sum = 0;
  for (const Interval& i : merged) sum += i.second - i.first;
  return sum;
}

// Length of the intersection of two merged interval sets.
std::uint64_t intersection(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::uint64_t sum = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::uint64_t lo = std::max(a[i].first, b[j].first);
    const std::uint64_t hi = std::min(a[i].second, b[j].second);
    if (hi > lo) sum += hi - lo;
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return sum;
}

// Division (not multiplication by 1e-9) is correctly rounded: 4'800'000 ns -> exactly 0.0048.
double seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// ---------------------------------------------------------------------------------------------
// Strict JSON reading.

[[noreturn]] void bad(const std::string& pointer, const std::string& what) {
  throw std::invalid_argument("timeline: " + (pointer.empty() ? std::string("/") : pointer) + ": " +
                              what);
}

std::string type_of(const nlohmann::json& v) {
  if (v.is_number_float()) return "a fractional number";
  if (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0)
    return "a negative number";
  return std::string("a ") + v.type_name();
}

std::uint64_t read_unsigned(const nlohmann::json& v, const std::string& pointer,
                            std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  std::uint64_t out = 0;
  if (v.is_number_unsigned()) {
    out = v.get<std::uint64_t>();
  } else if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    out = static_cast<std::uint64_t>(v.get<std::int64_t>());
  } else {
    bad(pointer, "expected a non-negative integer, got " + type_of(v));
  }
  if (out > max)
    bad(pointer, std::to_string(out) + " does not fit (max " + std::to_string(max) + ")");
  return out;
}

std::string read_string(const nlohmann::json& v, const std::string& pointer) {
  if (!v.is_string()) bad(pointer, std::string("expected a string, got a ") + v.type_name());
  return v.get<std::string>();
}

template <typename Enum, std::size_t N>
Enum read_enum(const nlohmann::json& v, const std::string& pointer,
               const std::array<std::pair<Enum, std::string_view>, N>& names) {
  const std::string s = read_string(v, pointer);
  for (const auto& [value, name] : names)
    if (name == s) return value;
  std::string allowed;
  for (const auto& [value, name] : names) {
    if (!allowed.empty()) allowed += ", ";
    allowed += name;
  }
  bad(pointer, "\"" + s + "\" is not one of: " + allowed);
}

// Rejects keys outside `allowed` (typos must not pass silently).
void check_keys(const nlohmann::json& object, const std::string& pointer,
                std::initializer_list<std::string_view> allowed) {
  for (const auto& item : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end())
      bad(pointer + "/" + item.key(), "unknown field");
  }
}

TimelineRecord read_record(const nlohmann::json& j, const std::string& pointer) {
  if (!j.is_object()) bad(pointer, std::string("expected an object, got a ") + j.type_name());
  check_keys(j, pointer,
             {"kind", "start_ns", "end_ns", "device", "stream", "correlation", "name", "copy_kind",
              "src_kind", "dst_kind", "bytes", "value"});
  for (const char* required : {"kind", "start_ns", "end_ns"}) {
    if (!j.contains(required)) bad(pointer + "/" + required, "missing");
  }
  constexpr std::uint64_t kMax32 = std::numeric_limits<std::uint32_t>::max();
  TimelineRecord r;
  r.kind = read_enum(j.at("kind"), pointer + "/kind", kActivityNames);
  r.start_ns = read_unsigned(j.at("start_ns"), pointer + "/start_ns");
  r.end_ns = read_unsigned(j.at("end_ns"), pointer + "/end_ns");
  if (r.end_ns < r.start_ns)
    bad(pointer + "/end_ns",
        std::to_string(r.end_ns) + " is before start_ns " + std::to_string(r.start_ns));
  if (j.contains("device"))
    r.device =
        static_cast<std::uint32_t>(read_unsigned(j.at("device"), pointer + "/device", kMax32));
  if (j.contains("stream"))
    r.stream =
        static_cast<std::uint32_t>(read_unsigned(j.at("stream"), pointer + "/stream", kMax32));
  if (j.contains("correlation"))
    r.correlation = static_cast<std::uint32_t>(
        read_unsigned(j.at("correlation"), pointer + "/correlation", kMax32));
  if (j.contains("name")) r.name = read_string(j.at("name"), pointer + "/name");
  if (j.contains("copy_kind")) r.copy_kind = read_string(j.at("copy_kind"), pointer + "/copy_kind");
  if (j.contains("src_kind"))
    r.src_kind = read_enum(j.at("src_kind"), pointer + "/src_kind", kMemoryNames);
  if (j.contains("dst_kind"))
    r.dst_kind = read_enum(j.at("dst_kind"), pointer + "/dst_kind", kMemoryNames);
  if (j.contains("bytes")) r.bytes = read_unsigned(j.at("bytes"), pointer + "/bytes");
  if (j.contains("value")) r.value = read_unsigned(j.at("value"), pointer + "/value");
  return r;
}

// ---------------------------------------------------------------------------------------------
// Chrome trace helpers.

double micros(std::uint64_t ns, std::uint64_t origin) {
  return ns >= origin ? static_cast<double>(ns - origin) / 1000.0
                      : -static_cast<double>(origin - ns) / 1000.0;
}

double duration_micros(const TimelineRecord& r) {
  return r.end_ns > r.start_ns ? static_cast<double>(r.end_ns - r.start_ns) / 1000.0 : 0.0;
}

std::string copy_event_name(const TimelineRecord& r) {
  const std::string kind = r.copy_kind.empty() ? std::string("copy") : r.copy_kind;
  return kind + " " + format_bytes(r.bytes) + " (" + std::string(to_string(r.src_kind)) + "\u2192" +
         std::string(to_string(r.dst_kind)) + ")";
}

ojson metadata(const char* what, int pid, std::int64_t tid, const std::string& name) {
  return ojson{{"name", what}, {"ph", "M"},  {"ts", 0},
               {"pid", pid},   {"tid", tid}, {"args", ojson{{"name", name}}}};
}

ojson sort_index(const char* what, int pid, std::int64_t tid, std::int64_t index) {
  return ojson{{"name", what}, {"ph", "M"},  {"ts", 0},
               {"pid", pid},   {"tid", tid}, {"args", ojson{{"sort_index", index}}}};
}

}  // namespace

std::string_view to_string(ActivityKind k) {
  for (const auto& [kind, name] : kActivityNames)
    if (kind == k) return name;
  return "unknown";
}

std::string_view to_string(MemoryKind k) {
  for (const auto& [kind, name] : kMemoryNames)
    if (kind == k) return name;
  return "unknown";
}

TimelineAnalysis analyze_timeline(const Timeline& timeline, double idle_gap_threshold_s) {
  TimelineAnalysis a;
  std::vector<Interval> copy_iv, kernel_iv, busy_iv;
  std::set<std::pair<std::uint32_t, std::uint32_t>> streams;
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max(), last = 0;
  for (const TimelineRecord& r : timeline.records) {
    const std::uint64_t end = std::max(r.start_ns, r.end_ns);  // a reversed record is empty
    if (is_gpu_work(r.kind)) {
      busy_iv.emplace_back(r.start_ns, end);
      streams.emplace(r.device, r.stream);
      first = std::min(first, r.start_ns);
      last = std::max(last, end);
    }
    switch (r.kind) {
      case ActivityKind::kMemcpy:
        ++a.copies;
        a.copy_bytes += r.bytes;
        copy_iv.emplace_back(r.start_ns, end);
        ++a.copies_by_source_kind[std::string(to_string(r.src_kind))];
        break;
      case ActivityKind::kMemset:
        ++a.memsets;
        break;
      case ActivityKind::kKernel:
        ++a.kernels;
        kernel_iv.emplace_back(r.start_ns, end);
        break;
      case ActivityKind::kUnifiedMemory:
        if (r.name == "gpu_page_fault_groups" || contains(r.name, "GPU_PAGE_FAULT")) {
          a.unified_memory_fault_groups += static_cast<std::size_t>(r.value);
        } else if (r.name == "bytes_transfer_htod" || contains(r.name, "BYTES_TRANSFER_HTOD")) {
          a.unified_memory_bytes_h2d += r.value;
        } else if (r.name == "bytes_transfer_dtoh" || contains(r.name, "BYTES_TRANSFER_DTOH")) {
          a.unified_memory_bytes_d2h += r.value;
        } else if (r.name == "bytes_transfer_dtod" || contains(r.name, "BYTES_TRANSFER_DTOD")) {
          a.unified_memory_bytes_d2d += r.value;
        }
        break;
      case ActivityKind::kSynchronization:
      case ActivityKind::kNvtxRange:
        break;
    }
  }
  const std::vector<Interval> copies = merge(std::move(copy_iv));
  const std::vector<Interval> kernels = merge(std::move(kernel_iv));
  const std::vector<Interval> busy = merge(std::move(busy_iv));
  a.copy_seconds = seconds(total(copies));
  a.kernel_seconds = seconds(total(kernels));
  const std::uint64_t overlapped = intersection(copies, kernels);
  a.overlapped_copy_seconds = seconds(overlapped);
  a.overlap_fraction = total(copies) > 0
                           ? static_cast<double>(overlapped) / static_cast<double>(total(copies))
                           : 0.0;
  a.span_seconds = last > first ? seconds(last - first) : 0.0;
  a.busy_seconds = seconds(total(busy));
  // The threshold in whole nanoseconds, so that a gap of exactly 5 us is not "longer" than 5e-6 s
  // through rounding.
  const double threshold_ns = std::max(0.0, std::round(idle_gap_threshold_s * 1e9));
  std::uint64_t idle_ns = 0, longest_ns = 0;
  for (std::size_t i = 1; i < busy.size(); ++i) {
    const std::uint64_t gap = busy[i].first - busy[i - 1].second;
    if (static_cast<double>(gap) > threshold_ns) {
      ++a.idle_gaps;
      idle_ns += gap;
      longest_ns = std::max(longest_ns, gap);
    }
  }
  a.idle_gap_seconds = seconds(idle_ns);
  a.longest_idle_gap_seconds = seconds(longest_ns);
  a.streams = streams.size();
  a.complete = timeline.dropped_records == 0;
  return a;
}

RangeCopyOverlap copies_under_ranges(const Timeline& timeline, std::string_view range_name,
                                     std::string_view copy_kind) {
  RangeCopyOverlap o;
  std::vector<Interval> range_iv, copy_iv;
  std::uint64_t last_range_end = 0;
  for (const TimelineRecord& r : timeline.records) {
    const std::uint64_t end = std::max(r.start_ns, r.end_ns);
    if (r.kind == ActivityKind::kNvtxRange && r.name == range_name) {
      ++o.ranges;
      range_iv.emplace_back(r.start_ns, end);
      last_range_end = std::max(last_range_end, end);
    } else if (r.kind == ActivityKind::kMemcpy && r.copy_kind == copy_kind) {
      ++o.copies;
      copy_iv.emplace_back(r.start_ns, end);
    }
  }
  const std::vector<Interval> ranges = merge(std::move(range_iv));
  const std::vector<Interval> copies = merge(std::move(copy_iv));
  const std::uint64_t copy_ns = total(copies);
  const std::uint64_t during = intersection(copies, ranges);
  std::uint64_t after = 0;
  if (!ranges.empty()) {
    for (const Interval& c : copies) {
      if (c.second > last_range_end) after += c.second - std::max(c.first, last_range_end);
    }
  }
  o.range_seconds = seconds(total(ranges));
  o.copy_seconds = seconds(copy_ns);
  o.copy_during_ranges_seconds = seconds(during);
  o.copy_after_last_range_seconds = seconds(after);
  o.hidden_fraction =
      copy_ns > 0 ? static_cast<double>(during) / static_cast<double>(copy_ns) : 0.0;
  return o;
}

ojson chrome_trace(const Timeline& timeline, const std::string& title) {
  std::uint64_t origin = std::numeric_limits<std::uint64_t>::max();
  for (const TimelineRecord& r : timeline.records) origin = std::min(origin, r.start_ns);
  if (timeline.records.empty()) origin = 0;

  std::set<std::uint32_t> devices;
  std::set<std::pair<std::uint32_t, std::uint32_t>> streams;  // (device, stream) with GPU work
  bool has_nvtx = false, has_sync = false;
  // Events with their sort key (ts, then record order).
  std::vector<std::pair<double, ojson>> events;
  std::map<std::pair<std::uint32_t, std::string>, std::uint64_t> counter_totals;

  for (const TimelineRecord& r : timeline.records) {
    const double ts = micros(r.start_ns, origin);
    const int pid = static_cast<int>(r.device);
    switch (r.kind) {
      case ActivityKind::kMemcpy:
      case ActivityKind::kMemset:
      case ActivityKind::kKernel: {
        devices.insert(r.device);
        streams.emplace(r.device, r.stream);
        ojson e;
        ojson args;
        if (r.kind == ActivityKind::kMemcpy) {
          e["name"] = copy_event_name(r);
          e["cat"] = "copy";
          args["bytes"] = r.bytes;
          args["copy_kind"] = r.copy_kind;
          args["src_kind"] = to_string(r.src_kind);
          args["dst_kind"] = to_string(r.dst_kind);
        } else if (r.kind == ActivityKind::kMemset) {
          e["name"] = "memset " + format_bytes(r.bytes);
          e["cat"] = "memset";
          args["bytes"] = r.bytes;
          args["dst_kind"] = to_string(r.dst_kind);
        } else {
          e["name"] = r.name.empty() ? std::string("kernel") : r.name;
          e["cat"] = "kernel";
        }
        // A copy's own name (a peer copy's "device 0 -> device 1") goes with the details.
        if (r.kind != ActivityKind::kKernel && !r.name.empty()) args["detail"] = r.name;
        args["correlation"] = r.correlation;
        args["stream"] = r.stream;
        e["ph"] = "X";
        e["ts"] = ts;
        e["dur"] = duration_micros(r);
        e["pid"] = pid;
        e["tid"] = r.stream;
        e["args"] = std::move(args);
        events.emplace_back(ts, std::move(e));
        break;
      }
      case ActivityKind::kNvtxRange:
      case ActivityKind::kSynchronization: {
        const bool nvtx = r.kind == ActivityKind::kNvtxRange;
        (nvtx ? has_nvtx : has_sync) = true;
        ojson args{{"correlation", r.correlation}};
        if (!nvtx) args["stream"] = r.stream;
        ojson e{{"name", r.name.empty() ? std::string(nvtx ? "range" : "synchronization") : r.name},
                {"cat", nvtx ? "nvtx" : "sync"},
                {"ph", "X"},
                {"ts", ts},
                {"dur", duration_micros(r)},
                {"pid", kChromeTraceHostPid},
                {"tid", nvtx ? kChromeTraceNvtxTid : kChromeTraceSyncTid},
                {"args", std::move(args)}};
        events.emplace_back(ts, std::move(e));
        break;
      }
      case ActivityKind::kUnifiedMemory: {
        devices.insert(r.device);
        const std::string name = r.name.empty() ? std::string("unified_memory") : r.name;
        std::uint64_t& running = counter_totals[{r.device, name}];
        running += r.value;
        ojson e{{"name", name},
                {"cat", "um"},
                {"ph", "C"},
                {"ts", ts},
                {"pid", pid},
                {"tid", r.stream},
                {"args", ojson{{"total", running}, {"value", r.value}}}};
        events.emplace_back(ts, std::move(e));
        break;
      }
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });

  ojson trace = ojson::array();
  const bool has_host = has_nvtx || has_sync;
  if (has_host) {
    trace.push_back(metadata("process_name", kChromeTraceHostPid, 0, "host"));
    trace.push_back(sort_index("process_sort_index", kChromeTraceHostPid, 0, -1));
    if (has_nvtx)
      trace.push_back(
          metadata("thread_name", kChromeTraceHostPid, kChromeTraceNvtxTid, "NVTX pathbench"));
    if (has_sync)
      trace.push_back(
          metadata("thread_name", kChromeTraceHostPid, kChromeTraceSyncTid, "synchronization"));
  }
  for (std::uint32_t d : devices) {
    trace.push_back(metadata("process_name", static_cast<int>(d), 0, "GPU " + std::to_string(d)));
    trace.push_back(sort_index("process_sort_index", static_cast<int>(d), 0, d));
  }
  for (const auto& [device, stream] : streams) {
    trace.push_back(metadata("thread_name", static_cast<int>(device), stream,
                             "stream " + std::to_string(stream)));
    trace.push_back(sort_index("thread_sort_index", static_cast<int>(device), stream, stream));
  }
  for (auto& [ts, e] : events) trace.push_back(std::move(e));

  return ojson{{"traceEvents", std::move(trace)},
               {"displayTimeUnit", "ns"},
               {"otherData", ojson{{"title", title},
                                   {"dropped_records", timeline.dropped_records},
                                   {"unavailable_reason", timeline.unavailable_reason},
                                   {"time_origin_ns", origin}}}};
}

ojson to_json(const Timeline& timeline) {
  ojson records = ojson::array();
  for (const TimelineRecord& r : timeline.records) {
    const bool copy = r.kind == ActivityKind::kMemcpy;
    const bool memset = r.kind == ActivityKind::kMemset;
    ojson j{{"kind", to_string(r.kind)},
            {"start_ns", r.start_ns},
            {"end_ns", r.end_ns},
            {"device", r.device},
            {"stream", r.stream},
            {"correlation", r.correlation},
            {"name", r.name}};
    if (copy || !r.copy_kind.empty()) j["copy_kind"] = r.copy_kind;
    if (copy || r.src_kind != MemoryKind::kUnknown) j["src_kind"] = to_string(r.src_kind);
    if (copy || memset || r.dst_kind != MemoryKind::kUnknown) j["dst_kind"] = to_string(r.dst_kind);
    if (copy || memset || r.bytes != 0) j["bytes"] = r.bytes;
    if (r.kind == ActivityKind::kUnifiedMemory || r.value != 0) j["value"] = r.value;
    records.push_back(std::move(j));
  }
  return ojson{{"schema", kTimelineSchema},
               {"dropped_records", timeline.dropped_records},
               {"unavailable_reason", timeline.unavailable_reason},
               {"records", std::move(records)}};
}

Timeline timeline_from_json(const nlohmann::json& j) {
  if (!j.is_object()) bad("", std::string("expected an object, got a ") + j.type_name());
  check_keys(j, "", {"schema", "dropped_records", "unavailable_reason", "records"});
  if (j.contains("schema")) {
    const std::string schema = read_string(j.at("schema"), "/schema");
    if (schema != kTimelineSchema)
      bad("/schema", "\"" + schema + "\" is not " + std::string(kTimelineSchema));
  }
  Timeline t;
  if (j.contains("dropped_records"))
    t.dropped_records = read_unsigned(j.at("dropped_records"), "/dropped_records");
  if (j.contains("unavailable_reason"))
    t.unavailable_reason = read_string(j.at("unavailable_reason"), "/unavailable_reason");
  if (!j.contains("records")) bad("/records", "missing");
  const nlohmann::json& records = j.at("records");
  if (!records.is_array())
    bad("/records", std::string("expected an array, got a ") + records.type_name());
  t.records.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i)
    t.records.push_back(read_record(records[i], "/records/" + std::to_string(i)));
  return t;
}

}  // namespace pathbench
