// GPU tests of the device_memory family, through the CLI's case runner. Label `gpu`; they skip
// without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/device_memory.hpp"
#include "inventory/inventory.hpp"
#include "measure/family.hpp"
#include "runner_case.hpp"
#include "scenario/expansion.hpp"
#include "test_gpu_common.hpp"

namespace pathbench::test_device_memory_gpu {
namespace {

CaseSpec dm_case(nlohmann::ordered_json params) {
  return gpu_test_case("device_memory", std::move(params));
}

MeasuredCase run(const CaseSpec& spec, int samples = 3) {
  return run_required(*make_device_memory_family(), spec, samples);
}

// Every check passed, the memory_returned one among them (the case gave back what it took).
void expect_checks_pass_and_memory_returned(const MeasuredCase& m) {
  expect_checks_pass(m);
  const Check* returned = m.check("memory_returned");
  ASSERT_NE(returned, nullptr);
  EXPECT_TRUE(returned->passed) << returned->detail;
}

void expect_alloc_free_ok(nlohmann::ordered_json params) {
  params["measure"] = "alloc_free";
  params["bytes"] = 2 << 20;
  const auto m = run(dm_case(params));
  PATHBENCH_SKIP_IF_SKIPPED(m);
  ASSERT_EQ(m.samples.size(), 3u);
  EXPECT_EQ(m.method, timing_name(TimingMethod::kHostSteadyClock));
  ASSERT_EQ(m.metrics.size(), 2u);
  EXPECT_EQ(m.metrics[0].name, "alloc_time");
  EXPECT_EQ(m.metrics[1].name, "free_time");
  for (const auto& s : m.samples) {
    EXPECT_GT(s[0], 0.0);
    EXPECT_GT(s[1], 0.0);
    EXPECT_LT(s[0], 1.0) << "one 2 MiB allocation took a second";
  }
  EXPECT_TRUE(m.metrics[0].distribution.has_value()) << "per-operation distribution";
  EXPECT_GE(m.operations_per_sample, 8u);
  expect_checks_pass_and_memory_returned(m);
  ASSERT_NE(m.check("allocation_usable"), nullptr);
  ASSERT_NE(m.check("allocator"), nullptr);
}

TEST(DeviceMemoryGpu, CudaMallocAllocFree) {
  PATHBENCH_REQUIRE_GPU();
  expect_alloc_free_ok({{"allocator", "cuda_malloc"}});
}
TEST(DeviceMemoryGpu, PoolAllocFreeBothThresholds) {
  PATHBENCH_REQUIRE_GPU();
  expect_alloc_free_ok({{"allocator", "pool"}, {"release_threshold", "0"}});
  expect_alloc_free_ok({{"allocator", "pool"}, {"release_threshold", "unbounded"}});
}
TEST(DeviceMemoryGpu, VmmAllocFree) {
  PATHBENCH_REQUIRE_GPU();
  expect_alloc_free_ok({{"allocator", "vmm"}});
}
TEST(DeviceMemoryGpu, CachingAllocFree) {
  PATHBENCH_REQUIRE_GPU();
  expect_alloc_free_ok({{"allocator", "caching"}});
}

// The replay's metrics and checks; returns the case for more (a helper that returns a value
// cannot ASSERT: it reports and returns early instead).
MeasuredCase expect_fragmentation_ok(nlohmann::ordered_json params, std::size_t metrics = 4) {
  params["measure"] = "fragmentation";
  params["seed"] = 1;
  params["budget_pct"] = 10;
  auto m = run(dm_case(params), 2);
  if (!m.skipped.empty()) return m;
  EXPECT_EQ(m.samples.size(), 2u);
  EXPECT_EQ(m.metrics.size(), metrics);
  if (m.samples.size() != 2u || m.metrics.size() != metrics) return m;
  const Check* largest = m.check("largest_block");
  if (largest == nullptr) {
    ADD_FAILURE() << "no largest_block check";
    return m;
  }
  const auto pool_idle = largest->value.at("pool_idle").get<std::uint64_t>();
  for (const auto& s : m.samples) {
    EXPECT_GT(s[0], 0.0) << "largest_block";
    EXPECT_GT(s[1], 0.0) << "reported_free";
    // The pool may hand out its own idle bytes beyond what the driver reports free.
    EXPECT_LE(s[0], s[1] + static_cast<double>(pool_idle)) << "largest_block <= free";
    EXPECT_GE(s[2], 0.0);
    EXPECT_LE(s[2], 1.0);
    EXPECT_GT(s[3], 0.0) << "allocations_until_oom";
  }
  expect_checks_pass_and_memory_returned(m);
  EXPECT_NE(m.check("replay_resident"), nullptr);
  EXPECT_NE(m.check("oom_reached"), nullptr);
  EXPECT_NE(m.check("pattern"), nullptr);
  return m;
}

TEST(DeviceMemoryGpu, CudaMallocFragmentation) {
  PATHBENCH_REQUIRE_GPU();
  const auto m = expect_fragmentation_ok({{"allocator", "cuda_malloc"}});
  PATHBENCH_SKIP_IF_SKIPPED(m);
  EXPECT_EQ(m.check("pool_steps"), nullptr) << "no pool, no pool steps";
}

// The pool's replay for one threshold: its pool_steps check passed (the threshold behaved as
// documented) and the series has every step; the sync figures of each sample (`skipped` gets
// the reason when the case was skipped).
struct PoolSync {
  double reserved = 0, used = 0, released = 0, trimmed = 0;
};
std::vector<PoolSync> pool_replay(const char* threshold, std::size_t metrics,
                                  std::string* skipped = nullptr) {
  const auto m =
      expect_fragmentation_ok({{"allocator", "pool"}, {"release_threshold", threshold}}, metrics);
  std::vector<PoolSync> out;
  if (!m.skipped.empty()) {
    if (skipped != nullptr) *skipped = m.skipped;
    return out;
  }
  const Check* steps = m.check("pool_steps");
  if (steps == nullptr) {
    ADD_FAILURE() << "no pool_steps check";
    return out;
  }
  EXPECT_TRUE(steps->passed) << steps->detail;
  EXPECT_TRUE(steps->value.is_array());
  EXPECT_GE(steps->value.size(), 7u);
  for (const auto& s : m.samples) {
    if (s.size() < metrics) continue;
    EXPECT_LE(s[5], s[4]) << threshold << ": used_after_sync <= reserved_after_sync";
    out.push_back({s[4], s[5], s[6], metrics > 7 ? s[7] : 0.0});
  }
  return out;
}

TEST(DeviceMemoryGpu, PoolFragmentation) {
  PATHBENCH_REQUIRE_GPU();
  std::string skipped;
  const auto zero = pool_replay("0", 7, &skipped);
  if (!skipped.empty()) GTEST_SKIP() << skipped;
  // The holes empty whole chunks (256 MiB blocks among them): threshold 0 gives them back at the
  // synchronisation after the frees, not at cudaFreeAsync.
  for (const auto& s : zero) EXPECT_GT(s.released, 0.0) << "threshold 0 released nothing at sync";
  for (const auto& s : pool_replay("unbounded", 7)) {
    EXPECT_EQ(s.released, 0.0) << "an unbounded pool released memory at a synchronisation";
  }
  for (const auto& s : pool_replay("trim_to_zero", 8)) {
    EXPECT_EQ(s.released, 0.0) << "trim_to_zero is unbounded until its trim";
    EXPECT_GT(s.trimmed, 0.0) << "cudaMemPoolTrimTo(pool, 0) released nothing";
  }
}

TEST(DeviceMemoryGpu, CachingFragmentationEndsInAnOutOfMemoryWithCachedBytes) {
  PATHBENCH_REQUIRE_GPU();
  auto params = nlohmann::ordered_json{
      {"allocator", "caching"}, {"measure", "fragmentation"}, {"seed", 1}, {"budget_pct", 10}};
  const auto m = run(dm_case(params), 2);
  PATHBENCH_SKIP_IF_SKIPPED(m);
  ASSERT_EQ(m.samples.size(), 2u);
  ASSERT_EQ(m.metrics.size(), 6u);
  EXPECT_EQ(m.metrics[0].name, "allocations_until_oom");
  for (const auto& s : m.samples) {
    EXPECT_GT(s[0], 0.0) << "256 MiB segments fit the 90 % the replay left";
    EXPECT_LT(s[1], static_cast<double>(std::uint64_t{2} << 30))
        << "free_at_oom: cudaMalloc refused a 256 MiB segment";
    EXPECT_GE(s[2], s[3]) << "reserved >= allocated";
    EXPECT_DOUBLE_EQ(s[4], s[2] - s[3]) << "reserved_unused = reserved - allocated";
    EXPECT_GT(s[4], 0.0) << "the replay's holes stay cached";
    EXPECT_LT(s[5], static_cast<double>(std::uint64_t{256} << 20)) << "no cached block fit";
  }
  expect_checks_pass_and_memory_returned(m);
  const Check* oom = m.check("oom_reached");
  ASSERT_NE(oom, nullptr);
  EXPECT_EQ(oom->value.at("failed_request").get<std::uint64_t>(), std::uint64_t{256} << 20);
  EXPECT_NE(m.check("segments_resident"), nullptr);
}

TEST(DeviceMemoryGpu, VmmFragmentation) {
  PATHBENCH_REQUIRE_GPU();
  const auto m = expect_fragmentation_ok({{"allocator", "vmm"}});
  PATHBENCH_SKIP_IF_SKIPPED(m);
}

}  // namespace
}  // namespace pathbench::test_device_memory_gpu
