// The decision rule (compare/gate_rule.hpp) on synthetic data with known within- and between-run
// variance: false-alarm rate on unchanged nodes, detection power on real losses, the unstable
// and insufficient outcomes, and why the within-run test alone cried wolf.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <optional>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "compare/gate_rule.hpp"
#include "compare/mann_whitney.hpp"
#include "stats/robust.hpp"

namespace pathbench::test_gate_rule {
namespace {

// A node whose run means wander by `between` (relative sd) around `mean`, and whose samples
// within a run scatter by `within` around the run's mean.
struct SyntheticNode {
  double mean = 100;
  double between = 0.01;
  double within = 0.002;
  std::size_t samples = 9;

  std::vector<double> run(std::mt19937_64& rng, double shift = 0) const {
    std::normal_distribution<double> z(0, 1);
    const double run_mean = mean * (1 + shift) * (1 + between * z(rng));
    std::vector<double> out;
    for (std::size_t i = 0; i < samples; ++i) out.push_back(run_mean * (1 + within * z(rng)));
    return out;
  }
};

BaselineMetric baseline_of(const SyntheticNode& node, std::size_t runs, std::mt19937_64& rng,
                           TimingClass cls, Better better = Better::kHigher) {
  BaselineMetric m;
  m.name = "bandwidth";
  m.unit = "GB/s";
  m.better = better;
  m.timing_class = cls;
  for (std::size_t i = 0; i < runs; ++i) {
    auto samples = node.run(rng);
    m.runs.push_back({median_of(samples), samples});
  }
  m.between = between_run_of(m.runs);
  return m;
}

struct Rates {
  double regression = 0, unstable = 0, improvement = 0;
  // Regressions that also reproduce in the majority of the runs, re-runs included (pathbench
  // gate, re-runs sized to its default false-alarm target).
  double confirmed = 0;
};

// Each trial: a fresh baseline of `runs` runs and one more run (shifted by `shift`); a
// regression is re-run against the same baseline as often as the gate would.
// A ceiling (the default reading of a gate block's percentage) or none.
ThresholdSetting ceiling(std::optional<double> pct = std::nullopt) {
  ThresholdSetting t;
  t.pct = pct;
  t.origin = "the test";
  return t;
}
ThresholdSetting fixed(double pct) {
  ThresholdSetting t = ceiling(pct);
  t.fixed = true;
  return t;
}

Rates simulate(const SyntheticNode& node, std::size_t runs, const ThresholdSetting& threshold,
               double shift, TimingClass cls, int trials = 4000, unsigned seed = 1) {
  std::mt19937_64 rng(seed);
  GateRuleOptions options;
  Rates r;
  for (int t = 0; t < trials; ++t) {
    const BaselineMetric b = baseline_of(node, runs, rng, cls);
    const auto result = node.run(rng, shift);
    const RuleJudgement j = judge_metric(b, result, threshold, options);
    const RuleOutcome o = j.outcome;
    r.regression += o == RuleOutcome::kRegression;
    r.unstable += o == RuleOutcome::kUnstable;
    r.improvement += o == RuleOutcome::kImprovement;
    if (o == RuleOutcome::kRegression) {
      // As pathbench gate does by default: re-runs sized to a 1 % target over 40 gated metrics.
      const int reruns = reruns_for_target(j.gate.false_alarm_per_run, 0.01 / 40, 6);
      int reproduced = 1;
      for (int i = 0; i < reruns; ++i) {
        reproduced += judge_metric(b, node.run(rng, shift), threshold, options).outcome ==
                      RuleOutcome::kRegression;
      }
      r.confirmed += 2 * reproduced > 1 + reruns;
    }
  }
  r.regression /= trials;
  r.unstable /= trials;
  r.improvement /= trials;
  r.confirmed /= trials;
  return r;
}

TEST(RobustStats, MedianAndScaledMad) {
  const std::vector<double> v{1, 2, 3, 4, 100};
  EXPECT_DOUBLE_EQ(median_of(v), 3);
  EXPECT_DOUBLE_EQ(median_of(std::vector<double>{4, 1, 3, 2}), 2.5);
  // deviations 2 1 0 1 97 -> median 1 -> 1.4826: the outlier does not inflate it.
  EXPECT_NEAR(scaled_mad(v), 1.4826, 1e-12);
  EXPECT_EQ(scaled_mad(std::vector<double>{5}), 0);
}

TEST(RobustStats, StudentTailMatchesTables) {
  // Two-sided 95 % critical values: t(0.975, 4) = 2.776, t(0.975, 9) = 2.262, z = 1.960.
  EXPECT_NEAR(student_t_upper_tail(2.776445, 4), 0.025, 1e-5);
  EXPECT_NEAR(student_t_upper_tail(2.262157, 9), 0.025, 1e-5);
  EXPECT_NEAR(student_t_upper_tail(1.959964, 0), 0.025, 1e-6);
  EXPECT_NEAR(student_t_upper_tail(0, 3), 0.5, 1e-12);
  EXPECT_NEAR(student_t_upper_tail(-2.776445, 4), 0.975, 1e-5);
  EXPECT_NEAR(student_t_upper_tail(6.313752, 1), 0.05, 1e-5);
}

// The failure that motivated the rule: host-timed metrics whose run means move 5 % between runs
// while samples within a run agree to 0.5 %. A Mann-Whitney test between two runs alone flags
// most unchanged pairs (the ~7 of 9 false failures seen on the H200); the rule flags none.
TEST(GateRule, WithinRunTestAloneCriesWolfTheRuleDoesNot) {
  const SyntheticNode host{100, 0.05, 0.005, 9};
  std::mt19937_64 rng(7);
  int mann_whitney_alarms = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    const auto a = host.run(rng), b = host.run(rng);
    const double change = std::abs(median_of(b) / median_of(a) - 1);
    if (change > 0.05 && mann_whitney_u(a, b).p_value < 0.05) ++mann_whitney_alarms;
  }
  EXPECT_GT(mann_whitney_alarms, trials * 0.25);
  const Rates rule = simulate(host, 10, ceiling(), 0, TimingClass::kHost);
  EXPECT_LE(rule.confirmed, 0.01) << "false failures per gated metric";
}

// False failures per gated metric on unchanged nodes, with the shipped defaults (thresholds
// derived from the baseline, no ceiling from a scenario). The H200 cases use the between-run
// spreads measured there (docs/measurements.md: pinned copies 0.05-0.3 %, pageable copies and
// host memcpy a few %, first touch 6-15 %).
TEST(GateRule, FalseFailureRateAtMostOnePerHundredMetrics) {
  struct Case {
    const char* what;
    SyntheticNode node;
    TimingClass cls;
    std::size_t runs[2];
  };
  const Case cases[] = {
      {"H200 pinned copy (device)", {55, 0.001, 0.0005, 9}, TimingClass::kDevice, {5, 10}},
      {"H200 pinned copy, 0.3 %", {55, 0.003, 0.0005, 9}, TimingClass::kDevice, {5, 10}},
      {"device, spread 1 %", {55, 0.01, 0.001, 9}, TimingClass::kDevice, {5, 10}},
      {"H200 pageable copy (host)", {20, 0.04, 0.01, 9}, TimingClass::kHost, {8, 10}},
      {"H200 first touch (host)", {100, 0.12, 0.02, 5}, TimingClass::kHost, {10, 20}},
  };
  for (const auto& c : cases) {
    for (std::size_t runs : c.runs) {
      const Rates r = simulate(c.node, runs, ceiling(), 0, c.cls);
      EXPECT_LE(r.regression, 0.03) << c.what << ", " << runs << " baseline runs";
      EXPECT_LE(r.confirmed, 0.01) << c.what << ", " << runs << " baseline runs";
      std::printf(
          "  %-28s %2zu runs: %.2f %% false regressions, %.2f %% confirmed, %.1f %% "
          "not gateable\n",
          c.what, runs, r.regression * 100, r.confirmed * 100, r.unstable * 100);
    }
  }
}

// The issue that made thresholds derived: a competing copy load took 3.5 % off pinned H2D and
// passed a fixed 8 % threshold. From the baseline's own 0.1-0.3 % spread, 2 % is caught.
TEST(GateRule, DeviceGateCatchesTwoPercentFromTenRuns) {
  for (double spread : {0.001, 0.002}) {
    const SyntheticNode node{55, spread, 0.0005, 9};
    const Rates two = simulate(node, 10, ceiling(), -0.02, TimingClass::kDevice, 1000, 3);
    EXPECT_GE(two.regression, 0.95) << "spread " << spread;
    EXPECT_GE(two.confirmed, 0.95) << "spread " << spread;
    const Rates five_runs = simulate(node, 5, ceiling(), -0.035, TimingClass::kDevice, 1000, 4);
    EXPECT_GE(five_runs.confirmed, 0.99) << "spread " << spread;
    std::printf("  device spread %.1f %%: -2 %% caught %.1f %% (10 runs), -3.5 %% %.1f %% (5)\n",
                spread * 100, two.confirmed * 100, five_runs.confirmed * 100);
  }
  // The old fixed 8 % threshold could not.
  const Rates old =
      simulate({55, 0.002, 0.0005, 9}, 5, fixed(8), -0.035, TimingClass::kDevice, 500, 5);
  EXPECT_EQ(old.regression, 0);
}

// Host page-fault costs on the H200: a log-normal spread of run medians, and a two-humped one
// (some runs compact memory inside the fault path and cost +60 %). Judged on the log scale and
// against the worst baseline run, with confirmation: at most 1 % false failures per metric.
struct SkewedNode {
  double mean = 125;
  double log_sd = 0.05;     // the core's spread on the log scale
  double hump = 0;          // share of runs in the second hump
  double hump_shift = 0.6;  // its distance (+60 %)
  double within = 0.02;
  std::size_t samples = 5;
  std::vector<double> run(std::mt19937_64& rng, double shift = 0) const {
    std::normal_distribution<double> z(0, 1);
    std::bernoulli_distribution in_hump(hump);
    double run_mean = mean * (1 + shift) * std::exp(log_sd * z(rng));
    if (in_hump(rng)) run_mean *= 1 + hump_shift;
    std::vector<double> out;
    for (std::size_t i = 0; i < samples; ++i) out.push_back(run_mean * (1 + within * z(rng)));
    return out;
  }
};

Rates simulate_skewed(const SkewedNode& node, std::size_t runs, double shift, int trials,
                      unsigned seed) {
  std::mt19937_64 rng(seed);
  GateRuleOptions options;
  Rates r;
  for (int t = 0; t < trials; ++t) {
    BaselineMetric b;
    b.timing_class = TimingClass::kHost;
    b.better = Better::kLower;  // seconds per GiB
    for (std::size_t i = 0; i < runs; ++i) {
      auto samples = node.run(rng);
      b.runs.push_back({median_of(samples), samples});
    }
    b.between = between_run_of(b.runs);
    const RuleJudgement j = judge_metric(b, node.run(rng, shift), ceiling(), options);
    r.regression += j.outcome == RuleOutcome::kRegression;
    r.unstable += j.outcome == RuleOutcome::kUnstable;
    if (j.outcome == RuleOutcome::kRegression) {
      // As the gate does: re-runs sized to a 1 % target over 40 gated metrics.
      const int reruns = reruns_for_target(j.gate.false_alarm_per_run, 0.01 / 40, 6);
      int reproduced = 1;
      for (int i = 0; i < reruns; ++i) {
        reproduced += judge_metric(b, node.run(rng, shift), ceiling(), options).outcome ==
                      RuleOutcome::kRegression;
      }
      r.confirmed += 2 * reproduced > 1 + reruns;
    }
  }
  r.regression /= trials;
  r.unstable /= trials;
  r.confirmed /= trials;
  return r;
}

TEST(GateRule, SkewedHostMetricsFalseAlarmsAtMostOnePercent) {
  struct Case {
    const char* what;
    SkewedNode node;
  };
  const Case cases[] = {
      {"log-normal, 15 %", {125, 0.15, 0, 0.6, 0.02, 5}},
      {"log-normal, 30 %", {125, 0.30, 0, 0.6, 0.02, 5}},
      {"two humps, 15 % at +60 %", {125, 0.05, 0.15, 0.6, 0.02, 5}},
      {"two humps, 30 % at +60 %", {125, 0.05, 0.30, 0.6, 0.02, 5}},
  };
  for (const auto& c : cases) {
    for (std::size_t runs : {10u, 20u}) {
      const Rates r = simulate_skewed(c.node, runs, 0, 4000, 17);
      EXPECT_LE(r.confirmed, 0.01) << c.what << ", " << runs << " runs";
      std::printf("  %-26s %2zu runs: %.2f %% suspects, %.2f %% confirmed\n", c.what, runs,
                  r.regression * 100, r.confirmed * 100);
    }
  }
  // And a real doubling of the fault cost is still caught from 10 runs of a log-normal node.
  const Rates doubled = simulate_skewed({125, 0.10, 0, 0.6, 0.02, 5}, 10, 1.0, 1000, 19);
  EXPECT_GE(doubled.confirmed, 0.95) << doubled.regression << " " << doubled.unstable;
}

TEST(GateRule, HeavyTailedMetricNeedsEnoughRunsAndSaysSo) {
  std::mt19937_64 rng(23);
  GateRuleOptions options;
  const BaselineMetric five = baseline_of({100, 0.05, 0.01, 9}, 5, rng, TimingClass::kHost);
  // Half the value: far beyond anything, but five runs cannot show a host metric's tail.
  const RuleJudgement j = judge_metric(five, std::vector<double>(9, 50.0), ceiling(), options);
  ASSERT_EQ(j.outcome, RuleOutcome::kUnstable);
  EXPECT_NE(j.reason.find("not gated yet"), std::string::npos) << j.reason;
  EXPECT_NE(j.reason.find("5 baseline runs"), std::string::npos) << j.reason;
  EXPECT_NE(j.reason.find("8 needed"), std::string::npos) << j.reason;
  EXPECT_FALSE(gate_threshold(five, ceiling(), options).gateable);
  // With eight runs it is gated, and the halving is a regression.
  const BaselineMetric eight = baseline_of({100, 0.05, 0.01, 9}, 8, rng, TimingClass::kHost);
  EXPECT_EQ(judge_metric(eight, std::vector<double>(9, 50.0), ceiling(), options).outcome,
            RuleOutcome::kRegression);
  // A fixed threshold opts out of the requirement (the old fixed rule).
  EXPECT_EQ(judge_metric(five, std::vector<double>(9, 50.0), fixed(20), options).outcome,
            RuleOutcome::kRegression);
}

// Host-side costs move between machines of one type more than between runs of one (on H200 VMs a
// 10-run baseline of one machine failed 3 of 4 runs of another): a host-timed metric waits for
// three machines, and then the machines' own spread widens its threshold.
TEST(GateRule, HeavyTailedMetricNeedsThreeMachinesAndTheirSpread) {
  BaselineMetric b;
  b.timing_class = TimingClass::kHost;
  b.better = Better::kHigher;  // a pageable copy's bandwidth
  // As a baseline grown by CI tends to be: eight runs of one machine (at 100, within 1 %), two of
  // a second (110) and two of a third (90). The runs' own spread is ~1 %: the two machines' runs
  // are outlying, and without the machines the gate would fail a fourth machine for nothing.
  GateRuleOptions options;
  const auto add = [&](double level, std::size_t machine, std::initializer_list<double> fs) {
    for (double f : fs) {
      b.runs.push_back({level * f, std::vector<double>(5, level * f)});
      options.run_machines.push_back(machine);
    }
  };
  add(100, 0, {0.99, 1.0, 1.01, 0.995, 1.005, 1.0, 0.998, 1.002});
  add(110, 1, {0.995, 1.005});
  add(90, 2, {0.995, 1.005});
  b.between = between_run_of(b.runs);
  options.min_runs_heavy = 8;
  const GateThreshold g = gate_threshold(b, ceiling(), options);
  ASSERT_TRUE(g.gateable) << g.not_gateable_reason;
  EXPECT_EQ(g.machines, 3u);
  EXPECT_TRUE(g.spread_from_machines);
  EXPECT_EQ(g.source, ThresholdSource::kMachines);
  EXPECT_NEAR(g.spread_pct, 10.0, 0.3) << "the SD of the machines' log medians";
  EXPECT_DOUBLE_EQ(g.degrees_of_freedom, 2);
  // A fourth machine 12 % slower than the center is within what machines do.
  EXPECT_EQ(judge_metric(b, std::vector<double>(5, 88.0), ceiling(), options).outcome,
            RuleOutcome::kPass);
  // The same runs credited to one machine: not gated yet, and the reason says why.
  GateRuleOptions one = options;
  std::fill(one.run_machines.begin(), one.run_machines.end(), 0);
  const RuleJudgement j = judge_metric(b, std::vector<double>(5, 50.0), ceiling(), one);
  ASSERT_EQ(j.outcome, RuleOutcome::kUnstable);
  EXPECT_NE(j.reason.find("come from 1 machine"), std::string::npos) << j.reason;
  EXPECT_NE(j.reason.find("3 needed"), std::string::npos) << j.reason;
  // Device-timed metrics need neither: their class is not heavy-tailed.
  BaselineMetric d = b;
  d.timing_class = TimingClass::kDevice;
  EXPECT_FALSE(gate_threshold(d, ceiling(), one).spread_from_machines);
}

TEST(GateRule, WorstBaselineRunWidensAHeavyTailedThreshold) {
  // Nine runs at 100 +- 1 % and one at 160: the core spread says ~3.5 %, but this node has shown
  // +60 %; a result at +50 % is not flagged, and the threshold says where it came from.
  BaselineMetric b;
  b.timing_class = TimingClass::kHost;
  b.better = Better::kLower;
  for (double m : {99.0, 100.0, 101.0, 100.5, 99.5, 100.2, 99.8, 100.0, 100.1, 160.0}) {
    b.runs.push_back({m, std::vector<double>(5, m)});
  }
  b.between = between_run_of(b.runs);
  const GateThreshold g = gate_threshold(b, ceiling(), {});
  ASSERT_TRUE(g.gateable) << g.not_gateable_reason;
  EXPECT_EQ(g.source, ThresholdSource::kWorstRun);
  EXPECT_NEAR(g.detectable_pct, 60, 0.5);
  EXPECT_EQ(g.outlying_runs, 1u);
  // The outlying run does not inflate the core spread (the SD of all ten would be ~19 %).
  EXPECT_LT(g.spread_pct, 3);
  EXPECT_EQ(judge_metric(b, std::vector<double>(5, 150.0), ceiling(), {}).outcome,
            RuleOutcome::kPass);
  EXPECT_EQ(judge_metric(b, std::vector<double>(5, 175.0), ceiling(), {}).outcome,
            RuleOutcome::kRegression);
}

TEST(GateRule, DetectsRealLosses) {
  // A 10 % loss of a pinned copy and a 30 % loss of a host metric (spread 4 %, ten runs) are
  // found nearly every time.
  const Rates device =
      simulate({55, 0.002, 0.0005, 9}, 5, ceiling(), -0.10, TimingClass::kDevice, 1000);
  EXPECT_GE(device.regression, 0.99);
  const Rates host = simulate({20, 0.04, 0.01, 9}, 10, ceiling(), -0.30, TimingClass::kHost, 1000);
  EXPECT_GE(host.regression, 0.95);
  // A gain is an improvement, never a regression.
  const Rates gain =
      simulate({55, 0.002, 0.0005, 9}, 5, ceiling(), +0.10, TimingClass::kDevice, 500);
  EXPECT_EQ(gain.regression, 0);
  EXPECT_GE(gain.improvement, 0.99);
}

TEST(GateRule, LowerIsBetterMetricsRegressUpwards) {
  std::mt19937_64 rng(3);
  const SyntheticNode node{1e-3, 0.002, 0.001, 9};
  const BaselineMetric b = baseline_of(node, 5, rng, TimingClass::kDevice, Better::kLower);
  const auto slower = node.run(rng, +0.2);
  EXPECT_EQ(judge_metric(b, slower, ceiling(), {}).outcome, RuleOutcome::kRegression);
  const auto faster = node.run(rng, -0.2);
  EXPECT_EQ(judge_metric(b, faster, ceiling(), {}).outcome, RuleOutcome::kImprovement);
  // Its detectable change is an increase.
  EXPECT_GT(gate_threshold(b, ceiling(), {}).detectable_pct, 0);
}

TEST(GateRule, ThresholdWiderThanTheCeilingIsNotGateableAndNeverFails) {
  // A device metric whose runs spread 8 %: it would need ~26 %, beyond a 10 % ceiling.
  const Rates r = simulate({20, 0.08, 0.01, 9}, 10, ceiling(10), 0, TimingClass::kDevice, 2000);
  EXPECT_LE(r.confirmed, 0.01);
  EXPECT_GE(r.unstable, 0.9);
  BaselineMetric b;
  b.timing_class = TimingClass::kDevice;
  for (double m : {10.0, 14.0, 18.0, 22.0, 26.0}) b.runs.push_back({m, std::vector<double>(9, m)});
  b.between = between_run_of(b.runs);
  // Half the median is far beyond any threshold, but the metric cannot be gated: unstable, and
  // the reason names the ceiling and where it came from.
  const RuleJudgement j = judge_metric(b, std::vector<double>(9, 9.0), ceiling(10), {});
  ASSERT_EQ(j.outcome, RuleOutcome::kUnstable);
  EXPECT_NE(j.reason.find("not gateable"), std::string::npos) << j.reason;
  EXPECT_NE(j.reason.find("10.0 % ceiling (the test)"), std::string::npos) << j.reason;
  // Without a ceiling of its own, the class ceiling applies (device: 10 %).
  const RuleJudgement k = judge_metric(b, std::vector<double>(9, 9.0), ceiling(), {});
  ASSERT_EQ(k.outcome, RuleOutcome::kUnstable);
  EXPECT_NE(k.reason.find("class ceiling of device-timed metrics"), std::string::npos) << k.reason;
}

TEST(GateRule, FixedThresholdKeepsTheOldRule) {
  // Spread twice the fixed threshold: mostly unstable, and no more false failures than allowed.
  const Rates r = simulate({20, 0.20, 0.01, 9}, 10, fixed(10), 0, TimingClass::kHost, 2000);
  EXPECT_LE(r.confirmed, 0.01);
  EXPECT_GE(r.unstable, 0.9);
  // Quiet runs: the fixed 8 % applies (wider than k x spread), and says so.
  std::mt19937_64 rng(29);
  const BaselineMetric b = baseline_of({55, 0.001, 0.0005, 9}, 5, rng, TimingClass::kDevice);
  const GateThreshold g = gate_threshold(b, fixed(8), {});
  EXPECT_EQ(g.source, ThresholdSource::kFixed);
  EXPECT_NEAR(g.threshold_pct, 8, 1e-9);
  EXPECT_NEAR(g.detectable_pct, -8, 1e-9);
}

TEST(GateRule, OneRunBaselineUsesTheClassDefault) {
  std::mt19937_64 rng(11);
  GateRuleOptions options;
  const BaselineMetric b = baseline_of({100, 0.0, 0.002, 9}, 1, rng, TimingClass::kDevice);
  ASSERT_FALSE(b.between.known);
  // 5 % worse: within 3 x the 2 % device default, widened for two single runs.
  const RuleJudgement j =
      judge_metric(b, SyntheticNode{95, 0, 0.002, 9}.run(rng), ceiling(), options);
  EXPECT_FALSE(j.spread_known);
  EXPECT_DOUBLE_EQ(j.spread_pct, options.device.unknown_spread * 100);
  EXPECT_EQ(j.gate.source, ThresholdSource::kUnknownSpread);
  // The bound is on the difference of two single runs: k x spread x sqrt(1 + pi/2), in log units.
  const double bound = 3 * options.device.unknown_spread * std::sqrt(1 + std::numbers::pi / 2);
  EXPECT_NEAR(j.effective_threshold_pct, -std::expm1(-bound) * 100, 1e-9);
  EXPECT_EQ(j.outcome, RuleOutcome::kPass);
  // 20 % worse is a regression even without a measured spread.
  EXPECT_EQ(judge_metric(b, SyntheticNode{80, 0, 0.002, 9}.run(rng), ceiling(), options).outcome,
            RuleOutcome::kRegression);
  // A host metric from one run is not gated at all.
  const BaselineMetric h = baseline_of({100, 0.0, 0.002, 9}, 1, rng, TimingClass::kHost);
  EXPECT_EQ(judge_metric(h, SyntheticNode{50, 0, 0.002, 9}.run(rng), ceiling(), options).outcome,
            RuleOutcome::kUnstable);
}

TEST(GateRule, MeasuredSpreadNeverTrustedBelowTheClassFloor) {
  // Five identical run medians: MAD 0. The floor keeps the applied spread at min_spread, and
  // the detectable change follows from it: 3 x 0.4 % x sqrt(1 + pi/10), as a loss.
  BaselineMetric b;
  b.timing_class = TimingClass::kDevice;
  for (int i = 0; i < 5; ++i) b.runs.push_back({50, std::vector<double>(9, 50)});
  b.between = between_run_of(b.runs);
  GateRuleOptions options;
  const RuleJudgement j = judge_metric(b, std::vector<double>(9, 49.9), ceiling(), options);
  EXPECT_DOUBLE_EQ(j.spread_pct, options.device.min_spread * 100);
  EXPECT_EQ(j.gate.source, ThresholdSource::kClassFloor);
  const double bound = 3 * options.device.min_spread * std::sqrt(1 + std::numbers::pi / 10);
  EXPECT_NEAR(j.gate.detectable_pct, std::expm1(-bound) * 100, 1e-9);
  EXPECT_EQ(j.outcome, RuleOutcome::kPass);
  EXPECT_EQ(judge_metric(b, std::vector<double>(9, 49.0), ceiling(), options).outcome,
            RuleOutcome::kRegression);
}

TEST(GateRule, TooFewSamplesAreInsufficientNotPass) {
  std::mt19937_64 rng(13);
  const BaselineMetric b = baseline_of({55, 0.002, 0.0005, 9}, 5, rng, TimingClass::kDevice);
  // A --quick run with a 70 % loss: not judged, and not a pass either.
  const RuleJudgement j = judge_metric(b, std::vector<double>{16, 16.5, 16.2}, ceiling(), {});
  EXPECT_EQ(j.outcome, RuleOutcome::kInsufficient);
  EXPECT_NE(j.reason.find("3 in the result"), std::string::npos) << j.reason;
}

TEST(GateRule, MoveWithinTheRunToRunSpreadPasses) {
  // Baseline runs at 100, 101, 99, 102, 98 (spread ~ 1.5 %): a result at 97 moved 3 %, within 3 x
  // the spread widened for a five-run center.
  BaselineMetric b;
  b.timing_class = TimingClass::kDevice;
  for (double m : {100.0, 101.0, 99.0, 102.0, 98.0}) {
    b.runs.push_back({m, std::vector<double>{m * 0.999, m, m * 1.001, m, m}});
  }
  b.between = between_run_of(b.runs);
  const RuleJudgement j =
      judge_metric(b, std::vector<double>{97, 97.1, 96.9, 97, 97}, ceiling(), GateRuleOptions{});
  EXPECT_EQ(j.outcome, RuleOutcome::kPass);
  EXPECT_GT(j.effective_threshold_pct, 3);
}

// Confirmation sized to the false-alarm target (README "Confirmation"): the arithmetic.
TEST(GateRule, ConfirmationReRunsFollowFromTheTarget) {
  const double p = 0.02;
  EXPECT_NEAR(confirmed_false_alarm(p, 0), p, 1e-15);
  EXPECT_NEAR(confirmed_false_alarm(p, 1), p * p, 1e-15);                        // 2 of 2
  EXPECT_NEAR(confirmed_false_alarm(p, 2), p * (1 - (1 - p) * (1 - p)), 1e-15);  // 2 of 3
  EXPECT_NEAR(confirmed_false_alarm(p, 3), p * (3 * p * p * (1 - p) + p * p * p), 1e-15);
  // 40 gated metrics sharing a 1 % target: 2.5e-4 each; one re-run gives 4e-4, two 7.9e-4,
  // three 2.4e-5.
  EXPECT_EQ(reruns_for_target(p, 0.01 / 40, 6), 3);
  // From two re-runs on: one alone would need every run to show a real loss.
  EXPECT_EQ(reruns_for_target(0.001, 0.01 / 40, 6), 2);
  // Out of reach: the most re-runs allowed.
  EXPECT_EQ(reruns_for_target(0.5, 1e-9, 6), 6);
  // Simulated: independent runs, each showing the suspect with probability p.
  std::mt19937_64 rng(31);
  std::bernoulli_distribution shows(0.2);
  for (int m : {1, 2, 3, 4}) {
    int failed = 0;
    const int trials = 200000;
    for (int t = 0; t < trials; ++t) {
      if (!shows(rng)) continue;
      int reproduced = 1;
      for (int i = 0; i < m; ++i) reproduced += shows(rng);
      failed += 2 * reproduced > 1 + m;
    }
    EXPECT_NEAR(static_cast<double>(failed) / trials, confirmed_false_alarm(0.2, m), 0.002) << m;
  }
}

}  // namespace
}  // namespace pathbench::test_gate_rule
