// GPU tests of the copy family and the latched timer. Label `gpu`; they skip without a device.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "core/errors.hpp"
#include "inventory/inventory.hpp"
#include "measure/family.hpp"
#include "scenario/expansion.hpp"
#include "test_gpu_common.hpp"

#ifdef PATHBENCH_HAVE_CUDA
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/gpu_block_timer.hpp"
#include "measure/pattern.hpp"
#endif

namespace pathbench {
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

struct Measured {
  std::vector<MetricSpec> metrics;
  std::vector<Sample> samples;
  std::vector<Check> checks;
  TimingMethod method;
};

Measured measure(const CaseSpec& spec, int samples = 3) {
  const FamilyRegistry families = builtin_families();
  const Family& family = *families.find("copy");
  const Machine machine = machine_from(collect_inventory({}));
  EXPECT_FALSE(family.invalid_combination(spec).has_value());
  if (auto why = family.skip_reason(spec, machine, 0)) {
    ADD_FAILURE() << "unexpected skip: " << *why;
    return {};
  }
  auto bench = family.prepare(spec, machine, 0);
  Measured m{bench->metrics(), {}, {}, bench->timing_method()};
  bench->warm_up(spec.min_time);
  for (int i = 0; i < samples; ++i) {
    m.samples.push_back(bench->measure());
    bench->verify();
  }
  m.checks = bench->checks();
  return m;
}

void expect_checks_pass(const Measured& m) {
  ASSERT_FALSE(m.checks.empty());
  for (const auto& c : m.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
}

TEST(CopyFamilyGpu, PinnedH2DIsLatchedVerifiedAndFast) {
  PATHBENCH_REQUIRE_GPU();
  const auto m = measure(copy_case({{"measure", "bandwidth"},
                                    {"direction", "h2d"},
                                    {"host_memory", "pinned"},
                                    {"bytes", 64 << 20}}));
  ASSERT_EQ(m.samples.size(), 3u);
  EXPECT_EQ(m.method, TimingMethod::kCudaEventsLatched);
  ASSERT_EQ(m.metrics[0].name, "bandwidth");
  for (const auto& s : m.samples) {
    // Any PCIe Gen3 x16 link or better moves more than 5 GB/s pinned.
    EXPECT_GT(s.values[0], 5.0);
    EXPECT_GT(s.seconds, 0.0);
  }
  expect_checks_pass(m);
}

TEST(CopyFamilyGpu, PageableD2HIsHostTimedAndVerified) {
  PATHBENCH_REQUIRE_GPU();
  const auto m = measure(copy_case({{"measure", "bandwidth"},
                                    {"direction", "d2h"},
                                    {"host_memory", "pageable-4k"},
                                    {"bytes", 16 << 20}}));
  EXPECT_EQ(m.method, TimingMethod::kHostSteadyClock);
  for (const auto& s : m.samples) EXPECT_GT(s.values[0], 0.5);
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
  for (const auto& s : d2d.samples) EXPECT_GT(s.values[0], 50.0);
  const auto lat = measure(copy_case(
      {{"measure", "latency"}, {"direction", "h2d"}, {"host_memory", "pinned"}, {"bytes", 4}}));
  ASSERT_EQ(lat.metrics[1].name, "round_trip_time");
  for (const auto& s : lat.samples) {
    EXPECT_GT(s.values[0], 0.0);
    EXPECT_LT(s.values[0], 1e-3);  // a 4-byte copy takes microseconds, not milliseconds
    EXPECT_GT(s.values[1], s.values[0] * 0.5);
  }
}

TEST(CopyFamilyGpu, PinCostIsPositive) {
  PATHBENCH_REQUIRE_GPU();
  const auto m = measure(
      copy_case({{"measure", "alloc_cost"}, {"host_memory", "pinned"}, {"bytes", 64 << 20}}), 2);
  for (const auto& s : m.samples) EXPECT_GT(s.values[0], 0.0);
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
}  // namespace pathbench
