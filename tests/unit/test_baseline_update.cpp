// `baseline update` (compare/baseline_update.hpp): results added to a baseline, only the newest
// runs kept, the statistics those runs give, and every refusal of a promotion, with its exit code.
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/baseline.hpp"
#include "compare/baseline_update.hpp"
#include "core/atomic_file.hpp"
#include "temp_dir.hpp"

namespace pathbench::test_baseline_update {
namespace {

using ojson = nlohmann::ordered_json;

const char* kPinned =
    "copy/measure=bandwidth/direction=h2d/host_memory=pinned/host_node=local/bytes=268435456";
const char* kMemcpy = "host_memory/measure=memcpy/cpu_node=0/mem_node=0/page=4k/bytes=67108864";
const char* kBaselineFile = "ci/baselines/h200.json";

ojson context(const std::string& node_type = "NVIDIA H200 x1 / PCIe Gen5 x16 / 1 NUMA") {
  return ojson{{"node_type", node_type},
               {"topology_fingerprint", "f00d"},
               {"hostname", "gpu-node-1"},
               {"git_sha", "abc"},
               {"driver_version", "580.159.04"}};
}

MetricResult metric(const std::string& name, Better better, double median, std::size_t n) {
  MetricResult m;
  m.name = name;
  m.unit = name == "bandwidth" ? "GB/s" : "s";
  m.better = better;
  for (std::size_t i = 0; i < n; ++i) {
    m.samples.push_back(median * (1 + 0.001 * (double(i) - double(n / 2))));
  }
  m.stats = summarize(m.samples);
  return m;
}

// A run of two cases; the pinned copy's round trip is a per-operation metric with a statistic
// per repetition, which a baseline keeps and an update must carry over.
Result run(double pinned, double memcpy, const std::string& start, ojson ctx = context(),
           std::size_t n = 9) {
  Result r;
  r.context = std::move(ctx);
  r.scenario_files = {{"scenarios/default.json", std::string(64, 'a')}};
  r.start_time = start;
  r.end_time = start;
  CaseResult a;
  a.id = kPinned;
  a.family = "copy";
  a.timing_method = "cuda_events_latched";
  MetricResult round_trip = metric("round_trip_time", Better::kLower, 1e-5 * pinned / 55, n);
  round_trip.distribution.emplace();
  for (std::size_t k = 0; k < kDistributionStatistics.size(); ++k) {
    for (const double x : round_trip.samples) {
      round_trip.distribution->per_repetition[k].push_back(x * double(k + 1));
    }
  }
  a.metrics = {metric("bandwidth", Better::kHigher, pinned, n), round_trip};
  CaseResult b;
  b.id = kMemcpy;
  b.family = "host_memory";
  b.timing_method = "host_steady_clock";
  b.gate = ojson{{"threshold_pct", 15}};
  b.metrics = {metric("bandwidth", Better::kHigher, memcpy, n)};
  r.cases = {a, b};
  return r;
}

std::string minute(int m) {
  return "2026-12-01T01:" + std::string(m < 10 ? "0" : "") + std::to_string(m) + ":00Z";
}

// Runs 1..5 (one a minute) as their files held them, and the baseline file promoted from them,
// as update reads it back.
std::vector<Result> first_runs() {
  return {run(55.0, 20.0, minute(1)), run(55.2, 21.0, minute(2)), run(54.9, 19.0, minute(3)),
          run(55.1, 20.5, minute(4)), run(55.05, 19.5, minute(5))};
}
std::vector<std::string> first_names() {
  return {"run1.json", "run2.json", "run3.json", "run4.json", "run5.json"};
}
Baseline promoted(const std::vector<Result>& runs = first_runs(), PromoteOptions options = {}) {
  return baseline_from_json(to_json(build_baseline(runs, first_names(), options)), kBaselineFile);
}

std::vector<std::string> files_of(const Baseline& b) {
  std::vector<std::string> out;
  for (const auto& r : b.runs) out.push_back(r.file);
  return out;
}

std::vector<std::string> files_of(const std::vector<BaselineRunRef>& runs) {
  std::vector<std::string> out;
  for (const auto& r : runs) out.push_back(r.file);
  return out;
}

// The exit code and message of a refused update (0 and "" when it was accepted).
struct Refusal {
  int exit_code = 0;
  std::string message;
};
Refusal refusal(const Baseline& b, std::vector<Result> results, std::vector<std::string> files,
                PromoteOptions options = {}) {
  try {
    update_baseline(b, kBaselineFile, std::move(results), files, kDefaultBaselineKeep, options);
  } catch (const PromoteError& e) {
    return {e.exit_code(), e.what()};
  }
  return {};
}

TEST(BaselineUpdate, AddsRunsAndKeepsTheNewest) {
  const BaselineUpdate u = update_baseline(promoted(), kBaselineFile,
                                           {run(55.3, 20.2, minute(7)), run(55.0, 20.1, minute(6))},
                                           {"run7.json", "run6.json"}, 5, {});
  // Oldest first by start time; the baseline's runs keep the file names they had in it.
  EXPECT_EQ(files_of(u.baseline), (std::vector<std::string>{"run3.json", "run4.json", "run5.json",
                                                            "run6.json", "run7.json"}));
  EXPECT_EQ(files_of(u.added), (std::vector<std::string>{"run6.json", "run7.json"}));
  EXPECT_EQ(files_of(u.dropped), (std::vector<std::string>{"run1.json", "run2.json"}));
  EXPECT_TRUE(u.too_old.empty());
  EXPECT_EQ(u.baseline.runs.front().start_time, minute(3));
  EXPECT_EQ(u.baseline.runs.front().hostname, "gpu-node-1");
  EXPECT_EQ(u.baseline.run_contexts.size(), 5u);
  for (const auto& c : u.baseline.cases) {
    for (const auto& m : c.metrics) EXPECT_EQ(m.runs.size(), 5u) << c.id << " " << m.name;
  }

  // Below the limit nothing is dropped; a result older than the newest `keep` runs is checked
  // but not added.
  const BaselineUpdate grown =
      update_baseline(promoted(), kBaselineFile, {run(55.0, 20.1, minute(6))}, {"run6.json"},
                      kDefaultBaselineKeep, {});
  EXPECT_EQ(grown.baseline.runs.size(), 6u);
  EXPECT_TRUE(grown.dropped.empty());
  const BaselineUpdate late = update_baseline(promoted(), kBaselineFile,
                                              {run(55.0, 20.1, minute(0))}, {"run0.json"}, 5, {});
  EXPECT_EQ(files_of(late.too_old), std::vector<std::string>{"run0.json"});
  EXPECT_TRUE(late.added.empty());
  EXPECT_TRUE(late.dropped.empty());
  EXPECT_EQ(files_of(late.baseline), first_names());
}

TEST(BaselineUpdate, DefaultKeepsTwentyRuns) {
  EXPECT_EQ(kDefaultBaselineKeep, 20u);
  std::vector<Result> more;
  std::vector<std::string> names;
  for (int m = 6; m <= 24; ++m) {
    more.push_back(run(55.0 + 0.01 * m, 20.0, minute(m)));
    names.push_back("run" + std::to_string(m) + ".json");
  }
  const BaselineUpdate u =
      update_baseline(promoted(), kBaselineFile, more, names, kDefaultBaselineKeep, {});
  EXPECT_EQ(u.baseline.runs.size(), 20u);
  EXPECT_EQ(files_of(u.dropped),
            (std::vector<std::string>{"run1.json", "run2.json", "run3.json", "run4.json"}));
  EXPECT_EQ(u.added.size(), 19u);
}

TEST(BaselineUpdate, IsWhatPromotingTheKeptRunsWrites) {
  auto runs = first_runs();
  runs.push_back(run(56.0, 23.0, minute(6)));
  runs.push_back(run(54.0, 17.0, minute(7)));
  const BaselineUpdate u = update_baseline(promoted(), kBaselineFile, {runs[5], runs[6]},
                                           {"run6.json", "run7.json"}, 4, {});
  const std::vector<Result> kept(runs.begin() + 3, runs.end());
  Baseline expected =
      build_baseline(kept, {"run4.json", "run5.json", "run6.json", "run7.json"}, {});
  expected.created = u.baseline.created;
  EXPECT_EQ(to_json(u.baseline).dump(), to_json(expected).dump());

  // Between-run statistics of the kept runs only: memcpy medians 20.5 19.5 23 17.
  const BaselineMetric* bw = u.baseline.find(kMemcpy)->metric("bandwidth");
  ASSERT_NE(bw, nullptr);
  EXPECT_EQ(bw->between.n_runs, 4u);
  EXPECT_NEAR(bw->between.center, 20.0, 1e-9);
  EXPECT_NEAR(bw->between.spread_sd, summarize(std::vector<double>{20.5, 19.5, 23, 17}).stddev,
              1e-9);
  EXPECT_GT(bw->between.spread_pct,
            promoted().find(kMemcpy)->metric("bandwidth")->between.spread_pct);
  // The per-repetition statistics of the runs that were in the baseline came through.
  const BaselineMetric* rtt = u.baseline.find(kPinned)->metric("round_trip_time");
  ASSERT_NE(rtt, nullptr);
  EXPECT_EQ(rtt->runs.front().per_repetition.size(), kDistributionStatistics.size());
  EXPECT_TRUE(statistic_view(*rtt, "p99").has_value());
}

TEST(BaselineUpdate, RefusesWhatPromoteRefuses) {
  const Baseline b = promoted();
  Result failed = run(55.0, 20.0, minute(6));
  failed.cases[1].status = CaseStatus::kFailed;
  failed.cases[1].reason = "copy mismatch";
  Refusal r = refusal(b, {failed}, {"new.json"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.message.find("new.json: /cases/1: case " + std::string(kMemcpy) + " failed"),
            std::string::npos)
      << r.message;

  r = refusal(b, {run(55.0, 20.0, minute(6), context("NVIDIA H100 x8"))}, {"h100.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.message.find("h100.json: /context/node_type"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find(std::string(kBaselineFile) + " run 1 (run1.json)"), std::string::npos)
      << r.message;

  Result other_topology = run(55.0, 20.0, minute(6));
  other_topology.context["topology_fingerprint"] = "beef";
  EXPECT_EQ(refusal(b, {other_topology}, {"beef.json"}).exit_code, 2);

  Result unfinished = run(55.0, 20.0, minute(6));
  unfinished.end_time.clear();
  r = refusal(b, {unfinished}, {"unfinished.json"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.message.find("unfinished.json: /context/end_time"), std::string::npos) << r.message;

  r = refusal(b, {run(55.0, 20.0, minute(6), context(), 3)}, {"quick.json"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.message.find("3 samples"), std::string::npos) << r.message;

  Result fewer_cases = run(55.0, 20.0, minute(6));
  fewer_cases.cases.pop_back();
  r = refusal(b, {fewer_cases}, {"fewer.json"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.message.find("fewer.json: /cases: case " + std::string(kMemcpy)), std::string::npos)
      << r.message;

  Result skipped = run(55.0, 20.0, minute(6));
  skipped.cases[0].status = CaseStatus::kSkipped;
  skipped.cases[0].metrics.clear();
  r = refusal(b, {skipped}, {"skipped.json"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.message.find("skipped.json: /cases/0/status"), std::string::npos) << r.message;

  // Refused however old: whether a result is kept does not decide whether it is checked.
  Result old_failed = failed;
  old_failed.start_time = old_failed.end_time = minute(0);
  EXPECT_EQ(refusal(b, {old_failed}, {"old.json"}).exit_code, 3);
}

TEST(BaselineUpdate, RefusesARunTwice) {
  const Baseline b = promoted();
  // A run the baseline already holds, under its own name or another: host, start and samples.
  for (const char* name : {"run3.json", "copy-of-run3.json"}) {
    const Refusal r = refusal(b, {first_runs()[2]}, {name});
    EXPECT_EQ(r.exit_code, 3) << name;
    EXPECT_NE(r.message.find(std::string(name) + ": /context/start_time: the same run as " +
                             kBaselineFile + " run 3 (run3.json)"),
              std::string::npos)
        << r.message;
  }
  // One new result given twice.
  const Result fresh = run(55.0, 20.0, minute(6));
  const Refusal twice = refusal(b, {fresh, fresh}, {"a.json", "b.json"});
  EXPECT_EQ(twice.exit_code, 3);
  EXPECT_NE(twice.message.find("b.json: /context/start_time: the same run as a.json"),
            std::string::npos)
      << twice.message;
  // Another run that started in the same second on the same host is another run.
  EXPECT_EQ(refusal(b, {run(55.01, 20.0, minute(3))}, {"same-second.json"}).exit_code, 0);
}

TEST(BaselineUpdate, RefusesNoiseUnlessAllowed) {
  const ojson steal{{"cpu_share", {{"steal_pct", 12.5}, {"iowait_pct", 0.0}, {"busy_pct", 50.0}}}};
  Result noisy = run(55.0, 20.0, minute(6));
  noisy.context["environment"] = steal;
  Refusal r = refusal(promoted(), {noisy}, {"noisy.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.message.find("noisy.json: /context/environment: taken under noise"),
            std::string::npos)
      << r.message;
  PromoteOptions allow;
  allow.allow_noisy = true;
  EXPECT_EQ(refusal(promoted(), {noisy}, {"noisy.json"}, allow).exit_code, 0);

  // A baseline promoted with --allow-noisy needs it again: its runs are checked as a promotion's.
  auto runs = first_runs();
  runs[1].context["environment"] = steal;
  const Baseline noisy_baseline = promoted(runs, allow);
  r = refusal(noisy_baseline, {run(55.0, 20.0, minute(6))}, {"quiet.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.message.find(std::string(kBaselineFile) + " run 2 (run2.json): /context/environment"),
            std::string::npos)
      << r.message;
  EXPECT_EQ(refusal(noisy_baseline, {run(55.0, 20.0, minute(6))}, {"quiet.json"}, allow).exit_code,
            0);
}

TEST(BaselineUpdate, RefusalWritesNothing) {
  const testing::TempDir dir("pathbench_baseline_update");
  const auto path = dir.path() / "h200.json";
  save_baseline(path, build_baseline(first_runs(), first_names(), {}));
  const std::string before = read_text_file(path);
  Result failed = run(55.0, 20.0, minute(6));
  failed.cases[0].status = CaseStatus::kFailed;
  const Baseline b = load_baseline(path);
  EXPECT_THROW(update_baseline(b, path.string(), {failed}, {"failed.json"}, 5, {}), PromoteError);
  EXPECT_EQ(read_text_file(path), before);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(BaselineUpdate, KeepsAtLeastOneRun) {
  EXPECT_THROW(update_baseline(promoted(), kBaselineFile, {}, {}, 0, {}), std::invalid_argument);
  const BaselineUpdate one = update_baseline(promoted(), kBaselineFile, {}, {}, 1, {});
  EXPECT_EQ(files_of(one.baseline), std::vector<std::string>{"run5.json"});
  EXPECT_FALSE(one.baseline.find(kMemcpy)->metric("bandwidth")->between.known);
}

}  // namespace
}  // namespace pathbench::test_baseline_update
