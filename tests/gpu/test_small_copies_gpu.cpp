// GPU tests of the small_copies family, through the Family API only (this file is compiled by the
// host compiler). Label `gpu`; they skip without a device.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/small_copies.hpp"
#include "inventory/inventory.hpp"
#include "measure/family.hpp"
#include "runner_case.hpp"
#include "scenario/expansion.hpp"
#include "test_gpu_common.hpp"

namespace pathbench::test_small_copies_gpu {
namespace {

CaseSpec small_copies_case(const std::string& method, std::int64_t count, std::int64_t bytes,
                           const std::string& direction = "h2d") {
  CaseSpec spec;
  spec.family = "small_copies";
  spec.scenario = "test";
  spec.params = {{"method", method}, {"direction", direction}, {"count", count}, {"bytes", bytes}};
  spec.id = case_id("small_copies", spec.params);
  spec.min_time = 0.02;
  return spec;
}

// Through the CLI's case runner.
MeasuredCase measure(const CaseSpec& spec, int samples = 3) {
  return run_case(*make_small_copies_family(), spec, machine_from(collect_inventory({})), samples);
}

// Every check passed, and the family's own checks are among them.
void expect_small_copies_checks_pass(const MeasuredCase& m) {
  expect_checks_pass(m);
  for (const auto* name : {"copy_pattern", "copies_issued", "host_memory_kind", "batch_timing"}) {
    EXPECT_NE(m.check(name), nullptr) << name;
  }
}

const std::vector<std::string> kMethods = {"individual", "coalesced", "batched", "graph",
                                           "gather_kernel"};

TEST(SmallCopiesGpu, EveryMethodMovesTheDataAndCountsItsCalls) {
  PATHBENCH_REQUIRE_GPU();
  constexpr std::int64_t kCount = 256;
  constexpr std::int64_t kBytes = 4096;
  std::map<std::string, MeasuredCase> results;
  for (const auto& method : kMethods) {
    SCOPED_TRACE(method);
    MeasuredCase m = measure(small_copies_case(method, kCount, kBytes));
    if (!m.skipped.empty()) {
      // Only batched may be unavailable (driver or runtime older than CUDA 12.8).
      EXPECT_EQ(method, "batched") << m.skipped;
      std::printf("[   SKIP   ] %s: %s\n", method.c_str(), m.skipped.c_str());
      continue;
    }
    ASSERT_EQ(m.samples.size(), 3u);
    EXPECT_EQ(m.method, timing_name(TimingMethod::kCudaEventsLatched));
    ASSERT_GE(m.metrics.size(), 4u);
    EXPECT_EQ(m.metrics[0].name, "time_per_batch");
    EXPECT_EQ(m.metrics[1].name, "bandwidth");
    EXPECT_EQ(m.metrics[2].name, "api_calls_per_batch");
    EXPECT_EQ(m.metrics[3].name, "issue_cpu_time");
    EXPECT_GE(m.operations_per_sample, 1u);
    const double expected_calls = method == "individual" ? kCount : 1;
    for (const auto& s : m.samples) {
      EXPECT_GT(s[0], 0.0);
      EXPECT_LT(s[0], 0.1);  // 1 MiB in a batch takes micro- to milliseconds
      EXPECT_GT(s[1], 0.0);
      EXPECT_EQ(s[2], expected_calls);
      EXPECT_GT(s[3], 0.0);
      // The GB/s figure is the batch's bytes over its time.
      EXPECT_NEAR(s[1], kCount * kBytes / s[0] / 1e9, s[1] * 1e-9);
    }
    expect_small_copies_checks_pass(m);
    const Check* issued = m.check("copies_issued");
    ASSERT_NE(issued, nullptr);
    EXPECT_EQ(issued->value.at("expected_api_calls_per_batch").get<double>(), expected_calls);
    EXPECT_EQ(issued->value.at("api_calls_per_batch").get<double>(), expected_calls);
    if (method == "graph") {
      EXPECT_EQ(issued->value.at("graph_nodes").get<std::int64_t>(), kCount);
    }
    if (method == "coalesced") {
      ASSERT_EQ(m.metrics.size(), 6u);
      EXPECT_EQ(m.metrics[4].name, "pack_time");
      EXPECT_EQ(m.metrics[5].name, "copy_time");
      for (const auto& s : m.samples) {
        EXPECT_GT(s[4], 0.0);
        EXPECT_GT(s[5], 0.0);
        EXPECT_NEAR(s[0], s[4] + s[5], s[0] * 1e-9);
      }
    } else {
      EXPECT_EQ(m.metrics.size(), 4u);
    }
    results.emplace(method, std::move(m));
  }
  ASSERT_TRUE(results.count("individual") && results.count("coalesced"));
  // 256 separate 4 KiB copies cost far more GPU time than packing 1 MiB on the host and copying
  // it once (conservative: on an H200 over PCIe Gen5 the ratio is larger).
  const double individual = results.at("individual").median("time_per_batch");
  const double coalesced = results.at("coalesced").median("time_per_batch");
  EXPECT_GT(individual, 3 * coalesced)
      << "individual " << individual << " s per batch vs coalesced " << coalesced << " s";
  // Issuing 256 copy calls costs more CPU than one kernel launch. (Not than one graph launch:
  // on the H200 with driver 580 launching a graph of 256 copy nodes took as much CPU as issuing
  // the 256 copies — 424 vs 365 us — because the driver still pushes every node.)
  EXPECT_GT(results.at("individual").median("issue_cpu_time"),
            results.at("gather_kernel").median("issue_cpu_time"));
}

TEST(SmallCopiesGpu, DeviceToHostIntoScatteredPieces) {
  PATHBENCH_REQUIRE_GPU();
  for (const auto* method : {"individual", "coalesced", "batched", "graph"}) {
    SCOPED_TRACE(method);
    const MeasuredCase m = measure(small_copies_case(method, 64, 4096 + 24, "d2h"), 2);
    if (!m.skipped.empty()) {
      EXPECT_EQ(std::string(method), "batched") << m.skipped;
      continue;
    }
    ASSERT_EQ(m.samples.size(), 2u);
    expect_small_copies_checks_pass(m);
  }
}

TEST(SmallCopiesGpu, OddSizesAndSinglePieces) {
  PATHBENCH_REQUIRE_GPU();
  // Odd piece sizes take the gather kernel's byte path and put every piece at an odd offset of
  // the device buffer; one piece and one byte are the degenerate batches.
  for (const auto& method : kMethods) {
    SCOPED_TRACE(method);
    for (const auto& [count, bytes] : std::vector<std::pair<std::int64_t, std::int64_t>>{
             {37, 1001}, {1, 1}, {3, (1 << 20) + 3}}) {
      SCOPED_TRACE(std::to_string(count) + " x " + std::to_string(bytes));
      const MeasuredCase m = measure(small_copies_case(method, count, bytes), 2);
      if (!m.skipped.empty()) {
        EXPECT_EQ(method, "batched") << m.skipped;
        continue;
      }
      expect_small_copies_checks_pass(m);
    }
  }
}

}  // namespace
}  // namespace pathbench::test_small_copies_gpu
