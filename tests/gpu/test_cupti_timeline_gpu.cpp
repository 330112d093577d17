// GPU tests of the CUPTI timeline capture. Label `gpu`; they skip without a device.
//
// GPU work is issued with runtime API calls only (copies, memsets, prefetches), so this file
// needs no nvcc. Each test runs in its own process under ctest (gtest_discover_tests), which the
// NVTX test relies on: NVTX reads NVTX_INJECTION64_PATH once, at the process's first NVTX call.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "test_gpu_common.hpp"
#include "timeline/cupti_library.hpp"
#include "timeline/cupti_timeline.hpp"
#include "timeline/timeline.hpp"

#ifdef PATHBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuda/cuda_resources.hpp"
#include "measure/nvtx.hpp"
#endif

namespace pathbench::test_cupti_timeline_gpu {
namespace {

#ifdef PATHBENCH_HAVE_CUDA

constexpr std::size_t kBytes = std::size_t{8} << 20;

void init_device() {
  PB_CUDA(cudaSetDevice(0));
  PB_CUDA(cudaFree(nullptr));  // the context exists before any capture starts
}

std::vector<const TimelineRecord*> of_kind(const Timeline& t, ActivityKind kind) {
  std::vector<const TimelineRecord*> out;
  for (const auto& r : t.records)
    if (r.kind == kind) out.push_back(&r);
  return out;
}

const TimelineRecord* find_copy(const Timeline& t, MemoryKind src, MemoryKind dst,
                                std::uint64_t bytes) {
  for (const auto& r : t.records)
    if (r.kind == ActivityKind::kMemcpy && r.src_kind == src && r.dst_kind == dst &&
        r.bytes == bytes)
      return &r;
  return nullptr;
}

std::string describe(const Timeline& t) {
  std::string s = std::to_string(t.records.size()) + " records, dropped " +
                  std::to_string(t.dropped_records) + ":";
  for (const auto& r : t.records) {
    s += "\n  " + std::string(to_string(r.kind)) + " " + r.name + " " + r.copy_kind + " " +
         std::string(to_string(r.src_kind)) + "->" + std::string(to_string(r.dst_kind)) + " " +
         std::to_string(r.bytes) + " B [" + std::to_string(r.start_ns) + ", " +
         std::to_string(r.end_ns) + "] stream " + std::to_string(r.stream);
  }
  return s;
}

// Pinned H2D, pageable H2D and a memset of kBytes each on one stream, then a synchronize.
struct CopyWork {
  DeviceMemory device{kBytes};
  PinnedHostMemory pinned{kBytes};
  std::vector<std::byte> pageable = std::vector<std::byte>(kBytes, std::byte{0x5a});
  Stream stream;

  CopyWork() { std::memset(pinned.get(), 0xa5, kBytes); }
  void issue() {
    PB_CUDA(
        cudaMemcpyAsync(device.get(), pinned.get(), kBytes, cudaMemcpyHostToDevice, stream.get()));
    PB_CUDA(cudaMemcpyAsync(device.get(), pageable.data(), kBytes, cudaMemcpyHostToDevice,
                            stream.get()));
    PB_CUDA(cudaMemsetAsync(device.get(), 0, kBytes, stream.get()));
    stream.synchronize();
  }
};

void expect_copy_work(const Timeline& t) {
  ASSERT_TRUE(t.unavailable_reason.empty()) << t.unavailable_reason;
  EXPECT_EQ(t.dropped_records, 0u);
  const auto copies = of_kind(t, ActivityKind::kMemcpy);
  std::size_t full_size = 0;
  for (const auto* c : copies) full_size += c->bytes == kBytes;
  EXPECT_GE(full_size, 2u) << describe(t);

  const TimelineRecord* pinned = find_copy(t, MemoryKind::kPinned, MemoryKind::kDevice, kBytes);
  const TimelineRecord* pageable = find_copy(t, MemoryKind::kPageable, MemoryKind::kDevice, kBytes);
  ASSERT_NE(pinned, nullptr) << describe(t);
  ASSERT_NE(pageable, nullptr) << describe(t);
  for (const auto* c : {pinned, pageable}) {
    EXPECT_EQ(c->copy_kind, "HtoD");
    EXPECT_GT(c->end_ns, c->start_ns);
    EXPECT_NE(c->correlation, 0u);
  }
  EXPECT_EQ(pinned->stream, pageable->stream);
  // Same stream, issued in order: the pageable copy starts after the pinned one ended.
  EXPECT_GE(pageable->start_ns, pinned->end_ns);

  const auto memsets = of_kind(t, ActivityKind::kMemset);
  ASSERT_GE(memsets.size(), 1u) << describe(t);
  bool memset_found = false;
  for (const auto* m : memsets) {
    if (m->bytes != kBytes) continue;
    memset_found = true;
    EXPECT_EQ(m->dst_kind, MemoryKind::kDevice);
    EXPECT_GT(m->end_ns, m->start_ns);
    EXPECT_EQ(m->stream, pinned->stream);
  }
  EXPECT_TRUE(memset_found) << describe(t);

  bool stream_sync = false;
  for (const auto* s : of_kind(t, ActivityKind::kSynchronization))
    stream_sync |= s->name == "stream_synchronize";
  EXPECT_TRUE(stream_sync) << describe(t);

  for (const auto& r : t.records) EXPECT_LE(r.start_ns, r.end_ns);
  for (std::size_t i = 1; i < t.records.size(); ++i)
    EXPECT_LE(t.records[i - 1].start_ns, t.records[i].start_ns) << "records are sorted by start";

  const TimelineAnalysis a = analyze_timeline(t);
  EXPECT_GE(a.copies, 2u);
  EXPECT_GE(a.memsets, 1u);
  EXPECT_GE(a.copy_bytes, 2 * kBytes);
  EXPECT_GE(a.copies_by_source_kind.count(std::string(to_string(MemoryKind::kPinned))), 1u);
  EXPECT_GE(a.copies_by_source_kind.count(std::string(to_string(MemoryKind::kPageable))), 1u);
  EXPECT_TRUE(a.complete);
}

TEST(CuptiTimelineGpu, CapturesPinnedAndPageableCopiesWithMemoryKinds) {
  PATHBENCH_REQUIRE_GPU();
  init_device();
  CopyWork work;
  TimelineCapture capture(TimelineCapture::Options{});
  ASSERT_TRUE(capture.active()) << capture.unavailable_reason();
  work.issue();
  const Timeline t = capture.collect();
  expect_copy_work(t);
  // A second collect() returns nothing new: tracing stopped at the first.
  const Timeline again = capture.collect();
  EXPECT_TRUE(again.unavailable_reason.empty()) << again.unavailable_reason;
  EXPECT_TRUE(of_kind(again, ActivityKind::kMemcpy).empty()) << describe(again);
}

TEST(CuptiTimelineGpu, SecondCaptureAfterTheFirstWorks) {
  PATHBENCH_REQUIRE_GPU();
  init_device();
  CopyWork work;
  {
    TimelineCapture first(TimelineCapture::Options{});
    ASSERT_TRUE(first.active()) << first.unavailable_reason();
    work.issue();
    expect_copy_work(first.collect());
  }
  {
    // Destroyed without collect(): tracing must be switched off and the slot released.
    TimelineCapture abandoned(TimelineCapture::Options{});
    ASSERT_TRUE(abandoned.active()) << abandoned.unavailable_reason();
    work.issue();
  }
  TimelineCapture second(TimelineCapture::Options{});
  ASSERT_TRUE(second.active()) << second.unavailable_reason();
  work.issue();
  const Timeline t = second.collect();
  expect_copy_work(t);
  // Only this capture's work: one pinned and one pageable copy of kBytes.
  std::size_t full_size = 0;
  for (const auto* c : of_kind(t, ActivityKind::kMemcpy)) full_size += c->bytes == kBytes;
  EXPECT_EQ(full_size, 2u) << describe(t);
}

TEST(CuptiTimelineGpu, ConcurrentCaptureIsInertWithReason) {
  PATHBENCH_REQUIRE_GPU();
  init_device();
  CopyWork work;
  TimelineCapture owner(TimelineCapture::Options{});
  ASSERT_TRUE(owner.active()) << owner.unavailable_reason();
  {
    TimelineCapture::Options with_um;
    with_um.unified_memory_counters = true;
    TimelineCapture intruder(with_um);
    EXPECT_FALSE(intruder.active());
    EXPECT_NE(intruder.unavailable_reason().find("already active"), std::string::npos)
        << intruder.unavailable_reason();
    const Timeline nothing = intruder.collect();
    EXPECT_TRUE(nothing.records.empty());
    EXPECT_EQ(nothing.unavailable_reason, intruder.unavailable_reason());
  }  // the inert capture's destructor must not stop the owner's tracing
  work.issue();
  expect_copy_work(owner.collect());
}

TEST(CuptiTimelineGpu, NvtxRangesOfThePathbenchDomainOnly) {
  PATHBENCH_REQUIRE_GPU();
#ifndef PATHBENCH_HAVE_NVTX
  GTEST_SKIP() << "built without the NVTX headers";
#else
  const std::string cupti = cupti_library_path();
  ASSERT_FALSE(cupti.empty());
  const char* preset = std::getenv(kNvtxInjectionVariable);
  if (preset && std::string(preset).find("cupti") == std::string::npos)
    GTEST_SKIP() << kNvtxInjectionVariable << " points at another injection: " << preset;
  // Before this process's first NVTX call (nothing else in this test process emits NVTX).
  setenv(kNvtxInjectionVariable, cupti.c_str(), 0);
  init_device();
  CopyWork work;
  TimelineCapture capture(TimelineCapture::Options{});
  ASSERT_TRUE(capture.active()) << capture.unavailable_reason();
  {
    NvtxRange range("case copy/size=8MiB", "copy", kBytes);
    work.issue();
  }
  nvtxRangePushA("default-domain range");  // NVTX's default domain: not kept
  nvtxRangePop();
  const nvtxDomainHandle_t other = nvtxDomainCreateA("not-pathbench");
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = "other-domain range";
  nvtxDomainRangePushEx(other, &attr);  // another domain: not kept
  nvtxDomainRangePop(other);
  const Timeline t = capture.collect();
  ASSERT_TRUE(t.unavailable_reason.empty()) << t.unavailable_reason;
  const auto ranges = of_kind(t, ActivityKind::kNvtxRange);
  ASSERT_EQ(ranges.size(), 1u) << "NVTX reaches CUPTI only through " << kNvtxInjectionVariable
                               << "=" << cupti << "\n"
                               << describe(t);
  const TimelineRecord& range = *ranges.front();
  EXPECT_EQ(range.name, "case copy/size=8MiB");
  EXPECT_GT(range.end_ns, range.start_ns);
  // CPU-side NVTX timestamps and GPU-side copy timestamps share CUPTI's clock.
  const TimelineRecord* pinned = find_copy(t, MemoryKind::kPinned, MemoryKind::kDevice, kBytes);
  ASSERT_NE(pinned, nullptr) << describe(t);
  EXPECT_LE(range.start_ns, pinned->start_ns);
  EXPECT_GE(range.end_ns, pinned->end_ns);
#endif
}

TEST(CuptiTimelineGpu, UnifiedMemoryCounters) {
  PATHBENCH_REQUIRE_GPU();
  init_device();
  int concurrent = 0;
  PB_CUDA(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
  if (!concurrent) GTEST_SKIP() << "device 0 has no concurrent managed access (no prefetch)";
  // CUPTI counts only managed allocations made after it was initialised.
  const std::string prepared = prepare_cupti_tracing();
  if (prepared.find("not supported") != std::string::npos) GTEST_SKIP() << prepared;
  ASSERT_EQ(prepared, "");
  void* managed = nullptr;
  PB_CUDA(cudaMallocManaged(&managed, kBytes));
  std::memset(managed, 1, kBytes);  // resident on the host
  Stream stream;

  TimelineCapture::Options options;
  options.unified_memory_counters = true;
  TimelineCapture capture(options);
  if (!capture.active() &&
      capture.unavailable_reason().find("not supported") != std::string::npos) {
    cudaFree(managed);
    GTEST_SKIP() << capture.unavailable_reason();
  }
  ASSERT_TRUE(capture.active()) << capture.unavailable_reason();
#if CUDART_VERSION >= 13000
  cudaMemLocation device_location{};
  device_location.type = cudaMemLocationTypeDevice;
  device_location.id = 0;
  PB_CUDA(cudaMemPrefetchAsync(managed, kBytes, device_location, 0, stream.get()));
#else
  PB_CUDA(cudaMemPrefetchAsync(managed, kBytes, 0, stream.get()));
#endif
  stream.synchronize();
  // Host writes fault the pages back (CPU page faults, device-to-host migration).
  auto* bytes = static_cast<unsigned char*>(managed);
  for (std::size_t i = 0; i < kBytes; i += 4096) bytes[i] = 2;
  PB_CUDA(cudaDeviceSynchronize());
  const Timeline t = capture.collect();
  PB_CUDA(cudaFree(managed));

  ASSERT_TRUE(t.unavailable_reason.empty()) << t.unavailable_reason;
  EXPECT_EQ(t.dropped_records, 0u);
  std::uint64_t htod = 0, dtoh = 0, cpu_faults = 0;
  for (const auto* r : of_kind(t, ActivityKind::kUnifiedMemory)) {
    if (r->name == "bytes_transfer_htod") htod += r->value;
    if (r->name == "bytes_transfer_dtoh") dtoh += r->value;
    if (r->name == "cpu_page_fault_count") cpu_faults += r->value;
    EXPECT_LE(r->start_ns, r->end_ns);
  }
  EXPECT_GE(htod, kBytes) << describe(t);
  EXPECT_GT(dtoh, 0u) << describe(t);
  EXPECT_GT(cpu_faults, 0u) << describe(t);
  const TimelineAnalysis a = analyze_timeline(t);
  EXPECT_EQ(a.unified_memory_bytes_h2d, htod);
  EXPECT_EQ(a.unified_memory_bytes_d2h, dtoh);
}

#else

TEST(CuptiTimelineGpu, BuiltWithoutCuda) {
  TimelineCapture capture(TimelineCapture::Options{});
  EXPECT_FALSE(capture.active());
  GTEST_SKIP() << capture.unavailable_reason();
}

#endif

}  // namespace
}  // namespace pathbench::test_cupti_timeline_gpu
