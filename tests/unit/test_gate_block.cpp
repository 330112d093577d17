// The gate block's one rule (result/gate_block.hpp): a metric's entry as a percentage or as
// {"statistic", "threshold_pct"}, the exact refusals, and what metric_gate reads from a block.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "result/gate_block.hpp"

namespace pathbench::test_gate_block {
namespace {

using ojson = nlohmann::ordered_json;

// The message check_gate_block refuses `text` with, or "accepted".
std::string refusal(const std::string& text) {
  try {
    check_gate_block(ojson::parse(text), "s.json", "/scenarios/0/gate");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(GateBlock, AcceptsAStatisticEntryBesideNumbers) {
  EXPECT_EQ(refusal(R"({"threshold_pct": 25, "metrics": {"h2d_latency": {"statistic": "p99",
                       "threshold_pct": 50}, "throughput": 10}})"),
            "accepted");
  for (const char* statistic : {"median", "p50", "p90", "p99", "p99.9", "max"}) {
    EXPECT_EQ(refusal(std::string(R"({"metrics": {"x": {"statistic": ")") + statistic + "\"}}}"),
              "accepted")
        << statistic;
  }
  EXPECT_EQ(refusal(R"({"metrics": {"x": {"threshold_pct": 1000}}})"), "accepted");
  EXPECT_EQ(refusal(R"({"metrics": {"x": {"threshold_pct": 0.5, "statistic": "max"}}})"),
            "accepted");
}

TEST(GateBlock, RefusesABadStatisticEntryNamingThePointer) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"metrics": {"h2d_latency": {"statistic": "p95", "threshold_pct": 50}}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency/statistic: expected one of median, p50, "
       "p90, p99, p99.9, max, found \"p95\""},
      {R"({"metrics": {"h2d_latency": {"statistic": "P99"}}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency/statistic: expected one of median, p50, "
       "p90, p99, p99.9, max, found \"P99\""},
      {R"({"metrics": {"h2d_latency": {"statistic": 99}}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency/statistic: expected one of median, p50, "
       "p90, p99, p99.9, max, found 99"},
      {R"({"metrics": {"h2d_latency": {"statistic": null}}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency/statistic: expected one of median, p50, "
       "p90, p99, p99.9, max, found null"},
      {R"({"metrics": {"h2d_latency": {"statistic": "p99", "threshold": 20}}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency/threshold: unknown field (known fields: "
       "statistic, threshold_pct, fixed)"},
      {R"({"metrics": {"h2d_latency": {"statistic": "p99", "fixed": "yes"}}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency/fixed: expected true or false, found "
       "\"yes\""},
      {R"({"threshold_pct": 5, "fixed": 1})",
       "s.json: /scenarios/0/gate/fixed: expected true or false, found 1"},
      {R"({"metrics": {"h2d_latency": {"statistic": "p99", "threshold_pct": 0}}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency/threshold_pct: expected a percentage in "
       "(0, 1000], found 0"},
      {R"({"metrics": {"h2d_latency": {"statistic": "p99", "threshold_pct": 1000.5}}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency/threshold_pct: expected a percentage in "
       "(0, 1000], found 1000.5"},
      {R"({"metrics": {"h2d_latency": {"statistic": "p99", "threshold_pct": -20}}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency/threshold_pct: expected a percentage in "
       "(0, 1000], found -20"},
      {R"({"metrics": {"h2d_latency": {"statistic": "p99", "threshold_pct": "20"}}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency/threshold_pct: expected a percentage in "
       "(0, 1000], found \"20\""},
      {R"({"metrics": {"h2d_latency": {}}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency: an empty object: give statistic (one of "
       "median, p50, p90, p99, p99.9, max), threshold_pct, or both"},
      {R"({"metrics": {"h2d_latency": "p99"}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency: expected a percentage in (0, 1000] or an "
       "object {\"statistic\": ..., \"threshold_pct\": ...}, found \"p99\""},
      {R"({"metrics": {"h2d_latency": [20]}})",
       "s.json: /scenarios/0/gate/metrics/h2d_latency: expected a percentage in (0, 1000] or an "
       "object {\"statistic\": ..., \"threshold_pct\": ...}, found [20]"},
      // A number keeps its old message.
      {R"({"metrics": {"bandwidth": 0}})",
       "s.json: /scenarios/0/gate/metrics/bandwidth: expected a percentage in (0, 1000], found 0"},
      {R"({"metrics": {"a/b": {"statistic": "p1"}}})",
       "s.json: /scenarios/0/gate/metrics/a~1b/statistic: expected one of median, p50, p90, p99, "
       "p99.9, max, found \"p1\""},
  };
  for (const auto& [text, message] : bad) EXPECT_EQ(refusal(text), message) << text;
}

TEST(GateBlock, MetricGateReadsTheEntry) {
  const ojson gate = ojson::parse(R"({"threshold_pct": 25, "metrics": {
      "h2d_latency": {"statistic": "p99", "threshold_pct": 50},
      "request_latency": {"statistic": "p99.9"},
      "throughput": 10,
      "copies_issued": {"threshold_pct": 3}}})");
  check_gate_block(gate, "s.json", "/gate");

  const MetricGate h2d = metric_gate(gate, "h2d_latency");
  EXPECT_TRUE(h2d.named);
  EXPECT_EQ(h2d.statistic, "p99");
  EXPECT_FALSE(h2d.median());
  EXPECT_EQ(h2d.threshold_pct, 50.0);

  const MetricGate request = metric_gate(gate, "request_latency");
  EXPECT_EQ(request.statistic, "p99.9");
  EXPECT_EQ(request.threshold_pct, 25.0) << "no threshold of its own: the block's";

  const MetricGate throughput = metric_gate(gate, "throughput");
  EXPECT_TRUE(throughput.median());
  EXPECT_EQ(throughput.threshold_pct, 10.0);

  const MetricGate copies = metric_gate(gate, "copies_issued");
  EXPECT_TRUE(copies.median());
  EXPECT_EQ(copies.threshold_pct, 3.0);

  const MetricGate other = metric_gate(gate, "pool_waits");
  EXPECT_FALSE(other.named);
  EXPECT_TRUE(other.median());
  EXPECT_EQ(other.threshold_pct, 25.0);

  const MetricGate none = metric_gate(nullptr, "h2d_latency");
  EXPECT_FALSE(none.named);
  EXPECT_TRUE(none.median());
  EXPECT_FALSE(none.threshold_pct.has_value()) << "the command line's default applies";
  EXPECT_EQ(gate_statistic_names(), "median, p50, p90, p99, p99.9, max");
}

}  // namespace
}  // namespace pathbench::test_gate_block
