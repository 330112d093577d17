// GPU tests of the serving family, through the CLI's case runner. Label `gpu`; they skip without a
// device.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "bench/serving.hpp"
#include "inventory/inventory.hpp"
#include "runner_case.hpp"
#include "scenario/expansion.hpp"
#include "test_gpu_common.hpp"

namespace pathbench::test_serving_gpu {
namespace {

CaseSpec serving_case(nlohmann::ordered_json params) {
  CaseSpec spec;
  spec.family = "serving";
  spec.scenario = "test";
  spec.params = std::move(params);
  spec.id = case_id("serving", spec.params);
  spec.min_time = 0.01;
  return spec;
}

MeasuredCase measure(const CaseSpec& spec, int samples = 3) {
  return run_case(*make_serving_family(), spec, machine_from(collect_inventory({})), samples);
}

// A C string, not a std::string: GCC 13 takes a reference returned from a call with a temporary
// std::string argument for a dangling one (-Wdangling-reference), though it points into `m`.
const MetricResult& metric(const MeasuredCase& m, const char* name) {
  for (const auto& x : m.metrics) {
    if (x.name == name) return x;
  }
  throw std::runtime_error(std::string("no metric ") + name);
}

// The per-request H2D distribution is there, consistent, and every check passed.
const OperationDistribution& expect_sound(const MeasuredCase& m, std::uint64_t requests,
                                          int samples = 3) {
  for (const auto& c : m.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  EXPECT_NE(m.check("request_data"), nullptr);
  EXPECT_NE(m.check("thread_placement"), nullptr);
  const auto& h2d = metric(m, "h2d_latency");
  const auto& req = metric(m, "request_latency");
  EXPECT_TRUE(h2d.distribution.has_value());
  EXPECT_TRUE(req.distribution.has_value());
  static const OperationDistribution empty;
  if (!h2d.distribution || !req.distribution) return empty;
  const auto& d = *h2d.distribution;
  EXPECT_EQ(d.operations, requests * static_cast<std::uint64_t>(samples));
  EXPECT_EQ(d.repetitions(), static_cast<std::size_t>(samples));
  EXPECT_GT(d.statistic("p50"), 0.0);
  EXPECT_LE(d.statistic("p50"), d.statistic("p99"));
  EXPECT_LE(d.statistic("p99"), d.statistic("max"));
  // The whole request includes its H2D copy.
  EXPECT_GE(req.distribution->statistic("p50"), d.statistic("p50"));
  EXPECT_GT(metric(m, "throughput").stats.median, 0.0);
  return d;
}

TEST(ServingGpu, EveryStrategyDeliversEveryRequestsData) {
  PATHBENCH_REQUIRE_GPU();
  std::map<std::string, double> p50;
  for (const char* strategy : {"preallocated_pinned", "pageable", "pin_per_request", "pinned_pool",
                               "pinned_pool_chunked"}) {
    SCOPED_TRACE(strategy);
    nlohmann::ordered_json params = {
        {"strategy", strategy}, {"request_bytes", 65536}, {"requests", 500}};
    if (std::string(strategy) == "pinned_pool_chunked") params["chunk_bytes"] = 16384;
    const MeasuredCase m = measure(serving_case(params));
    ASSERT_TRUE(m.skipped.empty()) << m.skipped;
    p50[strategy] = expect_sound(m, 500).statistic("p50");
    const bool pooled = std::string(strategy).rfind("pinned_pool", 0) == 0;
    EXPECT_EQ(m.check("pool_bound") != nullptr, pooled);
    // One request at a time: the pool never runs out.
    if (pooled) {
      EXPECT_EQ(metric(m, "pageable_fallbacks").stats.max, 0.0);
    }
    std::printf("[   INFO   ] %s 64 KiB: h2d p50 %.1f us\n", strategy, p50[strategy] * 1e6);
  }
  // Registering and unregistering per request costs far more than the copy (docs/measurements.md:
  // 104 us against 9.4 us on the H200).
  EXPECT_GT(p50["pin_per_request"], 2 * p50["preallocated_pinned"]);
}

TEST(ServingGpu, ARequestQueuesBehindABulkCopyInItsOwnDirection) {
  PATHBENCH_REQUIRE_GPU();
  std::map<std::string, double> p50;
  for (const char* background : {"same_direction", "opposite_direction"}) {
    const MeasuredCase m = measure(serving_case({{"strategy", "preallocated_pinned"},
                                                 {"request_bytes", 65536},
                                                 {"requests", 100},
                                                 {"background", background},
                                                 {"bulk_bytes", 64 << 20}}));
    ASSERT_TRUE(m.skipped.empty()) << m.skipped;
    p50[background] = expect_sound(m, 100).statistic("p50");
    std::printf("[   INFO   ] behind 64 MiB %s: h2d p50 %.1f us\n", background,
                p50[background] * 1e6);
  }
  // 64 MiB takes over a millisecond on any PCIe link; the other direction has its own engine.
  EXPECT_GT(p50["same_direction"], 5 * p50["opposite_direction"]);
}

TEST(ServingGpu, PoissonArrivalsThroughASmallPoolKeepItsBound) {
  PATHBENCH_REQUIRE_GPU();
  const MeasuredCase m = measure(serving_case({{"strategy", "pinned_pool"},
                                               {"request_bytes", 262144},
                                               {"response_bytes", 16384},
                                               {"kernel_us", 50},
                                               {"arrival", "poisson"},
                                               {"rate_per_s", 20000},
                                               {"submitters", 2},
                                               {"pool_slots", 2},
                                               {"requests", 1000}}));
  ASSERT_TRUE(m.skipped.empty()) << m.skipped;
  expect_sound(m, 1000);
  ASSERT_NE(m.check("pool_bound"), nullptr);
  EXPECT_LE(metric(m, "pool_high_water").stats.max, 2.0 * 262144);
  std::printf("[   INFO   ] poisson pool of 2: fallbacks per repetition %.0f, waits %.0f\n",
              metric(m, "pageable_fallbacks").stats.median, metric(m, "pool_waits").stats.median);
}

TEST(ServingGpu, TheGpuTimelineTimesEachRequestsCopyAndTheGapsBetweenSteps) {
  PATHBENCH_REQUIRE_GPU();
  for (const char* strategy : {"preallocated_pinned", "pinned_pool_chunked", "pageable"}) {
    SCOPED_TRACE(strategy);
    nlohmann::ordered_json params = {{"strategy", strategy}, {"request_bytes", 65536},
                                     {"requests", 400},      {"arrival", "poisson"},
                                     {"rate_per_s", 20000},  {"submitters", 2},
                                     {"gpu_timeline", "on"}};
    // Four chunks per request: the request's GPU time spans all of them.
    if (std::string(strategy) == "pinned_pool_chunked") params["chunk_bytes"] = 16384;
    const MeasuredCase m = measure(serving_case(params));
    ASSERT_TRUE(m.skipped.empty()) << m.skipped;
    const auto& host = expect_sound(m, 400);
    ASSERT_NE(m.check("timeline_steps"), nullptr);
    ASSERT_NE(m.check("timeline_complete"), nullptr);
    const auto& gpu = metric(m, "h2d_gpu_time");
    const auto& gap = metric(m, "step_gap");
    ASSERT_TRUE(gpu.distribution.has_value());
    ASSERT_TRUE(gap.distribution.has_value());
    EXPECT_EQ(gpu.distribution->operations, 3u * 400);
    // Every step after a repetition's first has a gap (0 when the GPU was busy with a step).
    EXPECT_EQ(gap.distribution->operations, 3u * 399);
    // 64 KiB moves in about a microsecond on PCIe Gen5; the host sees that plus the API calls
    // and its wait, so the GPU's own time is the shorter.
    const double gpu_p50 = gpu.distribution->statistic("p50");
    EXPECT_GT(gpu_p50, 0.3e-6);
    EXPECT_LT(gpu_p50, host.statistic("p50"));
    // 20,000 requests/s leave the GPU idle most of the time: the median gap is tens of µs.
    EXPECT_GT(gap.distribution->statistic("p50"), 5e-6);
    std::printf(
        "[   INFO   ] %s poisson 20k/s: h2d host p50 %.1f us, GPU p50 %.2f us p99 %.2f us; "
        "step gap p50 %.1f us\n",
        strategy, host.statistic("p50") * 1e6, gpu_p50 * 1e6,
        gpu.distribution->statistic("p99") * 1e6, gap.distribution->statistic("p50") * 1e6);
  }
}

TEST(ServingGpu, ATraceOfMixedSizesIsReplayedAndVerified) {
  PATHBENCH_REQUIRE_GPU();
  const auto path = std::filesystem::temp_directory_path() / "pathbench-serving-trace.jsonl";
  {
    std::ofstream out(path);
    // Sizes that are not multiples of a page or of 8, a request with no input, responses.
    const std::uint64_t sizes[] = {65536, 4100, 12, 0, 1 << 20, 300000};
    for (int i = 0; i < 300; ++i) {
      out << "{\"time_s\": " << i * 50e-6 << ", \"h2d_bytes\": " << sizes[i % 6]
          << ", \"d2h_bytes\": " << (i % 3) * 5000 << ", \"kernel_us\": " << (i % 4) * 5 << "}\n";
    }
  }
  for (const char* strategy : {"pinned_pool_chunked", "pin_per_request", "preallocated_pinned"}) {
    SCOPED_TRACE(strategy);
    nlohmann::ordered_json params = {
        {"strategy", strategy}, {"arrival", "trace"}, {"trace", path.string()}, {"submitters", 2}};
    if (std::string(strategy) == "pinned_pool_chunked") {
      params["chunk_bytes"] = 16384;
      params["pool_slots"] = 4;
    }
    const MeasuredCase m = measure(serving_case(params));
    ASSERT_TRUE(m.skipped.empty()) << m.skipped;
    const auto& d = expect_sound(m, 300);
    std::printf("[   INFO   ] trace through %s: h2d p50 %.1f us, p99 %.1f us\n", strategy,
                d.statistic("p50") * 1e6, d.statistic("p99") * 1e6);
  }
  std::filesystem::remove(path);
}

TEST(ServingGpu, CoalescedRequestsShareTransfersAndBatchSizeCountsThem) {
  PATHBENCH_REQUIRE_GPU();
  // 50,000 requests/s on one submitter (20 us apart on average) into 200 us windows of at most 8:
  // nearly every window fills, so a transfer carries several requests.
  const std::uint64_t requests = 2000;
  const MeasuredCase m = measure(serving_case({{"strategy", "coalesced"},
                                               {"request_bytes", 16384},
                                               {"response_bytes", 4096},
                                               {"kernel_us", 5},
                                               {"arrival", "poisson"},
                                               {"rate_per_s", 50000},
                                               {"submitters", 1},
                                               {"coalesce_us", 200},
                                               {"coalesce_max", 8},
                                               {"requests", requests}}));
  ASSERT_TRUE(m.skipped.empty()) << m.skipped;
  expect_sound(m, requests);
  const MetricResult& batch = metric(m, "batch_size");
  ASSERT_EQ(batch.samples.size(), metric(m, "copies_issued").samples.size());
  for (std::size_t i = 0; i < batch.samples.size(); ++i) {
    const double b = batch.samples[i];
    EXPECT_GT(b, 2.0) << "repetition " << i;
    EXPECT_LE(b, 8.0) << "repetition " << i;
    // Every response is its own D2H copy; the inputs went in requests / batch_size transfers.
    EXPECT_NEAR(metric(m, "copies_issued").samples[i], requests + requests / b, 0.5)
        << "repetition " << i;
  }
  const auto& wait = metric(m, "coalesce_wait");
  ASSERT_TRUE(wait.distribution.has_value());
  EXPECT_GT(wait.distribution->statistic("p50"), 0.0);
  std::printf("[   INFO   ] coalesced 200 us / 8: batch_size %.2f, coalesce_wait p50 %.1f us\n",
              batch.stats.median, wait.distribution->statistic("p50") * 1e6);
}

}  // namespace
}  // namespace pathbench::test_serving_gpu
