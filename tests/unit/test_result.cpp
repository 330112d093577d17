#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "result/result.hpp"
#include "temp_dir.hpp"

namespace pathbench::test_result {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// A fresh directory under the system temp dir, removed with everything in it.
// TempDir with this file's prefix.
struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("pathbench_result_test") {}
};

MetricResult metric(std::string name, std::string unit, Better better, std::vector<double> x) {
  MetricResult m;
  m.name = std::move(name);
  m.unit = std::move(unit);
  m.better = better;
  m.samples = std::move(x);
  m.stats = summarize(m.samples);
  return m;
}

Result sample_result() {
  Result r;
  // Keys deliberately not in alphabetical order: the round trip must keep the writer's order.
  r.context = ojson::object();
  r.context["tool_version"] = "0.1.0";
  r.context["hostname"] = "node-a";
  r.context["gpus"] = ojson::array({ojson{{"name", "NVIDIA H200"}, {"pcie_gen_max", 5}}});
  r.context["cpuset_aligned_with_gpu"] = nullptr;
  r.scenario_files = {{"scenarios/copy.json", std::string(64, 'a')},
                      {"scenarios/numa.json", std::string(64, 'b')}};
  r.start_time = "2026-11-29T13:45:12Z";
  r.end_time = "2026-11-29T13:47:01Z";

  CaseResult ok;
  ok.id = "copy/size=256MiB/direction=h2d/host_memory=pinned";
  ok.scenario = "h2d_bandwidth";
  ok.family = "copy";
  ok.params = ojson::object();
  ok.params["size"] = 268435456;
  ok.params["direction"] = "h2d";
  ok.params["host_memory"] = "pinned";
  ok.timing_method = std::string(to_string(TimingMethod::kCudaEventsLatched));
  ok.operations_per_sample = 8;
  ok.bytes_per_sample = 8ull * 268435456;
  ok.elapsed_seconds = 3.25;
  ok.metrics.push_back(metric("bandwidth", "GB/s", Better::kHigher, {54.1, 54.3, 53.9, 54.2}));
  ok.metrics.push_back(
      metric("time_per_copy", "s", Better::kLower, {0.00496, 0.00494, 0.00498, 0.00495}));
  ok.checks.push_back({"copy_pattern", true, "256 MiB compared", ojson(268435456)});
  ok.checks.push_back({"host_memory_kind", true, "cudaPointerGetAttributes: host registered", {}});
  ok.status = CaseStatus::kOk;

  CaseResult skipped;
  skipped.id = "peer/size=1GiB/peer_access=on";
  skipped.scenario = "peer";
  skipped.family = "peer";
  skipped.params = ojson{{"size", 1073741824}, {"peer_access", "on"}};
  skipped.status = CaseStatus::kSkipped;
  skipped.reason = "needs 2 GPUs, found 1";
  skipped.elapsed_seconds = 0.0;

  CaseResult failed;
  failed.id = "copy/size=4KiB/direction=d2h/host_memory=pageable";
  failed.scenario = "d2h_latency";
  failed.family = "copy";
  failed.params = ojson{{"size", 4096}};
  failed.timing_method = std::string(to_string(TimingMethod::kHostSteadyClock));
  failed.operations_per_sample = 1000;
  failed.bytes_per_sample = 4096000;
  failed.elapsed_seconds = 0.5;
  failed.metrics.push_back(metric("latency", "s", Better::kLower, {}));
  failed.checks.push_back({"copy_pattern", false, "byte 17 differs: 0x00 != 0x5a", ojson(17)});
  failed.status = CaseStatus::kFailed;
  failed.reason = "copy_pattern check failed";

  r.cases = {ok, skipped, failed};
  return r;
}

// The pointer of the InputError that loading `doc` gives, or a test failure.
std::string error_pointer(const ojson& doc, std::string* message = nullptr) {
  try {
    result_from_json(doc, "result.json");
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "result.json");
    if (message) *message = e.what();
    return e.pointer();
  }
  ADD_FAILURE() << "no InputError for " << doc.dump();
  return "<no error>";
}

TEST(ResultNames, EnumsRoundTrip) {
  EXPECT_EQ(to_string(Better::kHigher), "higher");
  EXPECT_EQ(to_string(Better::kLower), "lower");
  EXPECT_EQ(to_string(TimingMethod::kCudaEventsLatched), "cuda_events_latched");
  EXPECT_EQ(to_string(TimingMethod::kHostSteadyClock), "host_steady_clock");
  EXPECT_EQ(to_string(CaseStatus::kOk), "ok");
  EXPECT_EQ(to_string(CaseStatus::kSkipped), "skipped");
  EXPECT_EQ(to_string(CaseStatus::kFailed), "failed");
  for (auto s : {CaseStatus::kOk, CaseStatus::kSkipped, CaseStatus::kFailed}) {
    EXPECT_EQ(parse_case_status(to_string(s)), s);
  }
  for (auto b : {Better::kHigher, Better::kLower}) EXPECT_EQ(parse_better(to_string(b)), b);
  for (auto m : {TimingMethod::kCudaEventsLatched, TimingMethod::kHostSteadyClock}) {
    EXPECT_EQ(parse_timing_method(to_string(m)), m);
  }
  EXPECT_FALSE(parse_case_status("maybe"));
  EXPECT_FALSE(parse_better("Higher"));
  EXPECT_FALSE(parse_timing_method(""));
}

TEST(ResultJson, Layout) {
  const ojson j = to_json(sample_result());
  EXPECT_EQ(j.at("schema"), "pathbench.result/v1");
  std::vector<std::string> top;
  for (const auto& [k, v] : j.items()) top.push_back(k);
  EXPECT_EQ(top, (std::vector<std::string>{"schema", "complete", "context", "cases"}));
  EXPECT_EQ(j.at("complete"), true);

  std::vector<std::string> context_keys;
  for (const auto& [k, v] : j.at("context").items()) context_keys.push_back(k);
  EXPECT_EQ(context_keys,
            (std::vector<std::string>{"tool_version", "hostname", "gpus", "cpuset_aligned_with_gpu",
                                      "scenario_files", "start_time", "end_time"}));
  EXPECT_EQ(j.at("context").at("scenario_files").at(1).at("path"), "scenarios/numa.json");

  const ojson& c0 = j.at("cases").at(0);
  std::vector<std::string> case_keys;
  for (const auto& [k, v] : c0.items()) case_keys.push_back(k);
  EXPECT_EQ(case_keys,
            (std::vector<std::string>{"id", "scenario", "family", "params", "status", "reason",
                                      "timing_method", "operations_per_sample", "bytes_per_sample",
                                      "elapsed_seconds", "metrics", "checks"}));
  std::vector<std::string> metric_names;
  for (const auto& [k, v] : c0.at("metrics").items()) metric_names.push_back(k);
  EXPECT_EQ(metric_names, (std::vector<std::string>{"bandwidth", "time_per_copy"}));
  const ojson& bw = c0.at("metrics").at("bandwidth");
  EXPECT_EQ(bw.at("unit"), "GB/s");
  EXPECT_EQ(bw.at("better"), "higher");
  EXPECT_EQ(bw.at("samples").size(), 4u);
  EXPECT_EQ(bw.at("stats").at("n"), 4);
  EXPECT_EQ(c0.at("status"), "ok");
  EXPECT_EQ(c0.at("timing_method"), "cuda_events_latched");
  EXPECT_TRUE(c0.at("checks").at(1).at("value").is_null());

  const ojson& c1 = j.at("cases").at(1);
  EXPECT_EQ(c1.at("status"), "skipped");
  EXPECT_EQ(c1.at("reason"), "needs 2 GPUs, found 1");
  EXPECT_TRUE(c1.at("timing_method").is_null());
  EXPECT_TRUE(c1.at("metrics").is_object());
  EXPECT_TRUE(c1.at("metrics").empty());
  EXPECT_TRUE(c1.at("checks").is_array());
  EXPECT_EQ(j.at("cases").at(2).at("status"), "failed");
}

TEST(ResultJson, RoundTripIsExact) {
  const ojson first = to_json(sample_result());
  const std::string text = first.dump(2);
  const Result back = result_from_json(ojson::parse(text), "result.json");
  const ojson second = to_json(back);
  EXPECT_EQ(first, second);
  EXPECT_EQ(text, second.dump(2));

  ASSERT_EQ(back.cases.size(), 3u);
  EXPECT_EQ(back.scenario_files.size(), 2u);
  EXPECT_EQ(back.start_time, "2026-11-29T13:45:12Z");
  EXPECT_FALSE(back.context.contains("scenario_files"));
  EXPECT_FALSE(back.context.contains("start_time"));
  EXPECT_EQ(back.cases[1].status, CaseStatus::kSkipped);
  EXPECT_EQ(back.cases[1].timing_method, "");
  EXPECT_EQ(back.cases[2].status, CaseStatus::kFailed);
  EXPECT_EQ(back.cases[0].metrics[1].better, Better::kLower);
  EXPECT_EQ(back.cases[0].metrics[0].stats.median,
            summarize(back.cases[0].metrics[0].samples).median);
}

TEST(ResultJson, RoundTripThroughUnorderedJson) {
  const ojson first = to_json(sample_result());
  const nlohmann::json unordered = nlohmann::json::parse(first.dump());
  const Result back = result_from_json(unordered, "result.json");
  // Key order of context and params is lost in nlohmann::json, the content is not.
  EXPECT_EQ(nlohmann::json::parse(to_json(back).dump()), unordered);
}

TEST(ResultJson, WrongSchema) {
  ojson j = to_json(sample_result());
  j["schema"] = "pathbench.result/v0";
  std::string message;
  EXPECT_EQ(error_pointer(j, &message), "/schema");
  EXPECT_NE(message.find("expected \"pathbench.result/v1\", found \"pathbench.result/v0\""),
            std::string::npos)
      << message;
  j.erase("schema");
  EXPECT_EQ(error_pointer(j), "/schema");
  j["schema"] = 1;
  EXPECT_EQ(error_pointer(j), "/schema");
}

TEST(ResultJson, NotAnObject) { EXPECT_EQ(error_pointer(ojson::array()), ""); }

TEST(ResultJson, MissingCases) {
  ojson j = to_json(sample_result());
  j.erase("cases");
  std::string message;
  EXPECT_EQ(error_pointer(j, &message), "/cases");
  EXPECT_NE(message.find("missing required field"), std::string::npos) << message;
}

TEST(ResultJson, SampleThatIsAString) {
  ojson j = to_json(sample_result());
  j["cases"][0]["metrics"]["bandwidth"]["samples"][2] = "fast";
  std::string message;
  EXPECT_EQ(error_pointer(j, &message), "/cases/0/metrics/bandwidth/samples/2");
  EXPECT_NE(message.find("expected a number, found string"), std::string::npos) << message;
}

TEST(ResultJson, AnOkCaseWithoutSamplesIsBadInput) {
  ojson j = to_json(sample_result());
  ASSERT_EQ(j["cases"][0]["status"], "ok");
  j["cases"][0]["metrics"]["bandwidth"]["samples"] = ojson::array();
  j["cases"][0]["metrics"]["bandwidth"]["stats"]["n"] = 0u;
  std::string message;
  EXPECT_EQ(error_pointer(j, &message), "/cases/0/metrics/bandwidth/samples");
  EXPECT_NE(message.find("no samples"), std::string::npos) << message;
}

TEST(ResultJson, CompleteIsReadAndDefaultsFromTheEndTime) {
  Result r = sample_result();
  r.complete = false;
  r.incomplete_reason = "interrupted by SIGINT";
  Result back = result_from_json(to_json(r), "r.json");
  EXPECT_FALSE(back.complete);
  EXPECT_EQ(back.incomplete_reason, "interrupted by SIGINT");
  ojson old = to_json(sample_result());
  old.erase("complete");  // written before the field existed
  EXPECT_TRUE(result_from_json(old, "r.json").complete);
  old["context"]["end_time"] = "";
  EXPECT_FALSE(result_from_json(old, "r.json").complete);
  old["complete"] = "yes";
  EXPECT_EQ(error_pointer(old), "/complete");
}

TEST(ResultJson, StatsCountMismatch) {
  ojson j = to_json(sample_result());
  j["cases"][0]["metrics"]["time_per_copy"]["stats"]["n"] = 5;
  EXPECT_EQ(error_pointer(j), "/cases/0/metrics/time_per_copy/stats/n");
}

TEST(ResultJson, UnknownStatus) {
  ojson j = to_json(sample_result());
  j["cases"][1]["status"] = "maybe";
  std::string message;
  EXPECT_EQ(error_pointer(j, &message), "/cases/1/status");
  EXPECT_NE(message.find("\"maybe\""), std::string::npos) << message;
}

TEST(ResultJson, OtherBrokenFields) {
  const ojson good = to_json(sample_result());
  struct Variant {
    std::string pointer;
    ojson value;  // discarded = remove the field
  };
  const std::vector<Variant> variants = {
      {"/context", ojson::array()},
      {"/context/start_time", ojson(ojson::value_t::discarded)},
      {"/context/end_time", 5},
      {"/context/scenario_files", ojson::object()},
      {"/context/scenario_files/1/sha256", ojson(ojson::value_t::discarded)},
      {"/cases", ojson::object()},
      {"/cases/2", "case"},
      {"/cases/0/id", ojson(ojson::value_t::discarded)},
      {"/cases/0/params", ojson::array()},
      {"/cases/1/reason", nullptr},
      {"/cases/0/timing_method", "stopwatch"},
      {"/cases/0/operations_per_sample", -1},
      {"/cases/0/bytes_per_sample", 1.5},
      {"/cases/2/elapsed_seconds", "0.5"},
      {"/cases/0/metrics", ojson::array()},
      {"/cases/0/metrics/bandwidth/unit", ojson(ojson::value_t::discarded)},
      {"/cases/0/metrics/bandwidth/better", "more"},
      {"/cases/0/metrics/bandwidth/samples", 54.1},
      {"/cases/0/metrics/bandwidth/stats/median", nullptr},
      {"/cases/0/metrics/bandwidth/stats/cv", ojson(ojson::value_t::discarded)},
      {"/cases/0/checks", ojson::object()},
      {"/cases/0/checks/0/passed", "yes"},
      {"/cases/0/checks/1/name", ojson(ojson::value_t::discarded)},
  };
  for (const auto& v : variants) {
    ojson j = good;
    const ojson::json_pointer ptr(v.pointer);
    if (v.value.is_discarded()) {
      j.at(ptr.parent_pointer()).erase(ptr.back());
    } else {
      j.at(ptr) = v.value;
    }
    EXPECT_EQ(error_pointer(j), v.pointer) << "variant " << v.pointer;
  }
}

TEST(ResultJson, PointerEscapesMetricNames) {
  Result r = sample_result();
  r.cases[0].metrics[0].name = "bytes/s~raw";
  ojson j = to_json(r);
  j["cases"][0]["metrics"]["bytes/s~raw"]["samples"][0] = true;
  EXPECT_EQ(error_pointer(j), "/cases/0/metrics/bytes~1s~0raw/samples/0");
}

TEST(ResultJson, DuplicateCaseId) {
  ojson j = to_json(sample_result());
  j["cases"][2]["id"] = j["cases"][0]["id"];
  EXPECT_EQ(error_pointer(j), "/cases/2/id");
}

TEST(ResultJson, CheckWithoutValueLoadsAsNull) {
  ojson j = to_json(sample_result());
  j["cases"][0]["checks"][0].erase("value");
  const Result r = result_from_json(j, "result.json");
  EXPECT_TRUE(r.cases[0].checks[0].value.is_null());
}

TEST(ResultJson, DuplicateMetricNameIsAProgrammingError) {
  Result r = sample_result();
  r.cases[0].metrics.push_back(r.cases[0].metrics[0]);
  EXPECT_THROW(to_json(r), std::logic_error);
}

TEST(ResultFile, SaveAndLoad) {
  TempDir dir;
  const fs::path target = dir.path() / "nested" / "run.json";
  const Result r = sample_result();
  save_result(target, r);
  ASSERT_TRUE(fs::exists(target));
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(target.parent_path())) {
    entries.push_back(e.path().filename().string());
  }
  EXPECT_EQ(entries, std::vector<std::string>{"run.json"});  // no temp file left behind

  std::ifstream in(target);
  const ojson parsed = ojson::parse(in);
  EXPECT_EQ(parsed, to_json(r));
  EXPECT_EQ(to_json(load_result(target)), to_json(r));

  // Overwriting keeps exactly one file.
  Result r2 = r;
  r2.cases.pop_back();
  save_result(target, r2);
  EXPECT_EQ(load_result(target).cases.size(), 2u);
  EXPECT_EQ(std::distance(fs::directory_iterator(target.parent_path()), fs::directory_iterator()),
            1);
}

TEST(ResultFile, NotJson) {
  TempDir dir;
  const fs::path target = dir.path() / "broken.json";
  std::ofstream(target) << "{\"schema\": \"pathbench.result/v1\", oops";
  try {
    load_result(target);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "");
    EXPECT_EQ(e.file(), target.string());
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
  // nlohmann reports a number beyond double's range as out_of_range, not parse_error.
  std::ofstream(target) << R"({"schema": "pathbench.result/v1", "x": 1e999})";
  try {
    load_result(target);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "");
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
}

TEST(ResultFile, MissingFile) {
  TempDir dir;
  const fs::path target = dir.path() / "absent.json";
  try {
    load_result(target);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "");
    EXPECT_NE(std::string(e.what()).find("cannot read: No such file or directory"),
              std::string::npos)
        << e.what();
  }
  // A directory is unreadable as a file, not an empty document.
  try {
    load_result(dir.path());
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read"), std::string::npos) << e.what();
  }
}

TEST(ResultFile, ContentErrorNamesTheFile) {
  TempDir dir;
  const fs::path target = dir.path() / "old.json";
  std::ofstream(target) << R"({"schema": "pathbench.result/v0"})";
  try {
    load_result(target);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), target.string());
    EXPECT_EQ(e.pointer(), "/schema");
  }
}

}  // namespace
}  // namespace pathbench::test_result
