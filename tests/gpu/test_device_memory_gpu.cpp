// GPU tests of the device_memory family, through the CLI's case runner. Label `gpu`; they skip
// without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "bench/device_memory.hpp"
#include "inventory/inventory.hpp"
#include "measure/family.hpp"
#include "runner_case.hpp"
#include "scenario/expansion.hpp"
#include "test_gpu_common.hpp"

namespace pathbench {
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

void expect_fragmentation_ok(nlohmann::ordered_json params) {
  params["measure"] = "fragmentation";
  params["seed"] = 1;
  params["budget_pct"] = 10;
  const auto m = run(dm_case(params), 2);
  PATHBENCH_SKIP_IF_SKIPPED(m);
  ASSERT_EQ(m.samples.size(), 2u);
  ASSERT_EQ(m.metrics.size(), 4u);
  const Check* largest = m.check("largest_block");
  ASSERT_NE(largest, nullptr);
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
  ASSERT_NE(m.check("replay_resident"), nullptr);
  ASSERT_NE(m.check("oom_reached"), nullptr);
  ASSERT_NE(m.check("pattern"), nullptr);
}

TEST(DeviceMemoryGpu, CudaMallocFragmentation) {
  PATHBENCH_REQUIRE_GPU();
  expect_fragmentation_ok({{"allocator", "cuda_malloc"}});
}
TEST(DeviceMemoryGpu, PoolFragmentation) {
  PATHBENCH_REQUIRE_GPU();
  expect_fragmentation_ok({{"allocator", "pool"}, {"release_threshold", "0"}});
}
TEST(DeviceMemoryGpu, VmmFragmentation) {
  PATHBENCH_REQUIRE_GPU();
  expect_fragmentation_ok({{"allocator", "vmm"}});
}

}  // namespace
}  // namespace pathbench
