// The decision rule (compare/gate_rule.hpp) on synthetic data with known within- and between-run
// variance: false-alarm rate on unchanged nodes, detection power on real losses, the unstable
// and insufficient outcomes, and why the within-run test alone cried wolf.
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "compare/gate_rule.hpp"
#include "compare/mann_whitney.hpp"
#include "stats/robust.hpp"

namespace pathbench {
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
  // Regressions that also reproduce in the majority of 1 + `reruns` runs (pathbench gate).
  double confirmed = 0;
};

// Each trial: a fresh baseline of `runs` runs and one more run (shifted by `shift`); a
// regression is re-run `reruns` times against the same baseline.
Rates simulate(const SyntheticNode& node, std::size_t runs, double threshold_pct, double shift,
               TimingClass cls, int trials = 4000, unsigned seed = 1, int reruns = 2) {
  std::mt19937_64 rng(seed);
  GateRuleOptions options;
  Rates r;
  for (int t = 0; t < trials; ++t) {
    const BaselineMetric b = baseline_of(node, runs, rng, cls);
    const auto result = node.run(rng, shift);
    const RuleOutcome o = judge_metric(b, result, threshold_pct, options).outcome;
    r.regression += o == RuleOutcome::kRegression;
    r.unstable += o == RuleOutcome::kUnstable;
    r.improvement += o == RuleOutcome::kImprovement;
    if (o == RuleOutcome::kRegression) {
      int reproduced = 1;
      for (int i = 0; i < reruns; ++i) {
        reproduced += judge_metric(b, node.run(rng, shift), threshold_pct, options).outcome ==
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
  const Rates rule = simulate(host, 5, 20, 0, TimingClass::kHost);
  EXPECT_LE(rule.regression, 0.01) << "false failures per gated metric";
}

// False failures per gated metric on unchanged nodes. The H200 cases use the between-run
// spreads measured there (docs/measurements.md: pinned copies ~0.1 %, pageable copies and host
// memcpy a few %, first touch ~5 %) with the shipped thresholds; the last two put the true
// spread at 70 % and 100 % of the threshold, where the estimate from a few runs most often comes
// out small by chance: the worst case, which confirmation re-runs bring under 1 %.
TEST(GateRule, FalseFailureRateAtMostOnePerHundredMetrics) {
  struct Case {
    const char* what;
    SyntheticNode node;
    double threshold_pct;
    TimingClass cls;
    double max_single, max_confirmed;
  };
  const Case cases[] = {
      {"H200 pinned copy (device)", {55, 0.001, 0.0005, 9}, 3, TimingClass::kDevice, 0.01, 0.01},
      {"device, spread 1 %", {55, 0.01, 0.001, 9}, 5, TimingClass::kDevice, 0.01, 0.01},
      {"H200 pageable copy (host)", {20, 0.04, 0.01, 9}, 20, TimingClass::kHost, 0.01, 0.01},
      {"H200 first touch (host)", {100, 0.06, 0.02, 5}, 25, TimingClass::kHost, 0.01, 0.01},
      {"spread 70 % of threshold", {20, 0.07, 0.01, 9}, 10, TimingClass::kHost, 0.03, 0.01},
      {"spread = threshold", {20, 0.10, 0.01, 9}, 10, TimingClass::kHost, 0.03, 0.01},
  };
  for (const auto& c : cases) {
    for (std::size_t runs : {5u, 10u}) {
      const Rates r = simulate(c.node, runs, c.threshold_pct, 0, c.cls);
      EXPECT_LE(r.regression, c.max_single) << c.what << ", " << runs << " baseline runs";
      EXPECT_LE(r.confirmed, c.max_confirmed) << c.what << ", " << runs << " baseline runs";
      std::printf(
          "  %-28s %2zu runs: %.2f %% false regressions, %.2f %% confirmed, %.1f %% "
          "unstable\n",
          c.what, runs, r.regression * 100, r.confirmed * 100, r.unstable * 100);
    }
  }
}

TEST(GateRule, DetectsRealLosses) {
  // A 10 % loss of a pinned copy (threshold 5 %) and a 30 % loss of a host metric (threshold
  // 20 %, spread 4 %) are found nearly every time from a 5-run baseline.
  const Rates device = simulate({55, 0.002, 0.0005, 9}, 5, 5, -0.10, TimingClass::kDevice, 1000);
  EXPECT_GE(device.regression, 0.99);
  const Rates host = simulate({20, 0.04, 0.01, 9}, 5, 20, -0.30, TimingClass::kHost, 1000);
  EXPECT_GE(host.regression, 0.95);
  // A gain is an improvement, never a regression.
  const Rates gain = simulate({55, 0.002, 0.0005, 9}, 5, 5, +0.10, TimingClass::kDevice, 500);
  EXPECT_EQ(gain.regression, 0);
  EXPECT_GE(gain.improvement, 0.99);
}

TEST(GateRule, LowerIsBetterMetricsRegressUpwards) {
  std::mt19937_64 rng(3);
  const SyntheticNode node{1e-3, 0.002, 0.001, 9};
  const BaselineMetric b = baseline_of(node, 5, rng, TimingClass::kDevice, Better::kLower);
  const auto slower = node.run(rng, +0.2);
  EXPECT_EQ(judge_metric(b, slower, 5, {}).outcome, RuleOutcome::kRegression);
  const auto faster = node.run(rng, -0.2);
  EXPECT_EQ(judge_metric(b, faster, 5, {}).outcome, RuleOutcome::kImprovement);
}

TEST(GateRule, SpreadAboveThresholdIsUnstableAndNeverFails) {
  // True spread twice the threshold: mostly unstable, and no more false failures than allowed.
  const Rates r = simulate({20, 0.20, 0.01, 9}, 10, 10, 0, TimingClass::kHost, 2000);
  EXPECT_LE(r.regression, 0.01);
  EXPECT_GE(r.unstable, 0.9);
  std::mt19937_64 rng(5);
  BaselineMetric b;
  b.timing_class = TimingClass::kHost;
  for (double m : {10.0, 14.0, 18.0, 22.0, 26.0}) b.runs.push_back({m, std::vector<double>(9, m)});
  b.between = between_run_of(b.runs);
  // Half the median is far beyond any threshold, but the metric cannot be gated: unstable.
  const RuleJudgement j = judge_metric(b, std::vector<double>(9, 9.0), 10, {});
  ASSERT_EQ(j.outcome, RuleOutcome::kUnstable);
  EXPECT_NE(j.reason.find("not gateable"), std::string::npos) << j.reason;
}

TEST(GateRule, OneRunBaselineUsesTheClassDefault) {
  std::mt19937_64 rng(11);
  GateRuleOptions options;
  const BaselineMetric b = baseline_of({100, 0.0, 0.002, 9}, 1, rng, TimingClass::kHost);
  ASSERT_FALSE(b.between.known);
  // 20 % worse: beyond the 5 % threshold but within 3 x the 10 % host default.
  const RuleJudgement j = judge_metric(b, SyntheticNode{80, 0, 0.002, 9}.run(rng), 5, options);
  EXPECT_FALSE(j.spread_known);
  EXPECT_DOUBLE_EQ(j.spread_pct, options.host.unknown_spread * 100);
  // The bound is on the difference of two single runs: k x spread x sqrt(1 + pi/2).
  EXPECT_NEAR(j.effective_threshold_pct,
              3 * options.host.unknown_spread * 100 * std::sqrt(1 + std::numbers::pi / 2), 1e-9);
  EXPECT_EQ(j.outcome, RuleOutcome::kPass);
  EXPECT_NE(j.reason.find("spread is unknown"), std::string::npos) << j.reason;
  // 50 % worse is a regression even without a measured spread.
  EXPECT_EQ(judge_metric(b, SyntheticNode{50, 0, 0.002, 9}.run(rng), 5, options).outcome,
            RuleOutcome::kRegression);
}

TEST(GateRule, MeasuredSpreadNeverTrustedBelowTheClassFloor) {
  // Five identical run medians: MAD 0. The floor keeps the applied spread at min_spread.
  BaselineMetric b;
  b.timing_class = TimingClass::kDevice;
  for (int i = 0; i < 5; ++i) b.runs.push_back({50, std::vector<double>(9, 50)});
  b.between = between_run_of(b.runs);
  GateRuleOptions options;
  const RuleJudgement j = judge_metric(b, std::vector<double>(9, 49.9), 5, options);
  EXPECT_DOUBLE_EQ(j.spread_pct, options.device.min_spread * 100);
  EXPECT_EQ(j.outcome, RuleOutcome::kPass);
}

TEST(GateRule, TooFewSamplesAreInsufficientNotPass) {
  std::mt19937_64 rng(13);
  const BaselineMetric b = baseline_of({55, 0.002, 0.0005, 9}, 5, rng, TimingClass::kDevice);
  // A --quick run with a 70 % loss: not judged, and not a pass either.
  const RuleJudgement j = judge_metric(b, std::vector<double>{16, 16.5, 16.2}, 5, {});
  EXPECT_EQ(j.outcome, RuleOutcome::kInsufficient);
  EXPECT_NE(j.reason.find("3 in the result"), std::string::npos) << j.reason;
}

TEST(GateRule, MoveWithinTheRunToRunSpreadIsNoiseWithAReason) {
  // Baseline runs at 100, 104, 96, 108, 92 (spread ~ 8.9 %), threshold 5 %: a result at 90 moved
  // 10 %, within 3 x the spread.
  BaselineMetric b;
  b.timing_class = TimingClass::kHost;
  for (double m : {100.0, 104.0, 96.0, 108.0, 92.0}) {
    b.runs.push_back({m, std::vector<double>{m * 0.999, m, m * 1.001, m, m}});
  }
  b.between = between_run_of(b.runs);
  const RuleJudgement j =
      judge_metric(b, std::vector<double>{90, 90.1, 89.9, 90, 90}, 10, GateRuleOptions{});
  EXPECT_EQ(j.outcome, RuleOutcome::kPass);
  EXPECT_GT(j.effective_threshold_pct, 10);
}

}  // namespace
}  // namespace pathbench
