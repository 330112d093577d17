// pathbench fleet (compare/fleet.hpp, export/fleet_report.hpp) on synthetic fleets with known
// answers: a homogeneous fleet with a realistic spread never flags a node, a planted outlier is
// found with the context field that makes it different, and the rule's false-alarm rate and
// detection power are measured over many random fleets. The nodes' contexts are the real H200
// run's (tests/fixtures/results/h200-default.json).
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/fleet.hpp"
#include "export/fleet_report.hpp"
#include "stats/summary.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_fleet {
namespace {

using ojson = nlohmann::ordered_json;

constexpr const char* kH2d =
    "copy/measure=bandwidth/direction=h2d/host_memory=pinned/host_node=local/bytes=268435456";
constexpr const char* kLatency =
    "copy/measure=latency/direction=h2d/host_memory=pinned/host_node=local/bytes=4";
constexpr const char* kMemcpy =
    "host_memory/measure=memcpy/cpu_node=0/mem_node=0/page=4k/bytes=67108864";

const ojson& h200_context() {
  static const ojson context =
      load_result(std::string(PATHBENCH_FIXTURES) + "/results/h200-default.json").context;
  return context;
}

MetricResult metric(const std::string& name, const std::string& unit, Better better,
                    double median) {
  MetricResult m;
  m.name = name;
  m.unit = unit;
  m.better = better;
  // Five samples whose median is exactly `median`.
  for (double o : {-0.001, 0.0005, 0.0, 0.001, -0.0005}) m.samples.push_back(median * (1 + o));
  m.stats = summarize(m.samples);
  return m;
}

CaseResult make_case(const std::string& id, std::vector<MetricResult> metrics,
                     ojson gate = nullptr) {
  CaseResult c;
  c.id = id;
  c.family = id.substr(0, id.find('/'));
  c.scenario = "default";
  c.timing_method = "cuda_event";
  c.metrics = std::move(metrics);
  c.gate = std::move(gate);
  return c;
}

// One node: an H2D bandwidth (device-timed, default gate 5 %), a latency (lower is better, gate
// 10 %) and a host memcpy bandwidth (host-timed, gate 20 %), as in scenarios/default.json.
struct NodeValues {
  double h2d = 55.5e9, latency = 2.0e-6, memcpy = 6.0e9;
};

FleetInput make_node(const std::string& host, const NodeValues& v, ojson context = h200_context()) {
  context["hostname"] = host;
  FleetInput in;
  in.file = "results/" + host + ".json";
  in.result.context = std::move(context);
  in.result.cases = {
      make_case(kH2d, {metric("bandwidth", "B/s", Better::kHigher, v.h2d)}),
      make_case(kLatency, {metric("time_per_copy", "s", Better::kLower, v.latency)},
                ojson{{"threshold_pct", 10}}),
      make_case(kMemcpy, {metric("bandwidth", "B/s", Better::kHigher, v.memcpy)},
                ojson{{"threshold_pct", 20}}),
  };
  return in;
}

std::string host_name(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "gpu-node-%02d", i);
  return buf;
}

// A fleet of n nodes whose values scatter normally with the spreads seen on the H200 between
// runs (docs/measurements.md): device-timed copies CV 0.3 %, latency 2 %, host memcpy 5 %.
std::vector<FleetInput> homogeneous_fleet(int n, std::mt19937_64& rng, double device_cv = 0.003,
                                          double latency_cv = 0.02, double host_cv = 0.05) {
  std::normal_distribution<double> z(0, 1);
  std::vector<FleetInput> fleet;
  for (int i = 0; i < n; ++i) {
    NodeValues v;
    v.h2d *= 1 + device_cv * z(rng);
    v.latency *= 1 + latency_cv * z(rng);
    v.memcpy *= 1 + host_cv * z(rng);
    fleet.push_back(make_node(host_name(i), v));
  }
  return fleet;
}

const FleetNode* find_node(const FleetGroup& g, const std::string& label) {
  for (const auto& n : g.nodes) {
    if (n.label == label) return &n;
  }
  return nullptr;
}

TEST(Fleet, HomogeneousFleetOfTwentyHasNoOutlier) {
  std::mt19937_64 rng(20261202);
  const FleetReport r = analyze_fleet(homogeneous_fleet(20, rng), {});
  ASSERT_EQ(r.groups.size(), 1u);
  const FleetGroup& g = r.groups.front();
  EXPECT_TRUE(g.judged);
  EXPECT_EQ(g.nodes.size(), 20u);
  EXPECT_EQ(g.metrics.size(), 3u);
  EXPECT_EQ(r.outliers(), 0u);
  EXPECT_EQ(exit_code_of(r), 0);
  // The group median is the median of the nodes, the spread near the planted one.
  const FleetMetric& h2d = g.metrics.front();
  EXPECT_EQ(h2d.case_id, kH2d);
  EXPECT_NEAR(h2d.median, 55.5e9, 55.5e9 * 0.003);
  EXPECT_GT(h2d.spread_pct, 0.1);
  EXPECT_LT(h2d.spread_pct, 0.6);
  EXPECT_EQ(h2d.threshold_pct, 5.0);            // the default
  EXPECT_EQ(g.metrics[2].threshold_pct, 20.0);  // the case's gate block
  for (const auto& n : g.nodes) EXPECT_TRUE(n.differences.empty()) << n.label;
}

TEST(Fleet, PlantedOutlierIsFoundWithItsContextDifference) {
  std::mt19937_64 rng(7);
  auto fleet = homogeneous_fleet(12, rng);
  ojson slow_context = h200_context();
  slow_context["driver_version"] = "570.86.15";
  slow_context["gpus"][0]["pcie_width_current"] = 8;
  NodeValues slow;  // a link trained at x8: bandwidth down, latency up
  slow.h2d = 0.88 * 55.5e9;
  slow.latency = 2.6e-6;
  fleet.push_back(make_node("gpu-node-slow", slow, slow_context));
  const FleetReport r = analyze_fleet(fleet, {});
  ASSERT_EQ(r.groups.size(), 1u);
  const FleetGroup& g = r.groups.front();
  EXPECT_EQ(r.outliers(), 1u);
  EXPECT_EQ(exit_code_of(r), 1);
  ASSERT_FALSE(g.nodes.empty());
  const FleetNode& first = g.nodes.front();  // outliers first
  EXPECT_EQ(first.label, "gpu-node-slow");
  EXPECT_TRUE(first.outlier);
  ASSERT_EQ(first.findings.size(), 2u);
  EXPECT_EQ(first.outlier_metrics, 2u);
  const std::string both = first.findings[0] + first.findings[1];
  EXPECT_NE(both.find(kH2d), std::string::npos) << both;
  EXPECT_NE(both.find("-12.0 %"), std::string::npos) << both;
  EXPECT_NE(both.find(kLatency), std::string::npos) << both;
  EXPECT_GT(first.worst_bad_z, 10);
  bool driver = false, width = false;
  for (const auto& d : first.differences) {
    if (d.field == "driver_version") {
      driver = true;
      EXPECT_EQ(d.node_value, "570.86.15");
      EXPECT_EQ(d.majority_count, 12u);
      EXPECT_EQ(d.others, 12u);
    }
    if (d.field.find("pcie_width_current") != std::string::npos) width = true;
  }
  EXPECT_TRUE(driver);
  EXPECT_TRUE(width);
  // The others differ from the majority in nothing (the slow node is one of twelve others).
  for (std::size_t i = 1; i < g.nodes.size(); ++i) {
    EXPECT_FALSE(g.nodes[i].outlier) << g.nodes[i].label;
    EXPECT_TRUE(g.nodes[i].differences.empty()) << g.nodes[i].label;
  }
}

TEST(Fleet, FasterNodeIsAheadAndOneOutlierMetricIsASuspect) {
  std::mt19937_64 rng(11);
  auto fleet = homogeneous_fleet(10, rng);
  NodeValues fast;
  fast.h2d = 1.10 * 55.5e9;
  fleet.push_back(make_node("gpu-node-fast", fast));
  NodeValues laggy;
  laggy.latency = 2.8e-6;  // +40 %: a lower-is-better metric moving up, and nothing else
  fleet.push_back(make_node("gpu-node-laggy", laggy));
  NodeValues slow;  // both: an outlier
  slow.latency = 2.8e-6;
  slow.memcpy = 0.6 * 6.0e9;
  fleet.push_back(make_node("gpu-node-slow", slow));
  const FleetReport r = analyze_fleet(fleet, {});
  const FleetGroup& g = r.groups.front();
  EXPECT_EQ(r.outliers(), 1u);
  const FleetNode* fast_node = find_node(g, "gpu-node-fast");
  const FleetNode* laggy_node = find_node(g, "gpu-node-laggy");
  const FleetNode* slow_node = find_node(g, "gpu-node-slow");
  ASSERT_TRUE(fast_node && laggy_node && slow_node);
  EXPECT_FALSE(fast_node->outlier);
  EXPECT_FALSE(fast_node->suspect);
  ASSERT_EQ(fast_node->findings.size(), 1u);
  EXPECT_EQ(fast_node->findings[0].rfind("ahead of the group", 0), 0u);
  EXPECT_FALSE(laggy_node->outlier);
  EXPECT_TRUE(laggy_node->suspect);
  EXPECT_NE(laggy_node->findings.at(0).find(kLatency), std::string::npos);
  EXPECT_TRUE(slow_node->outlier);
  EXPECT_EQ(g.nodes[0].label, "gpu-node-slow");   // outliers first,
  EXPECT_EQ(g.nodes[1].label, "gpu-node-laggy");  // then suspects
  // With --min-metrics 1 a single metric is enough.
  FleetOptions strict;
  strict.min_metrics = 1;
  EXPECT_EQ(analyze_fleet(fleet, strict).outliers(), 2u);
}

TEST(Fleet, BothLimitsMustBeExceeded) {
  // A wide host metric 15 % low: within its 20 % threshold, not an outlier.
  std::mt19937_64 rng(3);
  auto fleet = homogeneous_fleet(10, rng);
  NodeValues v;
  v.memcpy = 0.85 * 6.0e9;
  fleet.push_back(make_node("gpu-node-memcpy", v));
  // A tight device metric 4 % low: many spreads away, yet within the 5 % gate threshold.
  NodeValues w;
  w.h2d = 0.96 * 55.5e9;
  fleet.push_back(make_node("gpu-node-h2d", w));
  const FleetReport r = analyze_fleet(fleet, {});
  EXPECT_EQ(r.outliers(), 0u);
  const FleetGroup& g = r.groups.front();
  for (const auto& m : g.metrics) {
    for (const auto& val : m.values) {
      if (m.case_id == kH2d && g.nodes[val.node].label == "gpu-node-h2d") {
        EXPECT_GT(val.bad_z, val.z_limit);  // beyond the z limit alone
      }
    }
  }
}

TEST(Fleet, FalseAlarmRateAndDetectionPowerOverRandomFleets) {
  // 400 homogeneous fleets of 20 with the shipped scenarios' ratio of threshold to spread (the
  // gate thresholds are 3-5x the between-run spread or more): not one node may be flagged.
  // Then with the thresholds shrunk to 0.01 % the z rule alone decides: its per-node false-alarm
  // rate for normal data must stay near alpha / nodes (0.001 / 20 = 5e-5; allowed: 4e-4) although
  // the spread comes from 19 other nodes.
  std::mt19937_64 rng(424242);
  std::size_t alarms = 0, z_alarms = 0, node_metrics = 0;
  FleetOptions z_only;
  z_only.default_threshold_pct = 0.01;
  for (int trial = 0; trial < 400; ++trial) {
    auto fleet = homogeneous_fleet(20, rng);
    alarms += analyze_fleet(fleet, {}).outliers();
    for (auto& node : fleet) {
      for (auto& c : node.result.cases) c.gate = nullptr;  // every metric on the default
    }
    const FleetReport z = analyze_fleet(fleet, z_only);
    for (const auto& m : z.groups.front().metrics) {
      for (const auto& v : m.values) {
        ++node_metrics;
        z_alarms += v.outlier;
      }
    }
  }
  EXPECT_EQ(alarms, 0u);
  const double rate = static_cast<double>(z_alarms) / static_cast<double>(node_metrics);
  EXPECT_LT(rate, 4e-4) << z_alarms << " of " << node_metrics;

  // Power: one node 8 % slow on H2D with 40 % more latency in a fleet of 8 is found every time,
  // and nothing else is.
  std::size_t found = 0, others_flagged = 0;
  for (int trial = 0; trial < 200; ++trial) {
    auto fleet = homogeneous_fleet(7, rng);
    NodeValues slow;
    slow.h2d = 0.92 * 55.5e9;
    slow.latency = 1.4 * 2.0e-6;
    fleet.push_back(make_node("gpu-node-slow", slow));
    const FleetReport r = analyze_fleet(fleet, {});
    const FleetNode* node = find_node(r.groups.front(), "gpu-node-slow");
    found += node != nullptr && node->outlier;
    others_flagged += r.outliers() - (node != nullptr && node->outlier);
  }
  EXPECT_EQ(found, 200u);
  EXPECT_EQ(others_flagged, 0u);
}

TEST(Fleet, FailedCaseMakesAnOutlierAndMissingCasesAreNoted) {
  std::mt19937_64 rng(5);
  auto fleet = homogeneous_fleet(5, rng);
  fleet[1].result.cases[0].status = CaseStatus::kFailed;
  fleet[1].result.cases[0].metrics.clear();
  fleet[1].result.cases[0].reason = "cudaMemcpyAsync: an illegal memory access";
  fleet[2].result.cases.pop_back();
  const FleetReport r = analyze_fleet(fleet, {});
  const FleetGroup& g = r.groups.front();
  EXPECT_EQ(r.outliers(), 1u);
  const FleetNode* failed = find_node(g, host_name(1));
  ASSERT_TRUE(failed);
  EXPECT_TRUE(failed->outlier);
  ASSERT_EQ(failed->failed_cases.size(), 1u);
  EXPECT_NE(failed->failed_cases[0].find("illegal memory access"), std::string::npos);
  const FleetNode* missing = find_node(g, host_name(2));
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->outlier);
  ASSERT_EQ(missing->notes.size(), 1u);
  EXPECT_NE(missing->notes[0].find("1 case that ran on other nodes missing here"),
            std::string::npos)
      << missing->notes[0];
}

TEST(Fleet, SmallGroupsAreListedNotJudged) {
  std::mt19937_64 rng(9);
  auto fleet = homogeneous_fleet(2, rng);
  NodeValues slow;
  slow.h2d = 0.5 * 55.5e9;
  fleet[1] = make_node(host_name(1), slow);
  const FleetReport r = analyze_fleet(fleet, {});
  EXPECT_FALSE(r.judged());
  EXPECT_EQ(r.outliers(), 0u);
  EXPECT_EQ(exit_code_of(r), 2);
  EXPECT_NE(r.groups.front().reason.find("at least 3"), std::string::npos);
  const std::string junit = fleet_junit(r);
  EXPECT_NE(junit.find("<skipped message="), std::string::npos);
}

TEST(Fleet, GroupsByNodeTypeAndComparesTypes) {
  std::mt19937_64 rng(13);
  auto fleet = homogeneous_fleet(4, rng);
  ojson other = h200_context();
  other["node_type"] = "NVIDIA H100 x1 / PCIe Gen5 x16 / 1 NUMA";
  for (int i = 0; i < 3; ++i) {
    NodeValues v;
    v.h2d = 51.0e9;
    fleet.push_back(make_node("h100-" + std::to_string(i), v, other));
  }
  const FleetReport r = analyze_fleet(fleet, {});
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].nodes.size(), 4u);
  EXPECT_EQ(r.groups[1].nodes.size(), 3u);
  EXPECT_EQ(r.outliers(), 0u);  // the H100s are slower, but only against H200s
  ASSERT_EQ(r.node_types.size(), 3u);
  EXPECT_EQ(r.node_types[0].case_id, kH2d);
  ASSERT_TRUE(r.node_types[0].medians[1]);
  EXPECT_DOUBLE_EQ(*r.node_types[0].medians[1], 51.0e9);
  EXPECT_NE(fleet_text(r).find("== node types"), std::string::npos);
}

TEST(Fleet, BusyCpuIsReportedAsADifference) {
  std::mt19937_64 rng(17);
  auto fleet = homogeneous_fleet(6, rng);
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    fleet[i].result.context["environment"] = {
        {"start", nullptr},
        {"end", nullptr},
        {"cpu_share", {{"steal_pct", 0.0}, {"iowait_pct", 0.0}, {"busy_pct", i == 3 ? 81.0 : 7.0}}},
        {"other_gpu_processes", false}};
  }
  const FleetReport r = analyze_fleet(fleet, {});
  const FleetNode* busy = find_node(r.groups.front(), host_name(3));
  ASSERT_TRUE(busy);
  ASSERT_EQ(busy->differences.size(), 1u);
  EXPECT_EQ(busy->differences[0].text(),
            "CPU busy during the run 81 % (group: median 7 % on 5 of 5)");
}

TEST(Fleet, RepeatedHostnamesAreLabelledByFile) {
  std::mt19937_64 rng(19);
  auto fleet = homogeneous_fleet(3, rng);
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    fleet[i].result.context["hostname"] = "same-host";
    fleet[i].file = "runs/run-" + std::to_string(i) + ".json";
  }
  const FleetReport r = analyze_fleet(fleet, {});
  EXPECT_TRUE(find_node(r.groups.front(), "run-0"));
  EXPECT_TRUE(find_node(r.groups.front(), "run-2"));
}

TEST(FleetReport, JsonJunitAndHtmlCarryTheOutlier) {
  std::mt19937_64 rng(23);
  auto fleet = homogeneous_fleet(8, rng);
  NodeValues slow;
  slow.h2d = 0.8 * 55.5e9;
  slow.latency = 2.6e-6;
  fleet.push_back(make_node("gpu-node-<slow>", slow));
  const FleetReport r = analyze_fleet(fleet, {});
  const ojson j = fleet_json(r);
  EXPECT_EQ(j["schema"], kFleetSchema);
  EXPECT_EQ(j["outliers"], 1);
  const ojson& g = j["groups"][0];
  EXPECT_EQ(g["nodes"].size(), 9u);
  EXPECT_EQ(g["nodes"][0]["label"], "gpu-node-<slow>");
  EXPECT_TRUE(g["nodes"][0]["outlier"].get<bool>());
  EXPECT_EQ(g["metrics"][0]["nodes"].size(), 9u);
  EXPECT_TRUE(g["metrics"][0]["nodes"][0]["outlier"].get<bool>());
  const std::string junit = fleet_junit(r);
  EXPECT_NE(junit.find("tests=\"9\" failures=\"1\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("name=\"gpu-node-&lt;slow&gt;\""), std::string::npos);
  EXPECT_NE(junit.find("<failure type=\"outlier\""), std::string::npos);
  const std::string html = fleet_html(r);
  EXPECT_NE(html.find("gpu-node-&lt;slow&gt;"), std::string::npos);
  EXPECT_EQ(html.find("gpu-node-<slow>"), std::string::npos);
  EXPECT_LT(html.find("gpu-node-&lt;slow&gt;"), html.find("gpu-node-00"));  // outliers first
}

}  // namespace
}  // namespace pathbench::test_fleet
