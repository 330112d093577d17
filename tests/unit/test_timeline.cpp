#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "measure/timeline_checks.hpp"
#include "tests/unit/source_paths.hpp"
#include "timeline/timeline.hpp"

namespace pathbench::test_timeline {
namespace {

using ojson = nlohmann::ordered_json;

// The fixtures come from tests/fixtures/timelines/generate.py, which also prints an independent
// (Python) analysis of each; the numbers below are those, in nanoseconds.
std::string fixture_path(const std::string& name) {
  return std::string(PATHBENCH_FIXTURES) + "/timelines/" + name;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ojson read_fixture_json(const std::string& name) {
  return ojson::parse(read_text(fixture_path(name)));
}

Timeline load(const std::string& name) {
  return timeline_from_json(nlohmann::json::parse(read_text(fixture_path(name))));
}

double ns(double v) { return v / 1e9; }

TimelineRecord record(ActivityKind kind, std::uint64_t start, std::uint64_t end,
                      std::uint32_t stream = 13) {
  TimelineRecord r;
  r.kind = kind;
  r.start_ns = start;
  r.end_ns = end;
  r.stream = stream;
  return r;
}

TimelineRecord copy(std::uint64_t start, std::uint64_t end, std::uint32_t stream,
                    MemoryKind src = MemoryKind::kPinned, std::uint64_t bytes = 4096) {
  TimelineRecord r = record(ActivityKind::kMemcpy, start, end, stream);
  r.copy_kind = "HtoD";
  r.src_kind = src;
  r.dst_kind = MemoryKind::kDevice;
  r.bytes = bytes;
  return r;
}

TimelineRecord um(std::string name, std::uint64_t value) {
  TimelineRecord r = record(ActivityKind::kUnifiedMemory, 100, 200, 0);
  r.name = std::move(name);
  r.value = value;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Names

TEST(Timeline, ActivityKindNames) {
  EXPECT_EQ(to_string(ActivityKind::kMemcpy), "memcpy");
  EXPECT_EQ(to_string(ActivityKind::kMemset), "memset");
  EXPECT_EQ(to_string(ActivityKind::kKernel), "kernel");
  EXPECT_EQ(to_string(ActivityKind::kSynchronization), "synchronization");
  EXPECT_EQ(to_string(ActivityKind::kNvtxRange), "nvtx_range");
  EXPECT_EQ(to_string(ActivityKind::kUnifiedMemory), "unified_memory");
}

TEST(Timeline, MemoryKindNames) {
  EXPECT_EQ(to_string(MemoryKind::kUnknown), "unknown");
  EXPECT_EQ(to_string(MemoryKind::kPageable), "pageable");
  EXPECT_EQ(to_string(MemoryKind::kPinned), "pinned");
  EXPECT_EQ(to_string(MemoryKind::kDevice), "device");
  EXPECT_EQ(to_string(MemoryKind::kArray), "array");
  EXPECT_EQ(to_string(MemoryKind::kManaged), "managed");
  EXPECT_EQ(to_string(MemoryKind::kDeviceStatic), "device_static");
  EXPECT_EQ(to_string(MemoryKind::kManagedStatic), "managed_static");
}

// ---------------------------------------------------------------------------------------------
// analyze_timeline on the fixtures

TEST(TimelineFixtures, OverlapEventWait) {
  const TimelineAnalysis a = analyze_timeline(load("overlap_event_wait.json"));
  EXPECT_EQ(a.copies, 1u);
  EXPECT_EQ(a.kernels, 2u);
  EXPECT_EQ(a.memsets, 0u);
  EXPECT_EQ(a.copy_bytes, 268435456u);
  EXPECT_DOUBLE_EQ(a.copy_seconds, 0.0048);
  EXPECT_DOUBLE_EQ(a.kernel_seconds, 0.0102);
  EXPECT_DOUBLE_EQ(a.overlapped_copy_seconds, 0.0048);
  EXPECT_DOUBLE_EQ(a.overlap_fraction, 1.0);
  EXPECT_DOUBLE_EQ(a.span_seconds, ns(10'203'000));
  EXPECT_DOUBLE_EQ(a.busy_seconds, ns(10'200'000));
  EXPECT_EQ(a.idle_gaps, 0u);  // the 3 us event-wait gap is below the 5 us threshold
  EXPECT_DOUBLE_EQ(a.idle_gap_seconds, 0.0);
  EXPECT_DOUBLE_EQ(a.longest_idle_gap_seconds, 0.0);
  EXPECT_EQ(a.copies_by_source_kind, (std::map<std::string, std::size_t>{{"pinned", 1}}));
  EXPECT_EQ(a.streams, 2u);
  EXPECT_EQ(a.unified_memory_fault_groups, 0u);
  EXPECT_TRUE(a.complete);

  // With a 1 us threshold the event-wait gap shows up.
  const TimelineAnalysis fine = analyze_timeline(load("overlap_event_wait.json"), 1e-6);
  EXPECT_EQ(fine.idle_gaps, 1u);
  EXPECT_DOUBLE_EQ(fine.idle_gap_seconds, ns(3'000));
  EXPECT_DOUBLE_EQ(fine.longest_idle_gap_seconds, ns(3'000));
}

TEST(TimelineFixtures, OverlapSameStream) {
  const TimelineAnalysis a = analyze_timeline(load("overlap_same_stream.json"));
  EXPECT_EQ(a.copies, 1u);
  EXPECT_EQ(a.kernels, 1u);
  EXPECT_EQ(a.copy_bytes, 268435456u);
  EXPECT_DOUBLE_EQ(a.copy_seconds, 0.0048);
  EXPECT_DOUBLE_EQ(a.kernel_seconds, 0.010);
  EXPECT_DOUBLE_EQ(a.overlapped_copy_seconds, 0.0);
  EXPECT_DOUBLE_EQ(a.overlap_fraction, 0.0);
  EXPECT_DOUBLE_EQ(a.span_seconds, ns(14'802'500));
  EXPECT_DOUBLE_EQ(a.busy_seconds, ns(14'800'000));
  EXPECT_EQ(a.idle_gaps, 0u);
  EXPECT_EQ(a.copies_by_source_kind, (std::map<std::string, std::size_t>{{"pinned", 1}}));
  EXPECT_EQ(a.streams, 1u);
  EXPECT_TRUE(a.complete);
}

TEST(TimelineFixtures, PageableChunks) {
  const TimelineAnalysis a = analyze_timeline(load("pageable.json"));
  EXPECT_EQ(a.copies, 9u);  // 8 staged chunks of one cudaMemcpy + the 4 KiB readback
  EXPECT_EQ(a.kernels, 0u);
  EXPECT_EQ(a.copy_bytes, 16u * 1024 * 1024 + 4096);
  EXPECT_DOUBLE_EQ(a.copy_seconds, ns(322'900));
  EXPECT_DOUBLE_EQ(a.overlap_fraction, 0.0);
  EXPECT_DOUBLE_EQ(a.span_seconds, ns(611'800));
  EXPECT_DOUBLE_EQ(a.busy_seconds, ns(322'900));
  EXPECT_EQ(a.idle_gaps, 8u);  // 7 staging gaps + the gap before the readback
  EXPECT_DOUBLE_EQ(a.idle_gap_seconds, ns(288'900));
  EXPECT_DOUBLE_EQ(a.longest_idle_gap_seconds, ns(44'300));
  EXPECT_EQ(a.copies_by_source_kind,
            (std::map<std::string, std::size_t>{{"device", 1}, {"pageable", 8}}));
  EXPECT_EQ(a.streams, 1u);
  EXPECT_TRUE(a.complete);
}

TEST(TimelineFixtures, SmallCopies) {
  const TimelineAnalysis a = analyze_timeline(load("small_copies.json"));
  EXPECT_EQ(a.copies, 1024u);
  EXPECT_EQ(a.kernels, 1u);  // the latch
  EXPECT_EQ(a.copy_bytes, 1024u * 4096);
  EXPECT_DOUBLE_EQ(a.copy_seconds, ns(2'396'120));
  EXPECT_DOUBLE_EQ(a.kernel_seconds, ns(50'000));
  EXPECT_DOUBLE_EQ(a.overlap_fraction, 0.0);
  EXPECT_DOUBLE_EQ(a.span_seconds, ns(4'053'020));
  EXPECT_DOUBLE_EQ(a.busy_seconds, ns(2'446'120));
  EXPECT_EQ(a.idle_gaps, 3u);  // 1.2-1.8 us gaps are below 5 us; the 25, 18 and 31 us ones are not
  EXPECT_DOUBLE_EQ(a.idle_gap_seconds, ns(74'000));
  EXPECT_DOUBLE_EQ(a.longest_idle_gap_seconds, ns(31'000));
  EXPECT_EQ(a.copies_by_source_kind, (std::map<std::string, std::size_t>{{"pinned", 1024}}));
  EXPECT_EQ(a.streams, 1u);
  EXPECT_TRUE(a.complete);

  // With a 1 us threshold every gap between copies counts: 1023 between copies + 1 after the latch.
  EXPECT_EQ(analyze_timeline(load("small_copies.json"), 1e-6).idle_gaps, 1024u);
}

TEST(TimelineFixtures, Dropped) {
  const Timeline t = load("dropped.json");
  EXPECT_EQ(t.dropped_records, 12u);
  const TimelineAnalysis a = analyze_timeline(t);
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.copies, 64u);
  EXPECT_EQ(a.kernels, 1u);
  EXPECT_EQ(a.copy_bytes, 64u * 65536);
  EXPECT_DOUBLE_EQ(a.copy_seconds, ns(90'880));
  EXPECT_DOUBLE_EQ(a.kernel_seconds, ns(1'200'000));
  EXPECT_DOUBLE_EQ(a.span_seconds, ns(1'388'380));
  EXPECT_DOUBLE_EQ(a.busy_seconds, ns(1'290'880));
  EXPECT_EQ(a.idle_gaps, 0u);
  EXPECT_EQ(a.copies_by_source_kind, (std::map<std::string, std::size_t>{{"device", 64}}));
  EXPECT_EQ(a.streams, 1u);
}

TEST(TimelineFixtures, UnifiedMemory) {
  const TimelineAnalysis a = analyze_timeline(load("um.json"));
  EXPECT_EQ(a.unified_memory_fault_groups, 210u);      // 37+41+29+52+33+18
  EXPECT_EQ(a.unified_memory_bytes_h2d, 11'075'584u);  // 8 transfers, 10.56 MiB
  EXPECT_EQ(a.unified_memory_bytes_d2h, 393'216u);     // 64 + 64 + 256 KiB
  EXPECT_EQ(a.copies, 0u);
  EXPECT_EQ(a.kernels, 1u);
  EXPECT_DOUBLE_EQ(a.kernel_seconds, 0.009);
  EXPECT_DOUBLE_EQ(a.span_seconds, 0.009);  // UM records are not GPU work
  EXPECT_DOUBLE_EQ(a.busy_seconds, 0.009);
  EXPECT_TRUE(a.copies_by_source_kind.empty());
  EXPECT_EQ(a.streams, 1u);
  EXPECT_TRUE(a.complete);
}

// ---------------------------------------------------------------------------------------------
// analyze_timeline on built timelines

TEST(TimelineAnalysis, EmptyTimeline) {
  const TimelineAnalysis a = analyze_timeline(Timeline{});
  EXPECT_EQ(a.copies, 0u);
  EXPECT_DOUBLE_EQ(a.overlap_fraction, 0.0);
  EXPECT_DOUBLE_EQ(a.span_seconds, 0.0);
  EXPECT_EQ(a.streams, 0u);
  EXPECT_EQ(a.idle_gaps, 0u);
  EXPECT_TRUE(a.complete);
}

TEST(TimelineAnalysis, PartialOverlapAcrossStreamsCountsOnce) {
  Timeline t;
  // Copy [0, 1000) on stream 14; kernels [200, 500) on 13 and [400, 700) on 15 overlap each
  // other: the copy is covered over [200, 700) = 500 ns, counted once.
  t.records.push_back(copy(0, 1000, 14));
  t.records.push_back(record(ActivityKind::kKernel, 200, 500, 13));
  t.records.push_back(record(ActivityKind::kKernel, 400, 700, 15));
  const TimelineAnalysis a = analyze_timeline(t);
  EXPECT_DOUBLE_EQ(a.copy_seconds, ns(1000));
  EXPECT_DOUBLE_EQ(a.kernel_seconds, ns(500));
  EXPECT_DOUBLE_EQ(a.overlapped_copy_seconds, ns(500));
  EXPECT_DOUBLE_EQ(a.overlap_fraction, 0.5);
  EXPECT_EQ(a.streams, 3u);
}

TEST(TimelineAnalysis, ConcurrentCopiesAreAUnion) {
  Timeline t;
  t.records.push_back(copy(0, 1000, 14));
  t.records.push_back(copy(500, 1500, 15, MemoryKind::kPageable));
  t.records.push_back(record(ActivityKind::kKernel, 1200, 2000, 13));
  const TimelineAnalysis a = analyze_timeline(t);
  EXPECT_EQ(a.copies, 2u);
  EXPECT_EQ(a.copy_bytes, 8192u);
  EXPECT_DOUBLE_EQ(a.copy_seconds, ns(1500));
  EXPECT_DOUBLE_EQ(a.overlapped_copy_seconds, ns(300));
  EXPECT_DOUBLE_EQ(a.overlap_fraction, 0.2);
  EXPECT_DOUBLE_EQ(a.busy_seconds, ns(2000));
  EXPECT_EQ(a.copies_by_source_kind,
            (std::map<std::string, std::size_t>{{"pageable", 1}, {"pinned", 1}}));
}

TEST(TimelineAnalysis, IdleGapThresholdIsStrict) {
  Timeline t;
  t.records.push_back(copy(0, 1000, 13));
  t.records.push_back(copy(6000, 7000, 13));    // gap 5000 ns: not longer than 5 us
  t.records.push_back(copy(12001, 13000, 13));  // gap 5001 ns: longer
  TimelineRecord memset = record(ActivityKind::kMemset, 20000, 21000, 13);
  memset.bytes = 1 << 20;
  t.records.push_back(memset);  // gap 7000 ns; memsets are GPU work
  const TimelineAnalysis a = analyze_timeline(t, 5e-6);
  EXPECT_EQ(a.memsets, 1u);
  EXPECT_EQ(a.idle_gaps, 2u);
  EXPECT_DOUBLE_EQ(a.idle_gap_seconds, ns(12001));
  EXPECT_DOUBLE_EQ(a.longest_idle_gap_seconds, ns(7000));
  EXPECT_DOUBLE_EQ(a.span_seconds, ns(21000));
  EXPECT_DOUBLE_EQ(a.busy_seconds, ns(3999));
}

TEST(TimelineAnalysis, HostRecordsAreNotGpuWork) {
  Timeline t;
  t.records.push_back(record(ActivityKind::kNvtxRange, 0, 100000, 0));
  t.records.push_back(record(ActivityKind::kSynchronization, 0, 100000, 13));
  t.records.push_back(record(ActivityKind::kKernel, 1000, 2000, 13));
  t.records.push_back(record(ActivityKind::kKernel, 90000, 91000, 13));
  const TimelineAnalysis a = analyze_timeline(t);
  EXPECT_DOUBLE_EQ(a.span_seconds, ns(90000));
  EXPECT_EQ(a.idle_gaps, 1u);
  EXPECT_DOUBLE_EQ(a.idle_gap_seconds, ns(88000));
  EXPECT_EQ(a.streams, 1u);
}

TEST(TimelineAnalysis, UnifiedMemoryCounterNames) {
  Timeline t;
  t.records.push_back(um("gpu_page_fault_groups", 5));
  t.records.push_back(um("CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT", 7));
  t.records.push_back(um("bytes_transfer_htod", 4096));
  t.records.push_back(um("CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD", 8192));
  t.records.push_back(um("bytes_transfer_dtoh", 65536));
  t.records.push_back(um("CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH", 1));
  t.records.push_back(um("cpu_page_fault_count", 1000));
  t.records.push_back(um("thrashing", 1000));
  TimelineRecord kernel_named_like_um = record(ActivityKind::kKernel, 0, 10, 13);
  kernel_named_like_um.name = "gpu_page_fault_groups";
  kernel_named_like_um.value = 99;  // only unified-memory records count
  t.records.push_back(kernel_named_like_um);
  const TimelineAnalysis a = analyze_timeline(t);
  EXPECT_EQ(a.unified_memory_fault_groups, 12u);
  EXPECT_EQ(a.unified_memory_bytes_h2d, 12288u);
  EXPECT_EQ(a.unified_memory_bytes_d2h, 65537u);
}

// ---------------------------------------------------------------------------------------------
// Chrome trace

struct TraceIndex {
  std::vector<ojson> events;
  std::map<int, std::string> process_names;
  std::map<std::pair<int, std::int64_t>, std::vector<std::string>> thread_names;
};

TraceIndex index_trace(const ojson& trace) {
  TraceIndex ix;
  for (const ojson& e : trace.at("traceEvents")) {
    ix.events.push_back(e);
    if (e.at("ph") == "M" && e.at("name") == "process_name")
      ix.process_names[e.at("pid").get<int>()] = e.at("args").at("name").get<std::string>();
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      ix.thread_names[{e.at("pid").get<int>(), e.at("tid").get<std::int64_t>()}].push_back(
          e.at("args").at("name").get<std::string>());
  }
  return ix;
}

// Checks the invariants every trace must meet; returns the parsed text (what a viewer reads).
ojson check_trace_shape(const ojson& trace) {
  const std::string text = trace.dump();
  const ojson parsed = ojson::parse(text);  // valid JSON
  EXPECT_TRUE(parsed.at("traceEvents").is_array());
  EXPECT_EQ(parsed.at("displayTimeUnit"), "ns");
  const std::set<std::string> phases = {"X", "M", "C", "i"};
  for (const ojson& e : parsed.at("traceEvents")) {
    SCOPED_TRACE(e.dump());
    const bool shaped = e.contains("name") && e.at("name").is_string() && e.contains("ph") &&
                        e.at("ph").is_string() && e.contains("ts") && e.at("ts").is_number() &&
                        e.contains("pid") && e.at("pid").is_number_integer() && e.contains("tid") &&
                        e.at("tid").is_number_integer();
    if (!shaped) {
      ADD_FAILURE() << "event without name/ph/ts/pid/tid";
      continue;
    }
    EXPECT_TRUE(phases.count(e.at("ph").get<std::string>()));
    if (e.at("ph") == "X") {
      if (!e.contains("dur") || !e.at("dur").is_number()) {
        ADD_FAILURE() << "X event without dur";
        continue;
      }
      EXPECT_GE(e.at("dur").get<double>(), 0.0);
      EXPECT_GE(e.at("ts").get<double>(), 0.0);
      EXPECT_TRUE(e.contains("cat"));
    }
  }
  return parsed;
}

TEST(TimelineChromeTrace, OverlapEventWait) {
  const Timeline t = load("overlap_event_wait.json");
  const ojson trace = check_trace_shape(chrome_trace(t, "overlap event wait"));
  const TraceIndex ix = index_trace(trace);

  EXPECT_EQ(trace.at("otherData").at("title"), "overlap event wait");
  EXPECT_EQ(trace.at("otherData").at("dropped_records"), 0);
  EXPECT_EQ(trace.at("otherData").at("unavailable_reason"), "");
  EXPECT_EQ(trace.at("otherData").at("time_origin_ns").get<std::uint64_t>(),
            1'795'910'400'000'000'000u);

  // Processes: GPU 0 and a separate host process.
  ASSERT_EQ(ix.process_names.size(), 2u);
  EXPECT_EQ(ix.process_names.at(0), "GPU 0");
  EXPECT_EQ(ix.process_names.at(kChromeTraceHostPid), "host");
  EXPECT_NE(kChromeTraceHostPid, 0);

  // One thread-name metadata event per stream with GPU work.
  std::map<std::int64_t, std::string> gpu_threads;
  for (const auto& [key, names] : ix.thread_names) {
    if (key.first != 0) continue;
    ASSERT_EQ(names.size(), 1u) << "stream " << key.second;
    gpu_threads[key.second] = names[0];
  }
  EXPECT_EQ(gpu_threads,
            (std::map<std::int64_t, std::string>{{13, "stream 13"}, {14, "stream 14"}}));

  int copies = 0, kernels = 0, nvtx = 0, syncs = 0;
  for (const ojson& e : ix.events) {
    if (e.at("ph") != "X") continue;
    const std::string cat = e.at("cat");
    if (cat == "copy") {
      ++copies;
      EXPECT_EQ(e.at("name"), "HtoD 256 MiB (pinned\u2192device)");
      EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), 4800.0);  // 4.8 ms in microseconds
      EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), 1300.0);   // 1.3 ms after the first record
      EXPECT_EQ(e.at("pid"), 0);
      EXPECT_EQ(e.at("tid"), 14);
      EXPECT_EQ(e.at("args").at("bytes"), 268435456);
      EXPECT_EQ(e.at("args").at("copy_kind"), "HtoD");
      EXPECT_EQ(e.at("args").at("src_kind"), "pinned");
      EXPECT_EQ(e.at("args").at("dst_kind"), "device");
      EXPECT_EQ(e.at("args").at("correlation"), 1202);
    } else if (cat == "kernel") {
      ++kernels;
      EXPECT_EQ(e.at("pid"), 0);
      EXPECT_EQ(e.at("tid"), 13);
      if (e.at("args").at("correlation") == 1201) {
        EXPECT_EQ(e.at("name"), "pathbench::compute_kernel(float*, unsigned long, int)");
        EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), 10000.0);
        EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), 100.0);
      }
    } else if (cat == "nvtx") {
      ++nvtx;
      EXPECT_EQ(e.at("pid"), kChromeTraceHostPid);
      EXPECT_EQ(e.at("tid"), kChromeTraceNvtxTid);
    } else if (cat == "sync") {
      ++syncs;
      EXPECT_EQ(e.at("pid"), kChromeTraceHostPid);
      EXPECT_EQ(e.at("tid"), kChromeTraceSyncTid);
      EXPECT_EQ(e.at("name"), "stream_synchronize");
    } else {
      ADD_FAILURE() << "unexpected category " << cat;
    }
  }
  EXPECT_EQ(copies, 1);
  EXPECT_EQ(kernels, 2);
  EXPECT_EQ(nvtx, 3);
  EXPECT_EQ(syncs, 1);

  // Metadata first, then the events in time order.
  bool seen_event = false;
  double last_ts = -1;
  for (const ojson& e : ix.events) {
    if (e.at("ph") == "M") {
      EXPECT_FALSE(seen_event) << "metadata after an event";
      continue;
    }
    seen_event = true;
    EXPECT_GE(e.at("ts").get<double>(), last_ts);
    last_ts = e.at("ts").get<double>();
  }
}

TEST(TimelineChromeTrace, SmallCopiesAndDropped) {
  const ojson small = check_trace_shape(chrome_trace(load("small_copies.json"), "small"));
  int copies = 0;
  for (const ojson& e : small.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("cat") == "copy") {
      ++copies;
      EXPECT_EQ(e.at("name").get<std::string>().rfind("HtoD 4 KiB (pinned", 0), 0u);
    }
  EXPECT_EQ(copies, 1024);
  const TraceIndex ix = index_trace(small);
  EXPECT_EQ(ix.thread_names.count({0, 13}), 1u);

  const ojson dropped = check_trace_shape(chrome_trace(load("dropped.json"), "dropped"));
  EXPECT_EQ(dropped.at("otherData").at("dropped_records"), 12);
}

TEST(TimelineChromeTrace, PageableMemsetAndUnifiedMemory) {
  const ojson pageable = check_trace_shape(chrome_trace(load("pageable.json"), "p"));
  std::set<std::string> names;
  for (const ojson& e : pageable.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("cat") == "copy") names.insert(e.at("name"));
  EXPECT_EQ(names, (std::set<std::string>{"HtoD 2 MiB (pageable\u2192device)",
                                          "DtoH 4 KiB (device\u2192pageable)"}));

  const ojson trace = check_trace_shape(chrome_trace(load("um.json"), "um"));
  std::map<std::string, std::uint64_t> totals;
  int counters = 0;
  for (const ojson& e : trace.at("traceEvents")) {
    if (e.at("ph") != "C") continue;
    ++counters;
    EXPECT_EQ(e.at("cat"), "um");
    EXPECT_EQ(e.at("pid"), 0);
    totals[e.at("name")] = e.at("args").at("total").get<std::uint64_t>();
  }
  EXPECT_EQ(counters, 18);  // 6 fault groups + 8 htod + 3 dtoh + 1 cpu fault count
  EXPECT_EQ(totals.at("gpu_page_fault_groups"), 210u);
  EXPECT_EQ(totals.at("bytes_transfer_htod"), 11'075'584u);
  EXPECT_EQ(totals.at("bytes_transfer_dtoh"), 393'216u);

  Timeline t;
  TimelineRecord m = record(ActivityKind::kMemset, 1000, 3000, 7);
  m.bytes = 1 << 20;
  m.dst_kind = MemoryKind::kDevice;
  t.records.push_back(m);
  TimelineRecord peer = copy(5000, 6000, 7, MemoryKind::kDevice, 1 << 30);
  peer.copy_kind = "PtoP";
  peer.name = "device 0 -> device 1";
  t.records.push_back(peer);
  const ojson ms = check_trace_shape(chrome_trace(t, "memset"));
  bool found_peer = false;
  for (const ojson& e : ms.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("cat") == "copy") {
      found_peer = true;
      EXPECT_EQ(e.at("name"), "PtoP 1 GiB (device\u2192device)");
      EXPECT_EQ(e.at("args").at("detail"), "device 0 -> device 1");
      EXPECT_EQ(e.at("tid"), 7);
    }
  EXPECT_TRUE(found_peer);
  bool found = false;
  for (const ojson& e : ms.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("cat") == "memset") {
      found = true;
      EXPECT_EQ(e.at("cat"), "memset");
      EXPECT_EQ(e.at("name"), "memset 1 MiB");
      EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), 0.0);
      EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), 2.0);
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(index_trace(ms).process_names.count(kChromeTraceHostPid), 0u);  // no host work
}

TEST(TimelineChromeTrace, EmptyTimelineCarriesTheReason) {
  Timeline t;
  t.unavailable_reason = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: another profiler";
  const ojson trace = check_trace_shape(chrome_trace(t, "none"));
  EXPECT_TRUE(trace.at("traceEvents").empty());
  EXPECT_EQ(trace.at("otherData").at("unavailable_reason"), t.unavailable_reason);
}

// The Chrome trace the report test plots (tests/e2e/test_timeline_report.py) is committed; it
// must be what chrome_trace writes for fixture (a). PATHBENCH_WRITE_FIXTURES=1 rewrites it.
TEST(TimelineChromeTrace, CommittedTraceFixtureIsCurrent) {
  const ojson trace = chrome_trace(load("overlap_event_wait.json"),
                                   "overlap: kernel + H2D on an event-wait stream");
  const std::string path = fixture_path("overlap_event_wait.trace.json");
  const char* write = std::getenv("PATHBENCH_WRITE_FIXTURES");
  if (write != nullptr && std::string(write) == "1") {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << trace.dump(1) << "\n";
    ASSERT_TRUE(out.good()) << path;
  }
  EXPECT_EQ(ojson::parse(read_text(path)), trace)
      << path << " is stale: rerun with PATHBENCH_WRITE_FIXTURES=1";
}

// ---------------------------------------------------------------------------------------------
// JSON round trip

TEST(TimelineJson, FixturesRoundTripExactly) {
  for (const char* name : {"overlap_event_wait.json", "overlap_same_stream.json", "pageable.json",
                           "small_copies.json", "dropped.json", "um.json"}) {
    SCOPED_TRACE(name);
    const ojson text = read_fixture_json(name);
    const Timeline t = timeline_from_json(nlohmann::json::parse(text.dump()));
    EXPECT_EQ(to_json(t), text);
  }
}

TEST(TimelineJson, EveryFieldRoundTrips) {
  Timeline t;
  t.dropped_records = 3;
  t.unavailable_reason = "partial";
  TimelineRecord odd = record(ActivityKind::kKernel, 5, 9, 4'000'000'000u);
  odd.device = 7;
  odd.correlation = 4'294'967'295u;
  odd.name = "k\u00e9rnel \"quoted\"";
  odd.copy_kind = "PtoP";  // non-default fields on a kind that does not use them still travel
  odd.src_kind = MemoryKind::kManagedStatic;
  odd.dst_kind = MemoryKind::kDeviceStatic;
  odd.bytes = 18'446'744'073'709'551'615u;
  odd.value = 42;
  t.records.push_back(odd);
  TimelineRecord c = copy(10, 20, 14, MemoryKind::kArray);
  c.dst_kind = MemoryKind::kManaged;
  t.records.push_back(c);
  t.records.push_back(um("bytes_transfer_dtoh", 0));

  const ojson j = to_json(t);
  const Timeline back = timeline_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(to_json(back), j);
  ASSERT_EQ(back.records.size(), 3u);
  EXPECT_EQ(back.dropped_records, 3u);
  EXPECT_EQ(back.unavailable_reason, "partial");
  const TimelineRecord& r = back.records[0];
  EXPECT_EQ(r.kind, ActivityKind::kKernel);
  EXPECT_EQ(r.stream, 4'000'000'000u);
  EXPECT_EQ(r.device, 7u);
  EXPECT_EQ(r.correlation, 4'294'967'295u);
  EXPECT_EQ(r.name, odd.name);
  EXPECT_EQ(r.copy_kind, "PtoP");
  EXPECT_EQ(r.src_kind, MemoryKind::kManagedStatic);
  EXPECT_EQ(r.dst_kind, MemoryKind::kDeviceStatic);
  EXPECT_EQ(r.bytes, odd.bytes);
  EXPECT_EQ(r.value, 42u);
  EXPECT_EQ(back.records[1].src_kind, MemoryKind::kArray);
  EXPECT_EQ(back.records[1].dst_kind, MemoryKind::kManaged);
  EXPECT_EQ(back.records[2].kind, ActivityKind::kUnifiedMemory);
  EXPECT_TRUE(j.at("records")[2].contains("value"));
  EXPECT_FALSE(j.at("records")[2].contains("bytes"));
}

TEST(TimelineJson, MinimalRecordUsesDefaults) {
  const Timeline t = timeline_from_json(
      nlohmann::json::parse(R"({"records":[{"kind":"kernel","start_ns":1,"end_ns":1}]})"));
  ASSERT_EQ(t.records.size(), 1u);
  EXPECT_EQ(t.records[0].stream, 0u);
  EXPECT_EQ(t.records[0].src_kind, MemoryKind::kUnknown);
  EXPECT_EQ(t.dropped_records, 0u);
  // Signed integers built in code are accepted when non-negative.
  nlohmann::json built = {{"records", {{{"kind", "memcpy"}, {"start_ns", 2}, {"end_ns", 3}}}}};
  EXPECT_EQ(timeline_from_json(built).records.at(0).end_ns, 3u);
}

TEST(TimelineJson, MalformedInputThrowsNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"([])", "/: expected an object"},
      {R"({})", "/records: missing"},
      {R"({"records": {}})", "/records: expected an array"},
      {R"({"records": [], "extra": 1})", "/extra: unknown field"},
      {R"({"records": [], "schema": "pathbench.timeline/v2"})", "/schema"},
      {R"({"records": [], "dropped_records": true})", "/dropped_records: expected a non-negative"},
      {R"({"records": [], "dropped_records": -1})", "/dropped_records: expected a non-negative"},
      {R"({"records": [], "unavailable_reason": 5})", "/unavailable_reason: expected a string"},
      {R"({"records": [7]})", "/records/0: expected an object"},
      {R"({"records": [{"start_ns": 1, "end_ns": 2}]})", "/records/0/kind: missing"},
      {R"({"records": [{"kind": "kernel", "end_ns": 2}]})", "/records/0/start_ns: missing"},
      {R"({"records": [{"kind": "kernal", "start_ns": 1, "end_ns": 2}]})",
       "/records/0/kind: \"kernal\" is not one of"},
      {R"({"records": [{"kind": "kernel", "start_ns": "1", "end_ns": 2}]})",
       "/records/0/start_ns: expected a non-negative integer, got a string"},
      {R"({"records": [{"kind": "kernel", "start_ns": 1.5, "end_ns": 2}]})",
       "/records/0/start_ns: expected a non-negative integer, got a fractional number"},
      {R"({"records": [{"kind": "kernel", "start_ns": -1, "end_ns": 2}]})",
       "/records/0/start_ns: expected a non-negative integer, got a negative number"},
      {R"({"records": [{"kind": "kernel", "start_ns": 5, "end_ns": 2}]})",
       "/records/0/end_ns: 2 is before start_ns 5"},
      {R"({"records": [{"kind": "kernel", "start_ns": 1, "end_ns": 2, "stream": 4294967296}]})",
       "/records/0/stream: 4294967296 does not fit"},
      {R"({"records": [{"kind": "kernel", "start_ns": 1, "end_ns": 2, "device": null}]})",
       "/records/0/device: expected a non-negative integer, got a null"},
      {R"({"records": [{"kind": "kernel", "start_ns": 1, "end_ns": 2, "name": 3}]})",
       "/records/0/name: expected a string"},
      {R"({"records": [{"kind": "memcpy", "start_ns": 1, "end_ns": 2, "src_kind": "host"}]})",
       "/records/0/src_kind: \"host\" is not one of"},
      {R"({"records": [{"kind": "memcpy", "start_ns": 1, "end_ns": 2, "dst_kind": 1}]})",
       "/records/0/dst_kind: expected a string"},
      {R"({"records": [{"kind": "memcpy", "start_ns": 1, "end_ns": 2, "bytes": "4 KiB"}]})",
       "/records/0/bytes: expected a non-negative integer"},
      {R"({"records": [{"kind": "memcpy", "start_ns": 1, "end_ns": 2, "byte": 4}]})",
       "/records/0/byte: unknown field"},
      {R"({"records": [{"kind": "memcpy", "start_ns": 1, "end_ns": 2}, {"kind": "x"}]})",
       "/records/1/start_ns: missing"},
  };
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(text);
    try {
      timeline_from_json(nlohmann::json::parse(text));
      ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("timeline: /", 0), 0u) << e.what();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Copies against the reads' NVTX ranges (the storage reader's "pread")

TimelineRecord range(std::string name, std::uint64_t start, std::uint64_t end) {
  TimelineRecord r = record(ActivityKind::kNvtxRange, start, end, 0);
  r.name = std::move(name);
  return r;
}

Timeline reads_and_copies() {
  Timeline t;
  t.records = {range("pread", 0, 1000),    range("pread", 500, 2000), range("pread", 3000, 4000),
               range("other", 2000, 3000),  // not a read: does not hide anything
               copy(900, 1100, 13),         // 200 ns, all under the reads
               copy(2100, 2300, 13),        // in the gap between reads
               copy(3900, 4200, 13),        // 100 under the last read, 200 after it
               copy(5000, 5100, 13)};       // after every read
  TimelineRecord back = copy(3500, 3600, 13);
  back.copy_kind = "DtoH";  // another direction: not counted
  t.records.push_back(back);
  return t;
}

TEST(RangeCopyOverlap, CopyTimeUnderTheReadsAndAfterTheLastRead) {
  const RangeCopyOverlap o = copies_under_ranges(reads_and_copies(), "pread");
  EXPECT_EQ(o.ranges, 3u);
  EXPECT_EQ(o.copies, 4u);
  EXPECT_DOUBLE_EQ(o.range_seconds, ns(3000));  // [0, 2000) and [3000, 4000)
  EXPECT_DOUBLE_EQ(o.copy_seconds, ns(800));
  EXPECT_DOUBLE_EQ(o.copy_during_ranges_seconds, ns(300));
  EXPECT_DOUBLE_EQ(o.copy_after_last_range_seconds, ns(300));
  EXPECT_DOUBLE_EQ(o.hidden_fraction, 300.0 / 800.0);
}

TEST(RangeCopyOverlap, WithoutRangesNothingIsHiddenAndNothingCountsAsAfter) {
  Timeline t = reads_and_copies();
  const RangeCopyOverlap o = copies_under_ranges(t, "no such range");
  EXPECT_EQ(o.ranges, 0u);
  EXPECT_EQ(o.copies, 4u);
  EXPECT_DOUBLE_EQ(o.copy_during_ranges_seconds, 0.0);
  EXPECT_DOUBLE_EQ(o.copy_after_last_range_seconds, 0.0);
  EXPECT_DOUBLE_EQ(o.hidden_fraction, 0.0);
  const RangeCopyOverlap d2h = copies_under_ranges(t, "pread", "DtoH");
  EXPECT_EQ(d2h.copies, 1u);
  EXPECT_DOUBLE_EQ(d2h.hidden_fraction, 1.0);
}

TEST(RangeCopyOverlap, TheCheckSaysHowMuchWasHiddenOrThatItCannotTell) {
  const Check c = copies_hidden_check(copies_under_ranges(reads_and_copies(), "pread"));
  EXPECT_EQ(c.name, "copies_hidden_by_reads");
  EXPECT_TRUE(c.passed);
  EXPECT_NE(c.detail.find("37.5 %"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("came after the last read (3 reads, 4 copies)"), std::string::npos)
      << c.detail;
  EXPECT_DOUBLE_EQ(c.value["hidden_fraction"].get<double>(), 0.375);
  EXPECT_EQ(c.value["read_ranges"].get<std::size_t>(), 3u);

  const Check none = copies_hidden_check(copies_under_ranges(reads_and_copies(), "absent"));
  EXPECT_TRUE(none.passed);
  EXPECT_NE(none.detail.find("cannot be read from it"), std::string::npos) << none.detail;
}

}  // namespace
}  // namespace pathbench::test_timeline
