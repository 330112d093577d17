// Per-operation distributions: exact percentiles against a sorted reference, per-repetition
// values, the histogram alongside, the JSON form and every refusal of a bad one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "result/result.hpp"
#include "stats/operation_distribution.hpp"
#include "stats/summary.hpp"

namespace pathbench::test_operation_distribution {
namespace {

using ojson = nlohmann::ordered_json;

// Nearest-rank-free reference: NumPy's linear interpolation, written out independently.
double reference_percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::vector<double> lognormal_latencies(std::size_t n, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::lognormal_distribution<double> d(std::log(10e-6), 0.4);
  std::vector<double> v(n);
  for (auto& x : v) x = d(engine);
  return v;
}

OperationDistribution three_repetitions() {
  DistributionRecorder r;
  for (unsigned rep = 0; rep < 3; ++rep) r.add_repetition(lognormal_latencies(2000, 7 + rep));
  return *r.finish();
}

TEST(OperationDistribution, OverallPercentilesAreExactOverEveryOperation) {
  DistributionRecorder r;
  std::vector<double> all;
  for (unsigned rep = 0; rep < 4; ++rep) {
    const auto ops = lognormal_latencies(5000, 100 + rep);
    all.insert(all.end(), ops.begin(), ops.end());
    const double median = r.add_repetition(ops);
    EXPECT_DOUBLE_EQ(median, reference_percentile(ops, 0.5));
  }
  const OperationDistribution d = *r.finish();
  EXPECT_EQ(d.operations, all.size());
  for (const auto& s : kDistributionStatistics) {
    EXPECT_DOUBLE_EQ(d.statistic(s.name), reference_percentile(all, s.quantile)) << s.name;
  }
  EXPECT_DOUBLE_EQ(d.statistic("max"), *std::max_element(all.begin(), all.end()));
  double sum = 0;
  for (double x : all) sum += x;
  EXPECT_NEAR(d.mean, sum / static_cast<double>(all.size()), 1e-18);
}

TEST(OperationDistribution, PerRepetitionValuesAreEachRepetitionsOwn) {
  DistributionRecorder r;
  const std::vector<double> fast = {1e-6, 2e-6, 3e-6};
  const std::vector<double> slow = {1e-3, 5e-3, 2e-3, 4e-3};
  r.add_repetition(fast);
  r.add_repetition(slow);
  const OperationDistribution d = *r.finish();
  EXPECT_EQ(d.repetitions(), 2u);
  EXPECT_EQ(d.repetition_values("max"), (std::vector<double>{3e-6, 5e-3}));
  EXPECT_EQ(d.repetition_values("p50"), (std::vector<double>{2e-6, 3e-3}));
  EXPECT_DOUBLE_EQ(d.repetition_values("p99")[1], reference_percentile(slow, 0.99));
}

TEST(OperationDistribution, TheHistogramAgreesWithTheExactTail) {
  const OperationDistribution d = three_repetitions();
  EXPECT_EQ(d.histogram.count(), d.operations);
  for (const double q : {0.5, 0.99, 0.999}) {
    // Within the histogram's 2-digit bucket width plus one order statistic's gap.
    EXPECT_NEAR(d.histogram.value_at_quantile(q) / d.statistic(q == 0.5    ? "p50"
                                                               : q == 0.99 ? "p99"
                                                                           : "p99.9"),
                1.0, 0.02);
  }
}

TEST(OperationDistribution, BadDurationsAreRefusedAndNothingIsRecorded) {
  DistributionRecorder r;
  EXPECT_THROW(r.add_repetition({}), std::invalid_argument);
  EXPECT_THROW(r.add_repetition({1e-6, -1e-6}), std::invalid_argument);
  EXPECT_THROW(r.add_repetition({std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  EXPECT_THROW(r.add_repetition({std::numeric_limits<double>::infinity()}), std::invalid_argument);
  EXPECT_EQ(r.repetitions(), 0u);
  EXPECT_FALSE(r.finish().has_value());
}

TEST(OperationDistribution, UnknownStatisticNamesAreRefused) {
  const OperationDistribution d = three_repetitions();
  EXPECT_THROW(d.statistic("p95"), std::invalid_argument);
  EXPECT_THROW(d.repetition_values("median"), std::invalid_argument);
  EXPECT_EQ(distribution_statistic_index("p99.9"), 3u);
  EXPECT_FALSE(distribution_statistic_index("P99").has_value());
}

TEST(OperationDistribution, JsonRoundTripIsExact) {
  const OperationDistribution d = three_repetitions();
  const ojson j = to_json(d);
  const OperationDistribution back = distribution_from_json(j, "f.json: /x");
  EXPECT_EQ(back.operations, d.operations);
  EXPECT_EQ(back.mean, d.mean);
  EXPECT_EQ(back.overall, d.overall);
  EXPECT_EQ(back.per_repetition, d.per_repetition);
  EXPECT_TRUE(back.histogram == d.histogram);
  EXPECT_EQ(to_json(back), j);
}

std::string refusal(const ojson& j) {
  try {
    distribution_from_json(j, "f.json: /d");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(OperationDistribution, EveryBadFieldIsNamed) {
  const ojson good = to_json(three_repetitions());
  auto with = [&](const std::string& pointer, const ojson& value) {
    ojson j = good;
    j[ojson::json_pointer(pointer)] = value;
    return j;
  };
  auto without = [&](const std::string& key) {
    ojson j = good;
    j.erase(key);
    return j;
  };
  EXPECT_EQ(refusal(good), "accepted");
  EXPECT_EQ(refusal(ojson::array()), "f.json: /d: expected an object, found []");
  EXPECT_EQ(refusal(with("/operations", 0)),
            "f.json: /d/operations: expected an integer >= 1, found 0");
  EXPECT_EQ(refusal(with("/operations", 5)),
            "f.json: /d/operations: is 5 but the histogram counts 6000");
  EXPECT_EQ(refusal(with("/p99", -1)), "f.json: /d/p99: expected a finite number >= 0, found -1");
  EXPECT_EQ(refusal(with("/p90", "x")), "f.json: /d/p90: expected a number, found \"x\"");
  EXPECT_EQ(refusal(with("/p99.9", 0.0)),
            "f.json: /d/p99.9: is below p99: percentiles are ordered");
  ojson odd = good;
  odd["a~b"] = 1;
  EXPECT_EQ(refusal(odd), "f.json: /d/a~0b: unknown field");
  EXPECT_EQ(refusal(without("mean")), "f.json: /d: missing field \"mean\"");
  EXPECT_EQ(refusal(with("/per_repetition/p90", ojson::array({1e-6}))),
            "f.json: /d/per_repetition/p90: has 1 values but p50 has 3");
  EXPECT_EQ(refusal(with("/per_repetition/p50", ojson::array())),
            "f.json: /d/per_repetition/p50: expected a non-empty array, one value per repetition");
  EXPECT_EQ(refusal(with("/per_repetition/p10", ojson::array({1}))),
            "f.json: /d/per_repetition/p10: unknown statistic (one of p50, p90, p99, p99.9, max)");
  EXPECT_EQ(refusal(with("/per_repetition/max/1", nullptr)),
            "f.json: /d/per_repetition/max/1: expected a number, found null");
  EXPECT_NE(refusal(with("/histogram/count", 1)).find("f.json: /d/histogram"), std::string::npos);
}

CaseResult case_with_distribution() {
  DistributionRecorder r;
  CaseResult c;
  c.id = "serving/strategy=pinned";
  c.scenario = "s.json";
  c.family = "serving";
  c.timing_method = "host_steady_clock";
  MetricResult m{"request_latency", "s", Better::kLower, {}, {}, std::nullopt};
  for (unsigned rep = 0; rep < 3; ++rep) {
    m.samples.push_back(r.add_repetition(lognormal_latencies(100, rep)));
  }
  m.stats = summarize(m.samples);
  m.distribution = r.finish();
  c.metrics.push_back(m);
  return c;
}

TEST(OperationDistribution, ResultsKeepItAndReadItBack) {
  const CaseResult c = case_with_distribution();
  const ojson j = to_json(c);
  ASSERT_TRUE(j["metrics"]["request_latency"].contains("distribution"));
  const CaseResult back = case_result_from_json(j, "r.json", "/cases/0");
  ASSERT_TRUE(back.metrics[0].distribution.has_value());
  EXPECT_EQ(to_json(back), j);
}

TEST(OperationDistribution, AResultWhoseDistributionDisagreesWithItsSamplesIsRefused) {
  ojson j = to_json(case_with_distribution());
  j["metrics"]["request_latency"]["samples"].push_back(1e-5);
  j["metrics"]["request_latency"]["stats"]["n"] = 4u;
  try {
    case_result_from_json(j, "r.json", "/cases/0");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "r.json: /cases/0/metrics/request_latency/distribution/per_repetition: holds 3 "
                  "repetitions but the metric has 4 samples"),
              std::string::npos)
        << e.what();
  }
  ojson k = to_json(case_with_distribution());
  k["metrics"]["request_latency"]["distribution"]["p50"] = "fast";
  try {
    case_result_from_json(k, "r.json", "/cases/0");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "r.json: /cases/0/metrics/request_latency/distribution/p50: expected a number"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pathbench::test_operation_distribution
