// GPU tests of the copy family and the latched timer. Label `gpu`; they skip without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "bench/copy.hpp"
#include "bench/families.hpp"
#include "core/errors.hpp"
#include "inventory/inventory.hpp"
#include "measure/family.hpp"
#include "runner_case.hpp"
#include "scenario/expansion.hpp"
#include "test_gpu_common.hpp"

#ifdef PATHBENCH_HAVE_CUDA
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/gpu_block_timer.hpp"
#include "measure/pattern.hpp"
#endif

namespace pathbench::test_copy_family_gpu {
namespace {

CaseSpec copy_case(nlohmann::ordered_json params) {
  CaseSpec spec;
  spec.family = "copy";
  spec.scenario = "test";
  spec.params = std::move(params);
  spec.id = case_id("copy", spec.params);
  spec.min_time = 0.02;
  return spec;
}

// Through the CLI's case runner. Every case here runs on any GPU machine: a skip fails the test.
MeasuredCase measure(const CaseSpec& spec, int samples = 3) {
  const FamilyRegistry families = builtin_families();
  MeasuredCase m =
      run_case(*families.find("copy"), spec, machine_from(collect_inventory({})), samples);
  if (!m.skipped.empty()) {
    ADD_FAILURE() << "unexpected skip: " << m.skipped;
    return {};
  }
  return m;
}

TEST(CopyFamilyGpu, PinnedH2DIsLatchedVerifiedAndFast) {
  PATHBENCH_REQUIRE_GPU();
  const auto m = measure(copy_case({{"measure", "bandwidth"},
                                    {"direction", "h2d"},
                                    {"host_memory", "pinned"},
                                    {"bytes", 64 << 20}}));
  ASSERT_EQ(m.samples.size(), 3u);
  EXPECT_EQ(m.method, timing_name(TimingMethod::kCudaEventsLatched));
  ASSERT_EQ(m.metrics[0].name, "bandwidth");
  for (const auto& s : m.samples) {
    // Any PCIe Gen3 x16 link or better moves more than 5 GB/s pinned.
    EXPECT_GT(s[0], 5.0);
  }
  expect_checks_pass(m);
}

TEST(CopyFamilyGpu, PageableD2HIsHostTimedAndVerified) {
  PATHBENCH_REQUIRE_GPU();
  const auto m = measure(copy_case({{"measure", "bandwidth"},
                                    {"direction", "d2h"},
                                    {"host_memory", "pageable-4k"},
                                    {"bytes", 16 << 20}}));
  EXPECT_EQ(m.method, timing_name(TimingMethod::kHostSteadyClock));
  for (const auto& s : m.samples) EXPECT_GT(s[0], 0.5);
  expect_checks_pass(m);
  bool saw_kind = false;
  for (const auto& c : m.checks) {
    if (c.name == "host_memory_kind") {
      saw_kind = true;
      EXPECT_NE(c.detail.find("unregistered"), std::string::npos) << c.detail;
    }
  }
  EXPECT_TRUE(saw_kind);
}

TEST(CopyFamilyGpu, RegisteredThpAndD2DAndLatency) {
  PATHBENCH_REQUIRE_GPU();
  expect_checks_pass(measure(copy_case({{"measure", "bandwidth"},
                                        {"direction", "h2d"},
                                        {"host_memory", "registered-thp"},
                                        {"bytes", 32 << 20}})));
  const auto d2d =
      measure(copy_case({{"measure", "bandwidth"}, {"direction", "d2d"}, {"bytes", 64 << 20}}));
  for (const auto& s : d2d.samples) EXPECT_GT(s[0], 50.0);
  const auto lat = measure(copy_case(
      {{"measure", "latency"}, {"direction", "h2d"}, {"host_memory", "pinned"}, {"bytes", 4}}));
  ASSERT_GE(lat.metrics.size(), 2u);  // none when the case failed to run
  ASSERT_EQ(lat.metrics[1].name, "round_trip_time");
  for (const auto& s : lat.samples) {
    EXPECT_GT(s[0], 0.0);
    EXPECT_LT(s[0], 1e-3);  // a 4-byte copy takes microseconds, not milliseconds
    EXPECT_GT(s[1], s[0] * 0.5);
  }
}

// gpus=all: every GPU of this machine at once (one GPU here is a valid all-GPU run).
void expect_all_gpus_case(const std::string& direction) {
  const auto m = measure(copy_case({{"measure", "bandwidth"},
                                    {"direction", direction},
                                    {"host_memory", "pinned"},
                                    {"gpus", "all"},
                                    {"bytes", 64 << 20}}));
  const Machine machine = machine_from(collect_inventory({}));
  const std::vector<int> gpus = copy_all_gpus(machine);
  ASSERT_FALSE(gpus.empty());
  ASSERT_EQ(m.samples.size(), 3u);
  EXPECT_EQ(m.method, timing_name(TimingMethod::kCudaEventsLatched));
  // bandwidth (the sum), bandwidth_gpu<N> per GPU, time_per_copy.
  ASSERT_EQ(m.metrics.size(), gpus.size() + 2);
  EXPECT_EQ(m.metrics.front().name, "bandwidth");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_EQ(m.metrics[i + 1].name, "bandwidth_gpu" + std::to_string(gpus[i]));
    EXPECT_EQ(m.metrics[i + 1].unit, "GB/s");
  }
  EXPECT_EQ(m.metrics.back().name, "time_per_copy");
  for (const auto& s : m.samples) {
    ASSERT_EQ(s.size(), m.metrics.size());
    double sum = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      EXPECT_GT(s[i + 1], 5.0) << "GPU " << gpus[i];
      sum += s[i + 1];
    }
    EXPECT_NEAR(s.front(), sum, 1e-9 * sum);
    EXPECT_GT(s.back(), 0.0);
  }
  expect_checks_pass(m);
  bool saw_gpus = false;
  for (const auto& c : m.checks) {
    if (c.name == "gpus") {
      saw_gpus = true;
      EXPECT_EQ(c.value.size(), gpus.size()) << c.detail;
    }
  }
  EXPECT_TRUE(saw_gpus);
  // One copy_pattern check covers every GPU's destination (each verified against its own seed
  // after every sample); each GPU's host buffer has its own placement checks.
  const Check* pattern = m.check("copy_pattern");
  ASSERT_NE(pattern, nullptr);
  EXPECT_TRUE(pattern->passed) << pattern->detail;
  EXPECT_NE(pattern->detail.find("every GPU's destination"), std::string::npos) << pattern->detail;
  for (int g : gpus) {
    for (const char* name : {"host_memory_kind_gpu", "host_placement_gpu"}) {
      const std::string want = name + std::to_string(g);
      EXPECT_TRUE(std::any_of(m.checks.begin(), m.checks.end(), [&](const Check& c) {
        return c.name == want;
      })) << want;
    }
  }
}

TEST(CopyFamilyGpu, AllGpusH2DReportsEveryGpuAndTheSum) {
  PATHBENCH_REQUIRE_GPU();
  expect_all_gpus_case("h2d");
}

TEST(CopyFamilyGpu, AllGpusD2HReportsEveryGpuAndTheSum) {
  PATHBENCH_REQUIRE_GPU();
  expect_all_gpus_case("d2h");
}

// bidir: both directions at once, each verified against its own pattern, each direction's rate
// over its own events; the sum is both directions' bytes over the slower one's time.
TEST(CopyFamilyGpu, BidirMovesBothDirectionsAtOnce) {
  PATHBENCH_REQUIRE_GPU();
  for (const char* host : {"pinned", "registered-4k"}) {
    SCOPED_TRACE(host);
    const auto m = measure(copy_case({{"measure", "bandwidth"},
                                      {"direction", "bidir"},
                                      {"host_memory", host},
                                      {"host_node", "local"},
                                      {"bytes", 64 << 20}}));
    ASSERT_EQ(m.samples.size(), 3u);
    EXPECT_EQ(m.method, timing_name(TimingMethod::kCudaEventsLatched));
    ASSERT_EQ(m.metrics.size(), 4u);
    EXPECT_EQ(m.metrics[1].name, "bandwidth_h2d");
    EXPECT_EQ(m.metrics[2].name, "bandwidth_d2h");
    for (const auto& s : m.samples) {
      EXPECT_GT(s[1], 5.0);
      EXPECT_GT(s[2], 5.0);
      // The slower direction sets the sum: at most the two rates added, at least twice the slower.
      EXPECT_LE(s[0], (s[1] + s[2]) * (1 + 1e-9));
      EXPECT_GE(s[0], 2 * std::min(s[1], s[2]) * (1 - 1e-9));
    }
    expect_checks_pass(m);
    for (const char* name : {"host_memory_kind_h2d", "host_memory_kind_d2h", "copy_pattern"}) {
      EXPECT_NE(m.check(name), nullptr) << name;
    }
  }
}

TEST(CopyFamilyGpu, PinCostIsPositive) {
  PATHBENCH_REQUIRE_GPU();
  const auto m = measure(
      copy_case({{"measure", "alloc_cost"}, {"host_memory", "pinned"}, {"bytes", 64 << 20}}), 2);
  for (const auto& s : m.samples) EXPECT_GT(s[0], 0.0);
  expect_checks_pass(m);
}

#ifdef PATHBENCH_HAVE_CUDA
TEST(GpuBlockTimerGpu, ABlockingFirstBlockFallsBackToTheHostClock) {
  PATHBENCH_REQUIRE_GPU();
  Stream stream;
  GpuBlockTimer timer(0.05, 0.05);
  // The host "blocks" longer than the latch holds: no deadlock, and no latched number either —
  // the block is timed again by the host clock and the timer says so.
  const double s = timer.time_block(
      stream.get(), [] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); });
  EXPECT_TRUE(timer.host_timed());
  EXPECT_NE(timer.host_timed_reason().find("blocked"), std::string::npos);
  EXPECT_GE(s, 0.3);
  DeviceMemory a(1 << 20), b(1 << 20);
  const double copy = timer.time_block(stream.get(), [&] {
    PB_CUDA(cudaMemcpyAsync(b.get(), a.get(), 1 << 20, cudaMemcpyDeviceToDevice, stream.get()));
  });
  EXPECT_GT(copy, 0.0);
  EXPECT_TRUE(timer.host_timed());
}

TEST(GpuBlockTimerGpu, ALaterBlockThatBlocksFailsTheMeasurement) {
  PATHBENCH_REQUIRE_GPU();
  Stream stream;
  GpuBlockTimer timer(0.05, 0.05);
  DeviceMemory a(1 << 20), b(1 << 20);
  const double s = timer.time_block(stream.get(), [&] {
    PB_CUDA(cudaMemcpyAsync(b.get(), a.get(), 1 << 20, cudaMemcpyDeviceToDevice, stream.get()));
  });
  EXPECT_GT(s, 0.0);
  EXPECT_LT(s, 0.05);
  EXPECT_FALSE(timer.host_timed());
  // Once latched timing was established, a block that cannot be enqueued is a failed sample.
  EXPECT_THROW(
      timer.time_block(stream.get(),
                       [] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }),
      CaseFailure);
}

TEST(GpuBlockTimerGpu, LatchHoldsTheBlockUntilReleased) {
  PATHBENCH_REQUIRE_GPU();
  Stream stream;
  GpuBlockTimer timer(5.0);
  DeviceMemory a(1 << 20), b(1 << 20);
  // Enqueueing takes 50 ms of host time; the events must time only the copies after release.
  const double s = timer.time_block(stream.get(), [&] {
    PB_CUDA(cudaMemcpyAsync(b.get(), a.get(), 1 << 20, cudaMemcpyDeviceToDevice, stream.get()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    PB_CUDA(cudaMemcpyAsync(b.get(), a.get(), 1 << 20, cudaMemcpyDeviceToDevice, stream.get()));
  });
  EXPECT_LT(s, 0.01) << "the block included host enqueue time: the latch did not hold";
}

TEST(GpuBlockTimerGpu, OneLatchReleasesSeveralStreamsTogether) {
  PATHBENCH_REQUIRE_GPU();
  int devices = 0;
  PB_CUDA(cudaGetDeviceCount(&devices));
  // Two streams on GPU 0 and, with a second GPU, one on it too.
  std::vector<Stream> streams;
  std::vector<DeviceStream> targets;
  std::vector<DeviceMemory> a, b;
  for (int d : {0, 0, devices > 1 ? 1 : 0}) {
    DeviceScope scope(d);
    streams.emplace_back();
    a.emplace_back(1 << 20);
    b.emplace_back(1 << 20);
  }
  const std::vector<int> on = {0, 0, devices > 1 ? 1 : 0};
  for (std::size_t i = 0; i < streams.size(); ++i) targets.push_back({on[i], streams[i].get()});
  GpuBlockTimer timer(5.0);
  auto enqueue_all = [&] {
    for (std::size_t i = 0; i < targets.size(); ++i) {
      PB_CUDA(cudaSetDevice(targets[i].device));
      PB_CUDA(cudaMemcpyAsync(b[i].get(), a[i].get(), 1 << 20, cudaMemcpyDeviceToDevice,
                              targets[i].stream));
      // Enqueueing takes 50 ms of host time per stream; no stream may have started before the
      // whole block was enqueued.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  PB_CUDA(cudaSetDevice(0));
  const auto seconds = timer.time_blocks(targets, enqueue_all);
  ASSERT_EQ(seconds.size(), targets.size());
  for (double s : seconds) {
    EXPECT_GT(s, 0.0);
    EXPECT_LT(s, 0.02) << "a stream's block included host enqueue time: the latch did not hold";
  }
  EXPECT_FALSE(timer.host_timed());
  int current = -1;
  PB_CUDA(cudaGetDevice(&current));
  EXPECT_EQ(current, 0);  // the enqueue's device switches do not leak
  // The single-stream form still works on the same timer (one timing core).
  const double one = timer.time_block(streams[0].get(), [&] {
    PB_CUDA(cudaMemcpyAsync(b[0].get(), a[0].get(), 1 << 20, cudaMemcpyDeviceToDevice,
                            streams[0].get()));
  });
  EXPECT_GT(one, 0.0);
}

TEST(GpuBlockTimerGpu, SeveralStreamsFallBackToTheHostClockTogether) {
  PATHBENCH_REQUIRE_GPU();
  Stream s1, s2;
  GpuBlockTimer timer(0.05, 0.05);
  const auto seconds = timer.time_blocks({{0, s1.get()}, {0, s2.get()}}, [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  EXPECT_TRUE(timer.host_timed());
  ASSERT_EQ(seconds.size(), 2u);
  EXPECT_GE(seconds[0], 0.3);
  EXPECT_EQ(seconds[0], seconds[1]);
}

TEST(DevicePatternGpu, DetectsACorruptedByte) {
  PATHBENCH_REQUIRE_GPU();
  Stream stream;
  const std::size_t bytes = (8 << 20) + 5;  // odd tail exercises the byte path
  DeviceMemory buffer(bytes);
  fill_pattern_on_device(buffer.get(), bytes, 42, stream.get());
  DevicePatternChecker checker;
  EXPECT_FALSE(checker.find_mismatch(buffer.get(), bytes, 42, stream.get()).has_value());
  // Device fill and host pattern agree bit for bit.
  std::vector<std::byte> host(bytes);
  PB_CUDA(cudaMemcpy(host.data(), buffer.get(), bytes, cudaMemcpyDeviceToHost));
  EXPECT_FALSE(find_pattern_mismatch(host, 42).has_value());
  PB_CUDA(cudaMemset(buffer.get() + 123457, 0xAB, 1));
  const auto bad = checker.find_mismatch(buffer.get(), bytes, 42, stream.get());
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(*bad, 123457u);
  EXPECT_THROW(checker.verify(buffer.get(), bytes, 42, stream.get(), "t"), CaseFailure);
}
#endif

}  // namespace
}  // namespace pathbench::test_copy_family_gpu
