// Multi-run baselines (compare/baseline.hpp): promotion rules and their exit codes, the
// between-run statistics, the JSON round trip, reading an old single-result baseline; what
// changed between contexts (compare/context_changes.hpp); confirmation re-runs
// (apply_confirmation).
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/baseline.hpp"
#include "compare/compare.hpp"
#include "compare/context_changes.hpp"
#include "export/compare_report.hpp"
#include "inventory/environment.hpp"
#include "stats/robust.hpp"

namespace pathbench::test_baseline {
namespace {

using ojson = nlohmann::ordered_json;

const char* kPinned =
    "copy/measure=bandwidth/direction=h2d/host_memory=pinned/host_node=local/bytes=268435456";
const char* kMemcpy = "host_memory/measure=memcpy/cpu_node=0/mem_node=0/page=4k/bytes=67108864";

ojson context(const std::string& node_type = "NVIDIA H200 x1 / PCIe Gen5 x16 / 1 NUMA",
              const std::string& fingerprint = "f00d") {
  return ojson{{"node_type", node_type},
               {"topology_fingerprint", fingerprint},
               {"hostname", "gpu-node-1"},
               {"git_sha", "abc"},
               {"driver_version", "580.159.04"},
               {"bios_version", "2.1"},
               {"kernel", "Linux 6.8.0"},
               {"gpus", ojson::array({ojson{{"index", 0},
                                            {"pci_bus_id", "0000:65:00.0"},
                                            {"vbios", "96.00.A1"},
                                            {"pcie_gen_current", 5},
                                            {"pcie_width_current", 16}}})}};
}

MetricResult metric(const std::string& name, Better better, std::vector<double> samples) {
  MetricResult m;
  m.name = name;
  m.unit = name == "bandwidth" ? "GB/s" : "s";
  m.better = better;
  m.samples = std::move(samples);
  m.stats = summarize(m.samples);
  return m;
}

std::vector<double> around(double median, std::size_t n = 9) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i)
    v.push_back(median * (1 + 0.001 * (double(i) - double(n / 2))));
  return v;
}

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
  a.metrics = {metric("bandwidth", Better::kHigher, around(pinned, n)),
               metric("round_trip_time", Better::kLower, around(1e-5, n))};
  CaseResult b;
  b.id = kMemcpy;
  b.family = "host_memory";
  b.timing_method = "host_steady_clock";
  b.gate = ojson{{"threshold_pct", 15}};
  b.metrics = {metric("bandwidth", Better::kHigher, around(memcpy, n))};
  r.cases = {a, b};
  return r;
}

std::vector<Result> five_runs() {
  return {run(55.0, 20.0, "2026-12-01T01:00:00Z"), run(55.2, 21.0, "2026-12-01T01:01:00Z"),
          run(54.9, 19.0, "2026-12-01T01:02:00Z"), run(55.1, 20.5, "2026-12-01T01:03:00Z"),
          run(55.05, 19.5, "2026-12-01T01:04:00Z")};
}

std::vector<std::string> names(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back("run" + std::to_string(i + 1) + ".json");
  return out;
}

int promote_exit(const std::vector<Result>& results) {
  try {
    build_baseline(results, names(results.size()), {});
  } catch (const PromoteError& e) {
    return e.exit_code();
  }
  return 0;
}

std::string promote_error(const std::vector<Result>& results) {
  try {
    build_baseline(results, names(results.size()), {});
  } catch (const PromoteError& e) {
    return e.what();
  }
  return "";
}

TEST(Baseline, KeepsEveryRunAndTheBetweenRunSpread) {
  const Baseline b = build_baseline(five_runs(), names(5), {});
  ASSERT_EQ(b.runs.size(), 5u);
  const BaselineCase* memcpy = b.find(kMemcpy);
  ASSERT_NE(memcpy, nullptr);
  const BaselineMetric* bw = memcpy->metric("bandwidth");
  ASSERT_NE(bw, nullptr);
  EXPECT_EQ(bw->runs.size(), 5u);
  EXPECT_EQ(bw->pooled_samples().size(), 45u);
  EXPECT_TRUE(bw->between.known);
  EXPECT_NEAR(bw->between.center, 20.0, 1e-9);
  // run medians 20 21 19 20.5 19.5: deviations 0 1 1 .5 .5 -> MAD .5 -> 0.7413; standard
  // deviation sqrt(2.5 / 4) = 0.7906; the spread is the larger.
  EXPECT_NEAR(bw->between.spread_mad, 0.7413, 1e-4);
  EXPECT_NEAR(bw->between.spread_sd, 0.7906, 1e-4);
  EXPECT_NEAR(bw->between.spread, 0.7906, 1e-4);
  EXPECT_NEAR(bw->between.spread_pct, 3.953, 1e-3);
  EXPECT_EQ(bw->timing_class, TimingClass::kHost);
  const BaselineCase* pinned = b.find(kPinned);
  EXPECT_EQ(pinned->metric("bandwidth")->timing_class, TimingClass::kDevice);
  // A round trip inside a latched case is still observed by the host.
  EXPECT_EQ(pinned->metric("round_trip_time")->timing_class, TimingClass::kHost);
}

TEST(Baseline, JsonRoundTripAndSchema) {
  const Baseline b = build_baseline(five_runs(), names(5), {});
  const ojson j = to_json(b);
  EXPECT_EQ(j["schema"], kBaselineSchema);
  EXPECT_EQ(j["cases"][1]["metrics"]["bandwidth"]["between_run"]["n_runs"], 5);
  const Baseline back = baseline_from_json(j, "baseline.json");
  EXPECT_EQ(to_json(back).dump(), j.dump());
  ojson bad = j;
  bad["cases"][0]["metrics"]["bandwidth"]["runs"].erase(0);
  try {
    baseline_from_json(bad, "b.json");
    FAIL() << "a metric with fewer runs than the baseline was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("b.json: /cases/0/metrics/bandwidth/runs"),
              std::string::npos)
        << e.what();
  }
}

TEST(Baseline, ResultReadAsOneRunBaseline) {
  const auto dir = std::filesystem::temp_directory_path() / "pathbench-baseline-test";
  std::filesystem::create_directories(dir);
  save_result(dir / "r.json", five_runs()[0]);
  const Baseline b = load_baseline(dir / "r.json");
  EXPECT_EQ(b.runs.size(), 1u);
  EXPECT_FALSE(b.find(kMemcpy)->metric("bandwidth")->between.known);
  save_baseline(dir / "b.json", build_baseline(five_runs(), names(5), {}));
  EXPECT_EQ(load_baseline(dir / "b.json").runs.size(), 5u);
  std::filesystem::remove_all(dir);
}

TEST(Baseline, RefusesWhatIsNoBaselineMaterial) {
  auto runs = five_runs();
  runs[2].context["node_type"] = "NVIDIA H100 x8";
  EXPECT_EQ(promote_exit(runs), 2);
  EXPECT_NE(promote_error(runs).find("run3.json: /context/node_type"), std::string::npos)
      << promote_error(runs);

  runs = five_runs();
  runs[1].context["topology_fingerprint"] = "beef";
  EXPECT_EQ(promote_exit(runs), 2);

  runs = five_runs();
  runs[3].end_time.clear();
  EXPECT_EQ(promote_exit(runs), 3);
  EXPECT_NE(promote_error(runs).find("run4.json: /context/end_time"), std::string::npos);

  runs = five_runs();
  runs[0].cases[1].status = CaseStatus::kFailed;
  runs[0].cases[1].reason = "copy mismatch";
  EXPECT_EQ(promote_exit(runs), 3);
  EXPECT_NE(promote_error(runs).find("copy mismatch"), std::string::npos);

  runs = five_runs();
  runs[4] = run(55, 20, "2026-12-01T01:05:00Z", context(), 3);  // a --quick run
  EXPECT_EQ(promote_exit(runs), 3);
  EXPECT_NE(promote_error(runs).find("3 samples"), std::string::npos) << promote_error(runs);

  runs = five_runs();
  runs[2].cases.pop_back();
  EXPECT_EQ(promote_exit(runs), 3);
  EXPECT_NE(promote_error(runs).find("missing"), std::string::npos) << promote_error(runs);

  runs = five_runs();
  runs[4] = runs[1];  // one file given twice
  EXPECT_EQ(promote_exit(runs), 3);
  EXPECT_NE(promote_error(runs).find("run5.json: /context/start_time: the same run as run2.json"),
            std::string::npos)
      << promote_error(runs);

  runs = five_runs();
  runs[2].cases[0].status = CaseStatus::kSkipped;
  runs[2].cases[0].metrics.clear();
  EXPECT_EQ(promote_exit(runs), 3);
}

TEST(Baseline, RefusesRunsTakenUnderNoiseUnlessAllowed) {
  auto runs = five_runs();
  runs[1].context["environment"] =
      ojson{{"cpu_share", {{"steal_pct", 12.5}, {"iowait_pct", 0.0}, {"busy_pct", 50.0}}}};
  EXPECT_EQ(promote_exit(runs), 2) << promote_error(runs);
  EXPECT_NE(promote_error(runs).find("run2.json: /context/environment"), std::string::npos);
  PromoteOptions allow;
  allow.allow_noisy = true;
  EXPECT_EQ(build_baseline(runs, names(5), allow).runs.size(), 5u);
}

// Contexts as their files hold them, read as the comparison reads them.
std::vector<ContextChange> changes_between(const ojson& baseline, const ojson& result) {
  return context_changes(RunContext::from_json(baseline, "baseline.json"),
                         RunContext::from_json(result, "result.json"));
}

TEST(ContextChanges, DriverFirstThenFirmwareAndGpus) {
  ojson before = context(), after = context();
  after["driver_version"] = "590.10.01";
  after["bios_version"] = "2.2";
  after["gpus"][0]["vbios"] = "96.00.B0";
  after["gpus"][0]["pcie_gen_current"] = 1;
  const auto changes = changes_between(before, after);
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0].text(), "driver 580.159.04 → 590.10.01");
  EXPECT_EQ(changes[1].label, "BIOS version");
  EXPECT_EQ(changes[2].text(), "GPU 0 VBIOS 96.00.A1 → 96.00.B0");
  EXPECT_EQ(changes[3].field, "gpus/0/pcie_gen_current");
  EXPECT_NE(changes[3].note.find("idle"), std::string::npos);
  EXPECT_TRUE(changes_between(before, before).empty());
  // A field an older pathbench did not record is not a change of the node.
  ojson older = before;
  older.erase("bios_version");
  EXPECT_TRUE(changes_between(older, before).empty());
}

TEST(Confirmation, MajorityOfRunsDecides) {
  const Baseline b = build_baseline(five_runs(), names(5), {});
  const Result slow = run(45.0, 20.0, "2026-12-01T02:00:00Z");  // pinned -18 %
  const Result fine = run(55.0, 20.0, "2026-12-01T02:01:00Z");
  CompareOptions options;
  Comparison c = compare_results(b, "b.json", slow, "r.json", options);
  ASSERT_EQ(suspect_case_ids(c), std::vector<std::string>{kPinned});
  EXPECT_EQ(c.exit_code, 1);

  Comparison confirmed = c;
  apply_confirmation(confirmed, b, {slow, slow}, options);
  EXPECT_EQ(confirmed.exit_code, 1);
  const auto& m = confirmed.cases.front().metrics.front();
  EXPECT_EQ(m.verdict, Verdict::kRegression);
  ASSERT_TRUE(m.confirmation);
  EXPECT_EQ(m.confirmation->reproduced, 3u);
  EXPECT_EQ(m.confirmation->rerun_medians.size(), 2u);
  EXPECT_NE(to_json(confirmed).dump().find("\"label\":\"regression (confirmed 3/3)\""),
            std::string::npos);

  Comparison flaky = c;
  apply_confirmation(flaky, b, {fine, fine}, options);
  EXPECT_EQ(flaky.exit_code, 0);
  const CaseComparison* k = nullptr;
  for (const auto& x : flaky.cases) {
    if (x.id == kPinned) k = &x;
  }
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->verdict, Verdict::kFlaky);
  EXPECT_NE(to_json(flaky).dump().find("\"label\":\"flaky (1/3)\""), std::string::npos);

  Comparison two_of_three = c;
  apply_confirmation(two_of_three, b, {slow, fine}, options);
  EXPECT_EQ(two_of_three.exit_code, 1);

  // A re-run that could not run the case counts against the node.
  Comparison lost = c;
  apply_confirmation(lost, b, {Result{}, fine}, options);
  EXPECT_EQ(lost.exit_code, 1);
}

TEST(Compare, WhatChangedLeadsEveryOutput) {
  const Baseline b = build_baseline(five_runs(), names(5), {});
  Result r = run(55.0, 20.0, "2026-12-01T02:00:00Z");
  r.context["driver_version"] = "590.10.01";
  const Comparison c = compare_results(b, "b.json", r, "r.json", {});
  ASSERT_FALSE(c.changes.empty());
  EXPECT_EQ(to_json(c)["changes"][0]["text"], "driver 580.159.04 → 590.10.01");
  const std::string xml = junit_xml(c);
  EXPECT_LT(xml.find("changed.driver_version"), xml.find("<testcase"));
  char* buf = nullptr;
  std::size_t size = 0;
  FILE* out = open_memstream(&buf, &size);
  print_comparison(c, out, false);
  std::fclose(out);
  const std::string text(buf, size);
  std::free(buf);
  EXPECT_EQ(text.rfind("what changed since the baseline:\n  driver 580.159.04 → 590.10.01", 0), 0u)
      << text;
}

}  // namespace
}  // namespace pathbench::test_baseline
