// The shared measurement core: Google Benchmark registration, samples, failures, skips, checks.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/errors.hpp"
#include "core/host_clock.hpp"
#include "measure/case_runner.hpp"

namespace pathbench::test_case_runner {
namespace {

// A case whose behaviour each test scripts.
struct Script {
  int fail_on_sample = -1;     // measure() throws CaseFailure on this sample (0-based)
  int corrupt_on_sample = -1;  // verify() throws on this sample
  bool skip_in_prepare = false;
  bool failed_check = false;
  bool nan_sample = false;
  bool per_operation = false;  // time_per_op is per-operation: 3 operations each sample
  bool no_operations = false;  // ... but measure() hands none
  int warm_ups = 0;
  int measured = 0;
  int destroyed = 0;
};

class ScriptedBench final : public CaseBench {
 public:
  explicit ScriptedBench(Script& s) : s_(s) {}
  ~ScriptedBench() override { ++s_.destroyed; }
  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }
  std::vector<MetricSpec> metrics() const override {
    return {{"bandwidth", "GB/s", Better::kHigher},
            {"time_per_op", "s", Better::kLower, s_.per_operation}};
  }
  void warm_up(double) override { ++s_.warm_ups; }
  Sample measure() override {
    const int i = s_.measured++;
    if (i == s_.fail_on_sample) throw CaseFailure("scripted failure");
    const double seconds = 0.001 * (i + 1);
    Sample sample{seconds, {s_.nan_sample ? std::nan("") : 10.0 + i, seconds}, {}};
    if (s_.per_operation && !s_.no_operations) {
      // Operations of repetition i: i+1, 3(i+1) and 2(i+1) ms, median 2(i+1) ms.
      sample.operation_seconds = {{}, {seconds, 3 * seconds, 2 * seconds}};
    }
    return sample;
  }
  void verify() override {
    if (s_.measured - 1 == s_.corrupt_on_sample) throw CaseFailure("pattern mismatch at byte 7");
  }
  std::vector<Check> checks() const override {
    return {
        {"placement", !s_.failed_check, s_.failed_check ? "2 of 4 pages on node 1" : "ok", 1.0}};
  }
  std::uint64_t operations_per_sample() const override { return 3; }
  std::uint64_t bytes_per_sample() const override { return 300; }

 private:
  Script& s_;
};

class ScriptedFamily final : public Family {
 public:
  explicit ScriptedFamily(Script& s, std::optional<std::string> skip = {}) : s_(s), skip_(skip) {}
  std::string_view name() const override { return "scripted"; }
  std::string_view description() const override { return ""; }
  const std::vector<AxisSchema>& axes() const override {
    static const std::vector<AxisSchema> none;
    return none;
  }
  std::vector<std::string> required_axes() const override { return {}; }
  std::optional<std::string> invalid_combination(const CaseSpec&) const override { return {}; }
  MemoryNeeds memory_needs(const CaseSpec&) const override { return {}; }
  Requirements requirements(const CaseSpec&) const override {
    Requirements needs;
    if (skip_) needs.custom([why = *skip_](const Machine&, int) { return std::optional(why); });
    return needs;
  }
  std::unique_ptr<CaseBench> prepare(const CaseSpec&, const Machine&, int) const override {
    if (s_.skip_in_prepare) throw SkipCase("no hugetlb pages");
    return std::make_unique<ScriptedBench>(s_);
  }

 private:
  Script& s_;
  std::optional<std::string> skip_;
};

CaseResult run_case(Script& script, int repetitions = 5, std::optional<std::string> skip = {}) {
  static const Machine machine;
  std::FILE* sink = std::tmpfile();
  Progress progress(1, false, sink);
  CaseRunner runner(machine, RunSettings{}, progress);
  CaseSpec spec;
  spec.id = "scripted/x=1";
  spec.family = "scripted";
  spec.scenario = "s";
  spec.params = {{"x", 1}};
  spec.repetitions = repetitions;
  ScriptedFamily family(script, skip);
  CaseResult r = runner.run(spec, family);
  std::fclose(sink);
  return r;
}

TEST(CaseRunner, EveryRepetitionIsOneSampleAndWarmUpIsNotCounted) {
  Script s;
  const CaseResult r = run_case(s, 5);
  EXPECT_EQ(r.status, CaseStatus::kOk) << r.reason;
  EXPECT_EQ(s.warm_ups, 1);
  EXPECT_EQ(s.measured, 5);
  EXPECT_EQ(s.destroyed, 1);  // buffers released before the next case
  ASSERT_EQ(r.metrics.size(), 2u);
  EXPECT_EQ(r.metrics[0].name, "bandwidth");
  EXPECT_EQ(r.metrics[0].unit, "GB/s");
  EXPECT_EQ(r.metrics[0].samples, (std::vector<double>{10, 11, 12, 13, 14}));
  EXPECT_EQ(r.metrics[0].stats.n, 5u);
  EXPECT_DOUBLE_EQ(r.metrics[0].stats.median, 12.0);
  EXPECT_EQ(r.metrics[1].better, Better::kLower);
  EXPECT_EQ(r.timing_method, "host_steady_clock");
  EXPECT_EQ(r.operations_per_sample, 3u);
  EXPECT_EQ(r.bytes_per_sample, 300u);
  EXPECT_EQ(r.id, "scripted/x=1");
  // The bench's own check, then the core's record of how the samples were timed.
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_EQ(r.checks[1].name, "timing");
  EXPECT_TRUE(r.checks[1].passed);
  EXPECT_EQ(r.checks[1].value, "host_steady_clock");
  EXPECT_GT(r.elapsed_seconds, 0.0);
}

TEST(CaseRunner, AFailingRepetitionFailsTheCaseAndKeepsEarlierSamples) {
  Script s;
  s.fail_on_sample = 2;
  const CaseResult r = run_case(s, 5);
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("repetition 3"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("scripted failure"), std::string::npos) << r.reason;
  EXPECT_EQ(r.metrics[0].samples.size(), 2u);
  EXPECT_EQ(s.measured, 3);  // no sample measured after the failure
}

TEST(CaseRunner, AVerificationMismatchFailsTheCaseWithoutRecordingThatSample) {
  Script s;
  s.corrupt_on_sample = 0;
  const CaseResult r = run_case(s, 3);
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("pattern mismatch"), std::string::npos);
  EXPECT_TRUE(r.metrics[0].samples.empty());
}

TEST(CaseRunner, SkipsAreRecordedWithTheirReason) {
  Script s;
  const CaseResult before = run_case(s, 3, "one NUMA node");
  EXPECT_EQ(before.status, CaseStatus::kSkipped);
  EXPECT_EQ(before.reason, "one NUMA node");
  EXPECT_EQ(s.warm_ups, 0);
  Script t;
  t.skip_in_prepare = true;
  const CaseResult during = run_case(t, 3);
  EXPECT_EQ(during.status, CaseStatus::kSkipped);
  EXPECT_EQ(during.reason, "no hugetlb pages");
  EXPECT_TRUE(during.metrics.empty());
}

TEST(CaseRunner, AFailedCheckFailsTheCaseButKeepsItsSamples) {
  Script s;
  s.failed_check = true;
  const CaseResult r = run_case(s, 3);
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("placement"), std::string::npos);
  EXPECT_NE(r.reason.find("2 of 4 pages on node 1"), std::string::npos);
  EXPECT_EQ(r.metrics[0].samples.size(), 3u);
}

TEST(CaseRunner, ANonFiniteSampleFailsTheCase) {
  Script s;
  s.nan_sample = true;
  const CaseResult r = run_case(s, 3);
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("not finite"), std::string::npos);
}

TEST(CaseRunner, APerOperationMetricKeepsItsDistributionAndRepetitionMedians) {
  Script s;
  s.per_operation = true;
  const CaseResult r = run_case(s, 4);
  ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
  EXPECT_FALSE(r.metrics[0].distribution.has_value());
  const auto& m = r.metrics[1];
  // Each sample is its repetition's median, not what the bench put in values.
  const std::vector<double> medians = {0.002, 0.004, 0.006, 0.008};
  ASSERT_EQ(m.samples.size(), medians.size());
  for (std::size_t i = 0; i < medians.size(); ++i) EXPECT_DOUBLE_EQ(m.samples[i], medians[i]);
  ASSERT_TRUE(m.distribution.has_value());
  const OperationDistribution& d = *m.distribution;
  EXPECT_EQ(d.operations, 12u);
  EXPECT_EQ(d.histogram.count(), 12u);
  EXPECT_DOUBLE_EQ(d.statistic("max"), 0.012);
  const std::vector<double> maxima = {0.003, 0.006, 0.009, 0.012};
  ASSERT_EQ(d.repetition_values("max").size(), maxima.size());
  for (std::size_t i = 0; i < maxima.size(); ++i) {
    EXPECT_DOUBLE_EQ(d.repetition_values("max")[i], maxima[i]);
  }
  // Sorted: 1 2 2 3 3 4 4 6 6 8 9 12 ms; the median interpolates between 4 and 4.
  EXPECT_DOUBLE_EQ(d.statistic("p50"), 0.004);
  EXPECT_NEAR(d.mean, 0.005, 1e-15);
}

TEST(CaseRunner, APerOperationMetricWithoutOperationsFailsTheRepetition) {
  Script s;
  s.per_operation = true;
  s.no_operations = true;
  const CaseResult r = run_case(s, 3);
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("timed no operation for per-operation metric time_per_op"),
            std::string::npos)
      << r.reason;
}

TEST(OperationsFor, FillsMinTimeWithinBounds) {
  EXPECT_EQ(operations_for(0.05, 0.01, 100), 5u);
  EXPECT_EQ(operations_for(0.05, 0.011, 100), 5u);   // ceil(4.5)
  EXPECT_EQ(operations_for(0.05, 1.0, 100), 1u);     // one slow op is enough
  EXPECT_EQ(operations_for(0.05, 1e-9, 256), 256u);  // capped
  EXPECT_EQ(operations_for(0.05, 0.0, 256), 256u);   // too fast for the clock
  EXPECT_EQ(operations_for(0.05, std::nan(""), 256), 1u);
  EXPECT_EQ(operations_for(0.05, 0.01, 0), 1u);
}

}  // namespace
}  // namespace pathbench::test_case_runner
