// GPU tests of the unified_memory family, through the Family API. Label `gpu`; they skip without
// a device (or on a device whose managed memory cannot fault, saying why).
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "bench/unified_memory.hpp"
#include "inventory/inventory.hpp"
#include "measure/family.hpp"
#include "runner_case.hpp"
#include "scenario/expansion.hpp"
#include "test_gpu_common.hpp"

namespace pathbench::test_unified_memory_gpu {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;

CaseSpec um_case(const std::string& method, std::int64_t stride, std::int64_t bytes) {
  return gpu_test_case("unified_memory",
                       {{"method", method}, {"stride", stride}, {"bytes", bytes}});
}

// Through the CLI's case runner. Only prepare may skip (a device whose managed memory cannot
// fault); a requirement this GPU machine does not meet fails.
MeasuredCase run(const CaseSpec& spec, int samples = 3) {
  return run_required(*make_unified_memory_family(), spec, samples);
}

TEST(UnifiedMemoryGpu, FaultAt64KiBIsTimedVerifiedAndFaultDriven) {
  PATHBENCH_REQUIRE_GPU();
  const auto m = run(um_case("fault", 64 * kKiB, 256 * kMiB));
  PATHBENCH_SKIP_IF_SKIPPED(m);
  ASSERT_EQ(m.samples.size(), 3u);
  EXPECT_EQ(m.method, timing_name(TimingMethod::kCudaEventsLatched));
  ASSERT_EQ(m.metrics.size(), 3u);
  EXPECT_EQ(m.metrics[0].name, "time");
  EXPECT_EQ(m.metrics[1].name, "migration_throughput");
  EXPECT_EQ(m.metrics[2].name, "time_per_mib");
  for (const auto& s : m.samples) {
    EXPECT_GT(s[1], 0.0);
    EXPECT_GT(s[2], 0.0);
  }
  expect_checks_pass(m);
  ASSERT_NE(m.check("touch_data"), nullptr);
  ASSERT_NE(m.check("managed_memory"), nullptr);
  const Check* counters = m.check("um_counters");
  ASSERT_NE(counters, nullptr);
  if (counters->detail.rfind("CUPTI unavailable", 0) == 0) {
    std::cout << "note: " << counters->detail << "\n";
  } else {
    // With the counters, the pass must be shown fault-driven: fault groups counted, or bytes
    // moved to the GPU while only the touch kernel ran (CUPTI loses the fault records at this
    // stride on some drivers; um_counters then says INCOMPLETE).
    const Check* faults = m.check("gpu_fault_groups");
    ASSERT_NE(faults, nullptr);
    EXPECT_TRUE(faults->passed) << faults->detail;
  }
}

TEST(UnifiedMemoryGpu, PrefetchIsFasterThanFaultDrivenMigration) {
  PATHBENCH_REQUIRE_GPU();
  // Every page touched: both move the whole buffer, so the times compare directly.
  const auto fault_dense = run(um_case("fault", 4 * kKiB, 256 * kMiB));
  PATHBENCH_SKIP_IF_SKIPPED(fault_dense);
  const auto prefetch_dense = run(um_case("prefetch", 4 * kKiB, 256 * kMiB));
  PATHBENCH_SKIP_IF_SKIPPED(prefetch_dense);
  expect_checks_pass(fault_dense);
  expect_checks_pass(prefetch_dense);
  EXPECT_LT(prefetch_dense.median("time"), fault_dense.median("time"));
  EXPECT_GT(prefetch_dense.median("migration_throughput"),
            fault_dense.median("migration_throughput"));

  // Every 64 KiB: the fault path moves fewer bytes, each MiB of them much more slowly.
  const auto fault = run(um_case("fault", 64 * kKiB, 256 * kMiB));
  const auto prefetch = run(um_case("prefetch", 64 * kKiB, 256 * kMiB));
  expect_checks_pass(fault);
  expect_checks_pass(prefetch);
  EXPECT_LT(prefetch.median("time_per_mib"), fault.median("time_per_mib"));
  if (const Check* timing = prefetch.check("prefetch_timing")) {
    std::cout << "note: " << timing->detail << "\n";
  } else {
    ADD_FAILURE() << "no prefetch_timing check";
  }
}

TEST(UnifiedMemoryGpu, AdviceIsAppliedAndVerified) {
  PATHBENCH_REQUIRE_GPU();
  for (const char* method : {"advise_preferred_gpu", "advise_accessed_by"}) {
    const auto m = run(um_case(method, 64 * kKiB, 64 * kMiB));
    PATHBENCH_SKIP_IF_SKIPPED(m);
    EXPECT_EQ(m.method, timing_name(TimingMethod::kCudaEventsLatched)) << method;
    for (const auto& s : m.samples) EXPECT_GT(s[0], 0.0) << method;
    expect_checks_pass(m);
    const Check* advice = m.check("advice");
    ASSERT_NE(advice, nullptr) << method;
    EXPECT_TRUE(advice->passed) << advice->detail;
  }
}

// Pages on GPU 0 touched from GPU 1 (and the other way): timed, verified, and moved between the
// GPUs as CUPTI counts it. Skips without two GPUs, saying why.
TEST(UnifiedMemoryGpu, GpuToGpuMigratesPagesBetweenThePairsGpus) {
  const Machine machine = machine_from(collect_inventory({}));
  PATHBENCH_REQUIRE_TWO_GPUS(machine);
  const auto family = make_unified_memory_family();
  for (const char* pair : {"0-1", "1-0"}) {
    for (const char* method : {"gpu_to_gpu", "prefetch_gpu_to_gpu"}) {
      CaseSpec spec = gpu_test_case(
          "unified_memory",
          {{"pair", pair}, {"method", method}, {"stride", 64 * kKiB}, {"bytes", 256 * kMiB}});
      family->derive_params(spec, machine);
      spec.id = case_id("unified_memory", spec.params);
      ASSERT_EQ(family->skip_reason(spec, machine, 0), std::nullopt) << spec.id;
      const auto m = run_case(*family, spec, machine);
      PATHBENCH_SKIP_IF_SKIPPED(m);
      ASSERT_EQ(m.samples.size(), 3u) << spec.id;
      for (const auto& s : m.samples) EXPECT_GT(s[1], 0.0) << spec.id;
      expect_checks_pass(m);
      ASSERT_NE(m.check("peer_link"), nullptr) << spec.id;
      ASSERT_NE(m.check("source_device_properties"), nullptr) << spec.id;
      const Check* counters = m.check("um_counters");
      ASSERT_NE(counters, nullptr);
      std::cout << spec.id << ": " << m.median("time") << " s, " << m.median("migration_throughput")
                << " GB/s; " << counters->detail << "\n";
      if (counters->detail.rfind("CUPTI unavailable", 0) == 0) continue;
      const Check* moved = m.check("device_to_device_migration");
      ASSERT_NE(moved, nullptr) << spec.id;
      EXPECT_TRUE(moved->passed) << moved->detail;
    }
  }
}

TEST(UnifiedMemoryGpu, GpuToCpuFaultsAreHostTimedAndVerified) {
  PATHBENCH_REQUIRE_GPU();
  const auto m = run(um_case("gpu_to_cpu", 4 * kKiB, 64 * kMiB));
  PATHBENCH_SKIP_IF_SKIPPED(m);
  EXPECT_EQ(m.method, timing_name(TimingMethod::kHostSteadyClock));
  for (const auto& s : m.samples) {
    EXPECT_GT(s[1], 0.0);
  }
  expect_checks_pass(m);
}

}  // namespace
}  // namespace pathbench::test_unified_memory_gpu
