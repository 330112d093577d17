#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "export/prometheus.hpp"
#include "result/result.hpp"
#include "stats/operation_distribution.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_prometheus {
namespace {

using ojson = nlohmann::ordered_json;

// The node_type carries a quote, a backslash and a newline: it lands on every series, so every
// line exercises label escaping.
constexpr const char* kNodeType = "h200 \"pcie\" \\ gen5\nrack7";
constexpr const char* kNodeTypeEscaped = "h200 \\\"pcie\\\" \\\\ gen5\\nrack7";

MetricResult metric(std::string name, std::string unit, Better better, std::vector<double> x) {
  MetricResult m;
  m.name = std::move(name);
  m.unit = std::move(unit);
  m.better = better;
  m.samples = std::move(x);
  m.stats = summarize(m.samples);
  return m;
}

CaseResult make_case(std::string id, std::string family, ojson params, CaseStatus status,
                     std::vector<MetricResult> metrics) {
  CaseResult c;
  c.id = std::move(id);
  c.scenario = "s";
  c.family = std::move(family);
  c.params = std::move(params);
  c.status = status;
  c.metrics = std::move(metrics);
  if (status != CaseStatus::kOk) c.reason = "because";
  return c;
}

Result sample_result() {
  Result r;
  r.context["tool_version"] = "0.1.0";
  r.context["git_sha"] = "abc123";
  r.context["hostname"] = "node-a";
  r.context["node_type"] = kNodeType;
  r.context["topology_fingerprint"] = "f00d";
  r.context["kernel"] = "Linux 6.8";
  r.context["bios_version"] = "1.2";
  r.context["cuda_driver_version"] = 13000;
  r.context["driver_version"] = "580.159.04";
  r.context["cuda_unavailable_reason"] = "";
  r.context["gpus"] = ojson::array({ojson{{"index", 0},
                                          {"name", "NVIDIA H200"},
                                          {"uuid", "GPU-1234"},
                                          {"pci_bus_id", "00000000:01:00.0"},
                                          {"pcie_gen_max", 5},
                                          {"pcie_width_max", 16}}});
  r.context["device"] = 0;
  r.start_time = "2026-11-29T13:45:12Z";
  r.end_time = "2026-11-29T13:47:01Z";

  r.cases.push_back(make_case(
      "copy/measure=bandwidth/direction=h2d/host_memory=pinned/host_node=local/bytes=268435456",
      "copy",
      ojson{{"measure", "bandwidth"},
            {"direction", "h2d"},
            {"host_memory", "pinned"},
            {"host_node", "local"},
            {"bytes", 268435456}},
      CaseStatus::kOk,
      {metric("bandwidth", "GB/s", Better::kHigher, {55.0, 55.5, 56.0}),
       metric("time_per_copy", "s", Better::kLower, {0.004, 0.005, 0.006})}));
  // d2d has no host buffer: its series must carry the family's labels with empty values.
  r.cases.push_back(make_case(
      "copy/measure=bandwidth/direction=d2d/bytes=268435456", "copy",
      ojson{{"measure", "bandwidth"}, {"direction", "d2d"}, {"bytes", 268435456}}, CaseStatus::kOk,
      {metric("bandwidth", "GB/s", Better::kHigher, {2000.0}),
       metric("time_per_copy", "s", Better::kLower, {0.25})}));
  r.cases.push_back(make_case(
      "host_memory/measure=memcpy/cpu_node=0/mem_node=0/page=4k/bytes=1048576", "host_memory",
      ojson{{"measure", "memcpy"},
            {"cpu_node", 0},
            {"mem_node", 0},
            {"page", "4k"},
            {"bytes", 1048576}},
      CaseStatus::kOk,
      {metric("bandwidth", "GB/s", Better::kHigher, {12.0, 12.5, 13.0}),
       metric("time_per_copy", "s", Better::kLower, {8e-5, 8.5e-5, 9e-5})}));
  r.cases.push_back(make_case("host_memory/measure=mlock/bytes=67108864", "host_memory",
                              ojson{{"measure", "mlock"}, {"bytes", 67108864}}, CaseStatus::kOk,
                              {metric("seconds_per_gib", "s/GiB", Better::kLower, {0.5})}));
  r.cases.push_back(
      make_case("copy/measure=alloc_cost/host_memory=pinned/bytes=268435456", "copy",
                ojson{{"measure", "alloc_cost"}, {"host_memory", "pinned"}, {"bytes", 268435456}},
                CaseStatus::kSkipped, {}));
  // A failed case keeps the samples taken before it failed; they are not a measurement to export.
  r.cases.push_back(make_case(
      "copy/measure=latency/direction=d2h/host_memory=pageable-4k/host_node=local/bytes=4", "copy",
      ojson{{"measure", "latency"},
            {"direction", "d2h"},
            {"host_memory", "pageable-4k"},
            {"host_node", "local"},
            {"bytes", 4}},
      CaseStatus::kFailed, {metric("time_per_copy", "s", Better::kLower, {1e-5})}));
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool has_line(const std::string& text, const std::string& line) {
  for (const auto& l : lines_of(text)) {
    if (l == line) return true;
  }
  return false;
}

std::string sample_name(const std::string& line) {
  return line.substr(0, line.find_first_of("{ "));
}

// dcgm-exporter's labels of the sample result's GPU, then the run's.
const std::string kGpuLabels =
    "gpu=\"0\",UUID=\"GPU-1234\",pci_bus_id=\"00000000:01:00.0\",modelName=\"NVIDIA H200\"";
const std::string kHostLabels =
    std::string("Hostname=\"node-a\",node_type=\"") + kNodeTypeEscaped + "\"";
// The run's labels, on every series: Hostname, node_type, run_gpu (the run's device).
const std::string kRunLabels = kHostLabels + ",run_gpu=\"0\"";
std::string run_labels_of(const std::string& run_gpu) {
  return kHostLabels + ",run_gpu=\"" + run_gpu + "\"";
}

// A GPU series's labels: the case's params, its GPU's, the run's.
std::string labels(const std::string& params) {
  return params + "," + kGpuLabels + "," + kRunLabels;
}

// A host series's labels: no GPU's.
std::string host_labels(const std::string& params) { return params + "," + kRunLabels; }

TEST(Prometheus, CopyBandwidthInBytesPerSecond) {
  const std::string text = prometheus_exposition(sample_result());
  // 55.5 GB/s x 1e9, written in the shorter exponent form.
  EXPECT_TRUE(has_line(text, "pathbench_copy_bandwidth_bytes_per_second{" +
                                 labels("measure=\"bandwidth\",direction=\"h2d\",host_memory="
                                        "\"pinned\",host_node=\"local\",bytes=\"268435456\"") +
                                 "} 5.55e+10"))
      << text;
  EXPECT_TRUE(has_line(text, "pathbench_copy_time_per_copy_seconds{" +
                                 labels("measure=\"bandwidth\",direction=\"h2d\",host_memory="
                                        "\"pinned\",host_node=\"local\",bytes=\"268435456\"") +
                                 "} 0.005"))
      << text;
}

TEST(Prometheus, MissingParamsAreEmptyLabelsOfTheFamily) {
  const std::string text = prometheus_exposition(sample_result());
  EXPECT_TRUE(has_line(text, "pathbench_copy_bandwidth_bytes_per_second{" +
                                 labels("measure=\"bandwidth\",direction=\"d2d\",host_memory=\"\","
                                        "host_node=\"\",bytes=\"268435456\"") +
                                 "} 2e+12"))
      << text;
}

TEST(Prometheus, HostMemoryFamily) {
  const std::string text = prometheus_exposition(sample_result());
  const std::string memcpy_labels =
      host_labels("measure=\"memcpy\",cpu_node=\"0\",mem_node=\"0\",page=\"4k\",bytes=\"1048576\"");
  EXPECT_TRUE(has_line(
      text, "pathbench_host_memory_bandwidth_bytes_per_second{" + memcpy_labels + "} 1.25e+10"))
      << text;
  EXPECT_TRUE(
      has_line(text, "pathbench_host_memory_time_per_copy_seconds{" + memcpy_labels + "} 8.5e-05"))
      << text;
  // s/GiB -> seconds per byte: 0.5 / 2^30.
  EXPECT_TRUE(has_line(text, "pathbench_host_memory_cost_seconds_per_byte{" +
                                 host_labels("measure=\"mlock\",bytes=\"67108864\"") +
                                 "} 4.656612873077393e-10"))
      << text;
}

TEST(Prometheus, HelpAndTypeOncePerFamilyAndSamplesGrouped) {
  const std::string text = prometheus_exposition(sample_result());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::map<std::string, int> help, type;
  std::set<std::string> finished;  // families whose samples have ended
  std::string current;
  const auto lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.starts_with("# HELP ")) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      ++help[name];
      ASSERT_LT(i + 1, lines.size());
      EXPECT_EQ(lines[i + 1], "# TYPE " + name + " gauge");
      continue;
    }
    if (line.starts_with("# TYPE ")) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      ++type[name];
      if (!current.empty()) finished.insert(current);
      current = name;
      continue;
    }
    ASSERT_FALSE(line.starts_with("#")) << line;
    EXPECT_EQ(sample_name(line), current) << "sample outside its family: " << line;
    EXPECT_FALSE(finished.contains(sample_name(line))) << line;
  }
  for (const auto& [name, n] : type) {
    EXPECT_EQ(n, 1) << name;
    EXPECT_EQ(help[name], 1) << name;
  }
  for (const char* name :
       {"pathbench_info", "pathbench_case_status", "pathbench_result_start_timestamp_seconds",
        "pathbench_result_end_timestamp_seconds", "pathbench_result_complete",
        "pathbench_copy_bandwidth_bytes_per_second", "pathbench_copy_time_per_copy_seconds",
        "pathbench_host_memory_bandwidth_bytes_per_second",
        "pathbench_host_memory_time_per_copy_seconds",
        "pathbench_host_memory_cost_seconds_per_byte"}) {
    EXPECT_EQ(type[name], 1) << name;
  }
  EXPECT_EQ(type.size(), 10u) << text;
}

TEST(Prometheus, AnIncompleteRunSaysSo) {
  Result r = sample_result();
  EXPECT_NE(prometheus_exposition(r).find("\npathbench_result_complete{"), std::string::npos);
  const auto value_of_complete = [](const std::string& text) {
    const auto at = text.find("\npathbench_result_complete{");
    const auto end = text.find('\n', at + 1);
    return text.substr(text.rfind(' ', end) + 1, end - text.rfind(' ', end) - 1);
  };
  EXPECT_EQ(value_of_complete(prometheus_exposition(r)), "1");
  r.complete = false;
  EXPECT_EQ(value_of_complete(prometheus_exposition(r)), "0");
}

TEST(Prometheus, EverySampleLineIsWellFormedAndUnique) {
  const std::string text = prometheus_exposition(sample_result());
  // name{label="value",...} value — label values with only escaped quotes, backslashes, newlines.
  const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")"
      R"((,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})? [-+0-9.eEInfNa]+$)");
  std::set<std::string> series;
  for (const auto& line : lines_of(text)) {
    if (line.starts_with("#")) continue;
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
    EXPECT_TRUE(series.insert(line.substr(0, line.rfind(' '))).second) << "duplicate: " << line;
  }
}

TEST(Prometheus, SkippedAndFailedCasesHaveOnlyAStatus) {
  const std::string text = prometheus_exposition(sample_result());
  for (const auto& line : lines_of(text)) {
    if (line.starts_with("#") || line.starts_with("pathbench_case_status")) continue;
    EXPECT_EQ(line.find("alloc_cost"), std::string::npos) << line;
    EXPECT_EQ(line.find("latency"), std::string::npos) << line;
  }
  const std::string tail = "," + kGpuLabels + "," + kRunLabels + "} 1";
  EXPECT_TRUE(has_line(text,
                       "pathbench_case_status{id=\"copy/measure=alloc_cost/host_memory=pinned/"
                       "bytes=268435456\",family=\"copy\",status=\"skipped\"" +
                           tail))
      << text;
  EXPECT_TRUE(has_line(text,
                       "pathbench_case_status{id=\"copy/measure=latency/direction=d2h/host_memory="
                       "pageable-4k/host_node=local/bytes=4\",family=\"copy\",status=\"failed\"" +
                           tail))
      << text;
  EXPECT_TRUE(has_line(text,
                       "pathbench_case_status{id=\"host_memory/measure=mlock/bytes=67108864\","
                       "family=\"host_memory\",status=\"ok\"" +
                           tail))
      << text;
  int statuses = 0;
  for (const auto& line : lines_of(text)) statuses += line.starts_with("pathbench_case_status{");
  EXPECT_EQ(statuses, 6);
}

TEST(Prometheus, InfoCarriesContextWithTheGpuLabelsOfEverySeries) {
  const std::string text = prometheus_exposition(sample_result());
  EXPECT_TRUE(has_line(
      text,
      "pathbench_info{tool_version=\"0.1.0\",git_sha=\"abc123\",topology_fingerprint=\"f00d\","
      "cpu_model=\"\",kernel=\"Linux 6.8\",bios_vendor=\"\",bios_version=\"1.2\",bios_date=\"\","
      "driver_version=\"580.159.04\",cuda_driver_version=\"13000\",cuda_runtime_version=\"\","
      "thp_enabled=\"\",numa_balancing=\"\"," +
          kGpuLabels + ",gpu_vbios=\"\",gpu_pcie_gen_max=\"5\",gpu_pcie_width_max=\"16\"," +
          kRunLabels + "} 1"))
      << text;
  // The old label names are gone everywhere; the GPU's other fields stay on pathbench_info.
  for (const auto& line : lines_of(text)) {
    if (line.starts_with("#")) continue;
    for (const char* old :
         {"gpu_uuid=", "gpu_pci_bus_id=", "gpu_name=", "hostname=", "statistic="}) {
      EXPECT_EQ(line.find(old), std::string::npos) << line;
    }
    if (line.starts_with("pathbench_info")) continue;
    EXPECT_EQ(line.find("gpu_pcie_gen_max"), std::string::npos) << line;
  }
}

TEST(Prometheus, GpuIndexFromTheOnlyGpuWhenTheDeviceWasNotRecorded) {
  Result r = sample_result();
  r.context.erase("device");
  EXPECT_NE(prometheus_exposition(r).find(kGpuLabels + ",gpu_vbios="), std::string::npos);
  // Two GPUs and no record of which one ran: no guess.
  r.context["gpus"].push_back(ojson{{"index", 1}, {"name", "NVIDIA H200"}});
  const std::string text = prometheus_exposition(r);
  const std::string no_gpu = "gpu=\"\",UUID=\"\",pci_bus_id=\"\",modelName=\"\"";
  EXPECT_NE(text.find(no_gpu + ",gpu_vbios=\"\""), std::string::npos) << text;
  EXPECT_NE(text.find("pathbench_result_end_timestamp_seconds{" + no_gpu + ",Hostname="),
            std::string::npos);
}

TEST(Prometheus, RunTimestamps) {
  const std::string text = prometheus_exposition(sample_result());
  const std::string run_labels = "{" + kGpuLabels + "," + kRunLabels + "}";
  EXPECT_TRUE(
      has_line(text, "pathbench_result_start_timestamp_seconds" + run_labels + " 1795959912"))
      << text;
  EXPECT_TRUE(has_line(text, "pathbench_result_end_timestamp_seconds" + run_labels + " 1795960021"))
      << text;

  Result r = sample_result();
  r.start_time = "not a time";
  r.end_time = "2026-11-29T13:47:01.5Z";
  const std::string t = prometheus_exposition(r);
  EXPECT_EQ(t.find("pathbench_result_start_timestamp_seconds"), std::string::npos);
  EXPECT_TRUE(has_line(t, "pathbench_result_end_timestamp_seconds" + run_labels + " 1795960021.5"));
}

TEST(Prometheus, OddNamesUnitsAndValues) {
  Result r;
  r.context["device"] = 1;
  r.context["node_type"] = "n";
  r.context["hostname"] = std::string("bad\xff") + "utf8";
  r.cases.push_back(make_case(
      "x/a", "my-family", ojson{{"gpu", "param"}, {"2x", 1}, {"__y", true}, {"a.b", "v"}},
      CaseStatus::kOk,
      {metric("fault_time", "ms", Better::kLower, {2.0}),
       metric("faults", "", Better::kLower, {7.0}),
       metric("migrations", "faults/s", Better::kHigher, {3.0}),
       metric("ratio", "%", Better::kHigher, {50.0}), metric("nothing", "s", Better::kLower, {})}));
  // Same labels as the first case (another id): one series only, the first one.
  r.cases.push_back(make_case("x/b", "my-family",
                              ojson{{"gpu", "param"}, {"2x", 1}, {"__y", true}, {"a.b", "v"}},
                              CaseStatus::kOk, {metric("faults", "", Better::kLower, {9.0})}));
  const std::string text = prometheus_exposition(r);
  const std::string l =
      "{param_gpu=\"param\",param_2x=\"1\",param___y=\"true\",a_b=\"v\",gpu=\"1\",UUID=\"\","
      "pci_bus_id=\"\",modelName=\"\",Hostname=\"bad\xEF\xBF\xBDutf8\",node_type=\"n\",run_gpu="
      "\"1\"}";
  EXPECT_TRUE(has_line(text, "pathbench_my_family_fault_time_seconds" + l + " 0.002")) << text;
  EXPECT_TRUE(has_line(text, "pathbench_my_family_faults" + l + " 7")) << text;
  EXPECT_EQ(text.find("pathbench_my_family_faults" + l + " 9"), std::string::npos) << text;
  EXPECT_TRUE(has_line(text, "pathbench_my_family_migrations_faults_per_second" + l + " 3"))
      << text;
  EXPECT_TRUE(has_line(text, "pathbench_my_family_ratio" + l + " 0.5")) << text;
  EXPECT_EQ(text.find("pathbench_my_family_nothing"), std::string::npos) << text;
  EXPECT_NE(text.find("Hostname=\"bad\xEF\xBF\xBDutf8\""), std::string::npos) << text;
}

// --- per-operation metrics: histograms and percentile gauges; the serving pool's names ---------

// A per-operation metric as the core records it (the samples are the repetitions' medians).
MetricResult per_operation(std::string name, const std::vector<std::vector<double>>& reps) {
  DistributionRecorder recorder;
  std::vector<double> medians;
  for (const auto& r : reps) medians.push_back(recorder.add_repetition(r));
  MetricResult m = metric(std::move(name), "s", Better::kLower, std::move(medians));
  m.distribution = recorder.finish();
  return m;
}

const ojson kServingParams = {{"strategy", "pinned_pool"}, {"request_bytes", 65536}};

CaseResult serving_case(ojson params = kServingParams) {
  return make_case("serving/strategy=pinned_pool/request_bytes=65536", "serving", std::move(params),
                   CaseStatus::kOk,
                   {per_operation("h2d_latency", {{3e-6, 4e-6, 30e-6}, {3.5e-6, 4.5e-6, 300e-6}}),
                    per_operation("request_latency", {{6e-6, 7e-6, 8e-6}, {6.5e-6, 7.5e-6, 1.5}}),
                    metric("throughput", "requests/s", Better::kHigher, {90000, 92500, 95000}),
                    metric("pool_high_water", "B", Better::kLower, {524288, 524288, 524288}),
                    metric("pool_waits", "acquisitions", Better::kLower, {3, 4, 5}),
                    metric("pool_wait_time", "s", Better::kLower, {2e-5, 3e-5, 4e-5}),
                    metric("pageable_fallbacks", "copies", Better::kLower, {0, 1, 2})});
}

Result serving_result() {
  Result r = sample_result();
  r.cases = {serving_case()};
  return r;
}

const std::string kServingLabels = labels("strategy=\"pinned_pool\",request_bytes=\"65536\"");

std::string with_label(const std::string& extra) { return kServingLabels + "," + extra; }

TEST(PrometheusDistribution, AHistogramOfEveryOperationAtFixedBounds) {
  const std::string text = prometheus_exposition(serving_result());
  const std::string family = "pathbench_serving_h2d_latency_seconds";
  EXPECT_TRUE(has_line(text, "# TYPE " + family + " histogram")) << text;
  // 3, 3.5, 4, 4.5 us; 30 us; 300 us. A bound counts what lies at or below it.
  const std::vector<std::pair<std::string, int>> expected = {
      {"1e-06", 0}, {"2e-06", 0}, {"5e-06", 4}, {"1e-05", 4}, {"2e-05", 4}, {"5e-05", 5},
      {"1e-04", 5}, {"2e-04", 5}, {"5e-04", 6}, {"0.001", 6}, {"0.002", 6}, {"0.005", 6},
      {"0.01", 6},  {"0.02", 6},  {"0.05", 6},  {"0.1", 6},   {"0.2", 6},   {"0.5", 6},
      {"1", 6},     {"2", 6},     {"5", 6},     {"10", 6},    {"+Inf", 6}};
  std::vector<std::string> buckets;
  for (const auto& line : lines_of(text)) {
    if (line.starts_with(family + "_bucket{")) buckets.push_back(line);
  }
  ASSERT_EQ(buckets.size(), expected.size()) << text;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(buckets[i], family + "_bucket{" + with_label("le=\"" + expected[i].first + "\"") +
                              "} " + std::to_string(expected[i].second));
  }
  EXPECT_TRUE(has_line(text, family + "_count{" + kServingLabels + "} 6")) << text;
  const std::string sum_head = family + "_sum{" + kServingLabels + "} ";
  const auto sum_at = text.find("\n" + sum_head);
  ASSERT_NE(sum_at, std::string::npos) << text;
  EXPECT_EQ(std::stod(text.substr(sum_at + 1 + sum_head.size())),
            serving_case().metrics[0].distribution->histogram.sum());
  // The request latency's 1.5 s operation lands between the 1 s and 2 s bounds.
  const std::string request = "pathbench_serving_request_latency_seconds_bucket{";
  EXPECT_TRUE(has_line(text, request + with_label("le=\"1\"") + "} 5")) << text;
  EXPECT_TRUE(has_line(text, request + with_label("le=\"2\"") + "} 6")) << text;
}

TEST(PrometheusDistribution, ExactPercentilesAsGaugesAndNoMedianGauge) {
  const CaseResult c = serving_case();
  const std::string text = prometheus_exposition(serving_result());
  const std::string family = "pathbench_serving_h2d_latency_percentile_seconds";
  EXPECT_TRUE(has_line(text, "# TYPE " + family + " gauge")) << text;
  for (const auto& s : kDistributionStatistics) {
    const double v = c.metrics[0].distribution->statistic(s.name);
    bool found = false;
    const std::string head =
        family + "{" + with_label("percentile=\"" + std::string(s.name) + "\"") + "} ";
    for (const auto& l : lines_of(text)) {
      if (!l.starts_with(head)) continue;
      found = true;
      EXPECT_EQ(std::stod(l.substr(head.size())), v) << l;
    }
    EXPECT_TRUE(found) << head << "\n" << text;
  }
  EXPECT_TRUE(has_line(text, family + "{" + with_label("percentile=\"max\"") + "} 3e-04")) << text;
  // The samples' median has no gauge: that name is the histogram's.
  for (const auto& l : lines_of(text)) {
    EXPECT_FALSE(l.starts_with("pathbench_serving_h2d_latency_seconds{")) << l;
    EXPECT_FALSE(l.starts_with("pathbench_serving_h2d_latency_seconds ")) << l;
  }
}

TEST(PrometheusDistribution, ServingPoolMetricsHaveServingStackNames) {
  const std::string text = prometheus_exposition(serving_result());
  EXPECT_TRUE(has_line(
      text, "pathbench_serving_pinned_pool_high_water_bytes{" + kServingLabels + "} 524288"))
      << text;
  EXPECT_TRUE(has_line(text, "pathbench_serving_pinned_pool_waits{" + kServingLabels + "} 4"))
      << text;
  EXPECT_TRUE(
      has_line(text, "pathbench_serving_pinned_pool_wait_seconds{" + kServingLabels + "} 3e-05"))
      << text;
  EXPECT_TRUE(has_line(text, "pathbench_serving_pageable_fallbacks{" + kServingLabels + "} 1"))
      << text;
  EXPECT_TRUE(has_line(
      text, "pathbench_serving_throughput_requests_per_second{" + kServingLabels + "} 92500"))
      << text;
  for (const char* name :
       {"pathbench_serving_pinned_pool_high_water_bytes", "pathbench_serving_pinned_pool_waits",
        "pathbench_serving_pinned_pool_wait_seconds", "pathbench_serving_pageable_fallbacks"}) {
    EXPECT_TRUE(has_line(text, std::string("# TYPE ") + name + " gauge")) << name;
  }
  EXPECT_EQ(text.find("pool_waits_acquisitions"), std::string::npos);
  EXPECT_EQ(text.find("pathbench_serving_pool_"), std::string::npos);
  // Another family's metric of that name keeps the generic rule.
  Result r = sample_result();
  r.cases = {make_case("x/a", "other", ojson::object(), CaseStatus::kOk,
                       {metric("pool_waits", "acquisitions", Better::kLower, {2})})};
  EXPECT_NE(prometheus_exposition(r).find("pathbench_other_pool_waits_acquisitions{"),
            std::string::npos);
}

TEST(PrometheusDistribution, FamiliesAreGroupedAndEverySeriesIsUnique) {
  Result r = serving_result();
  // A second case with the same labels (another id): its series are left out, the first wins.
  CaseResult twin = serving_case();
  twin.id += "/twin";
  twin.metrics[0] = per_operation("h2d_latency", {{1.0, 1.0, 1.0}});
  r.cases.push_back(twin);
  // A param named like a label the exporter adds is renamed.
  r.cases.push_back(serving_case(ojson{{"strategy", "pageable"},
                                       {"le", 1},
                                       {"statistic", "x"},
                                       {"percentile", "y"},
                                       {"UUID", "z"},
                                       {"Hostname", "w"}}));
  const std::string text = prometheus_exposition(r);
  std::map<std::string, std::string> type_of;
  std::string current;
  std::set<std::string> finished, series;
  for (const auto& line : lines_of(text)) {
    if (line.starts_with("# HELP ")) continue;
    if (line.starts_with("# TYPE ")) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_FALSE(type_of.contains(name)) << "second TYPE line: " << line;
      type_of[name] = line.substr(line.rfind(' ') + 1);
      if (!current.empty()) finished.insert(current);
      current = name;
      continue;
    }
    std::string name = sample_name(line);
    if (type_of[current] == "histogram") {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        if (name == current + suffix) name = current;
      }
    }
    EXPECT_EQ(name, current) << "sample outside its family: " << line;
    EXPECT_FALSE(finished.contains(name)) << line;
    EXPECT_TRUE(series.insert(line.substr(0, line.rfind(' '))).second) << "duplicate: " << line;
  }
  EXPECT_EQ(type_of["pathbench_serving_h2d_latency_seconds"], "histogram");
  EXPECT_EQ(type_of["pathbench_serving_request_latency_seconds"], "histogram");
  EXPECT_EQ(type_of["pathbench_serving_h2d_latency_percentile_seconds"], "gauge");
  EXPECT_EQ(text.find("le=\"10\"} 3\n"), std::string::npos) << "the twin's histogram is left out";
  EXPECT_NE(text.find("param_le=\"1\""), std::string::npos) << text;
  EXPECT_NE(text.find("param_statistic=\"x\""), std::string::npos) << text;
  EXPECT_NE(text.find("param_percentile=\"y\""), std::string::npos) << text;
  EXPECT_NE(text.find("param_UUID=\"z\""), std::string::npos) << text;
  EXPECT_NE(text.find("param_Hostname=\"w\""), std::string::npos) << text;
  EXPECT_EQ(text.find("le=\"1\",le="), std::string::npos) << text;
}

TEST(PrometheusDistribution, TheServingFixtureExportsItsHistograms) {
  const Result r = load_result(std::string(PATHBENCH_FIXTURES) + "/serving/h200-serving.json");
  ASSERT_GT(r.cases.size(), 1u);
  const std::string text = prometheus_exposition(r);
  for (const std::string name : {"h2d_latency", "request_latency"}) {
    // One _count series per case holding the metric, each the case's number of operations.
    std::size_t cases = 0;
    std::uint64_t operations = 0;
    for (const auto& c : r.cases) {
      for (const auto& m : c.metrics) {
        if (m.name == name && m.distribution) {
          ++cases;
          operations += m.distribution->operations;
        }
      }
    }
    ASSERT_GT(cases, 1u) << name;
    const std::string count = "pathbench_serving_" + name + "_seconds_count{";
    std::size_t series = 0;
    std::uint64_t counted = 0;
    for (const auto& line : lines_of(text)) {
      if (!line.starts_with(count)) continue;
      ++series;
      counted += std::stoull(line.substr(line.rfind(' ') + 1));
    }
    EXPECT_EQ(series, cases) << name;
    EXPECT_EQ(counted, operations) << name;
  }
  EXPECT_NE(text.find("\npathbench_serving_pinned_pool_high_water_bytes{"), std::string::npos);
}

// --- dcgm-exporter's labels; one metric name for every GPU ---------------------------------------

// Two GPUs; the run's device is 1.
Result two_gpu_result() {
  Result r = sample_result();
  r.context["gpus"] = ojson::array({ojson{{"index", 0},
                                          {"name", "NVIDIA H200"},
                                          {"uuid", "GPU-aaaa"},
                                          {"pci_bus_id", "0000:3b:00.0"}},
                                    ojson{{"index", 1},
                                          {"name", "NVIDIA H200 NVL"},
                                          {"uuid", "GPU-bbbb"},
                                          {"pci_bus_id", "0000:5e:00.0"}}});
  r.context["device"] = 1;
  r.cases.clear();
  return r;
}

const std::string kRun1 = run_labels_of("1");  // the run's device is 1
const std::string kGpu0 =
    "gpu=\"0\",UUID=\"GPU-aaaa\",pci_bus_id=\"00000000:3B:00.0\",modelName=\"NVIDIA H200\"";
const std::string kGpu1 =
    "gpu=\"1\",UUID=\"GPU-bbbb\",pci_bus_id=\"00000000:5E:00.0\",modelName=\"NVIDIA H200 NVL\"";

TEST(PrometheusGpuLabels, PciBusIdAsNvmlAndDcgmExporterSpellIt) {
  Result r = two_gpu_result();
  r.cases.push_back(make_case("copy/a", "copy", ojson{{"direction", "h2d"}}, CaseStatus::kOk,
                              {metric("bandwidth", "GB/s", Better::kHigher, {50.0})}));
  std::string text = prometheus_exposition(r);
  EXPECT_TRUE(has_line(text, "pathbench_copy_bandwidth_bytes_per_second{direction=\"h2d\"," +
                                 kGpu1 + "," + kRun1 + "} 5e+10"))
      << text;
  // Already 8 digits, or not a bus id at all: kept (only the hex is upper-cased).
  r.context["gpus"][1]["pci_bus_id"] = "00000000:5e:00.0";
  EXPECT_NE(prometheus_exposition(r).find("pci_bus_id=\"00000000:5E:00.0\""), std::string::npos);
  r.context["gpus"][1]["pci_bus_id"] = "unknown";
  EXPECT_NE(prometheus_exposition(r).find("pci_bus_id=\"unknown\""), std::string::npos);
  r.context["gpus"][1]["pci_bus_id"] = "0000:zz:00.0";
  EXPECT_NE(prometheus_exposition(r).find("pci_bus_id=\"0000:zz:00.0\""), std::string::npos);
}

TEST(PrometheusGpuLabels, AllGpusCaseHasOneNamePerMetricAndTheGpuAsALabel) {
  Result r = two_gpu_result();
  const ojson params = {{"measure", "bandwidth"}, {"direction", "h2d"}, {"gpus", "all"}};
  r.cases.push_back(make_case("copy/gpus=all", "copy", params, CaseStatus::kOk,
                              {metric("bandwidth", "GB/s", Better::kHigher, {100.0}),
                               metric("bandwidth_gpu0", "GB/s", Better::kHigher, {49.0}),
                               metric("bandwidth_gpu1", "GB/s", Better::kHigher, {51.0}),
                               metric("time_per_copy", "s", Better::kLower, {0.01})}));
  const std::string text = prometheus_exposition(r);
  const std::string p = "measure=\"bandwidth\",direction=\"h2d\",gpus=\"all\",";
  EXPECT_TRUE(has_line(
      text, "pathbench_copy_bandwidth_bytes_per_second{" + p + kGpu0 + "," + kRun1 + "} 4.9e+10"))
      << text;
  EXPECT_TRUE(has_line(
      text, "pathbench_copy_bandwidth_bytes_per_second{" + p + kGpu1 + "," + kRun1 + "} 5.1e+10"))
      << text;
  // Their sum is another quantity: another name, so that sum() over the GPUs' series is right,
  // and no GPU's labels; nor has the slowest GPU's time per copy.
  EXPECT_TRUE(has_line(
      text, "pathbench_copy_aggregate_bandwidth_bytes_per_second{" + p + kRun1 + "} 1e+11"))
      << text;
  EXPECT_TRUE(has_line(text, "pathbench_copy_time_per_copy_seconds{" + p + kRun1 + "} 0.01"))
      << text;
  const std::regex gpu_in_name("^[a-zA-Z_:]*_gpu[0-9]");
  for (const auto& line : lines_of(text)) {
    const std::string name = line.starts_with("# ") ? line.substr(7) : line;
    EXPECT_FALSE(std::regex_search(name, gpu_in_name)) << line;
  }
}

TEST(PrometheusGpuLabels, PerGpuNamesInsideAMetricNameAndUnlistedGpus) {
  Result r = two_gpu_result();
  r.cases.push_back(make_case("x/a", "other", ojson{{"gpus", "all"}}, CaseStatus::kOk,
                              {metric("time_gpu7_first", "s", Better::kLower, {2.0}),
                               metric("gpu3_x", "s", Better::kLower, {1.0}),
                               metric("a_gpux", "s", Better::kLower, {3.0})}));
  const std::string text = prometheus_exposition(r);
  // GPU 7 is not in the context: its index stays, its other labels are empty.
  EXPECT_TRUE(has_line(text,
                       "pathbench_other_time_first_seconds{gpus=\"all\",gpu=\"7\",UUID=\"\","
                       "pci_bus_id=\"\",modelName=\"\"," +
                           kRun1 + "} 2"))
      << text;
  // Not a per-GPU name: "gpu3" with nothing before it, "_gpux" without digits.
  EXPECT_TRUE(has_line(text, "pathbench_other_gpu3_x_seconds{gpus=\"all\"," + kRun1 + "} 1"))
      << text;
  EXPECT_NE(text.find("pathbench_other_a_gpux_seconds{"), std::string::npos) << text;
}

TEST(PrometheusGpuLabels, DeviceParamAndPeerPairNameTheirGpu) {
  Result r = two_gpu_result();
  r.cases.push_back(make_case("copy/device=0", "copy", ojson{{"device", 0}}, CaseStatus::kOk,
                              {metric("bandwidth", "GB/s", Better::kHigher, {40.0})}));
  r.cases.push_back(make_case("peer/pair=1-0", "peer", ojson{{"pair", "1-0"}}, CaseStatus::kOk,
                              {metric("bandwidth", "GB/s", Better::kHigher, {300.0})}));
  r.cases.push_back(make_case("peer/pair=x", "peer", ojson{{"pair", "x-0"}}, CaseStatus::kOk,
                              {metric("bandwidth", "GB/s", Better::kHigher, {1.0})}));
  const std::string text = prometheus_exposition(r);
  // dcgm-exporter's `device` is "nvidia<N>": the param is renamed, its GPU is the series's gpu.
  EXPECT_TRUE(has_line(text, "pathbench_copy_bandwidth_bytes_per_second{param_device=\"0\"," +
                                 kGpu0 + "," + kRun1 + "} 4e+10"))
      << text;
  EXPECT_TRUE(has_line(text, "pathbench_peer_bandwidth_bytes_per_second{pair=\"1-0\"," + kGpu1 +
                                 "," + kRun1 + "} 3e+11"))
      << text;
  // A pair that names no source index: the run's device.
  EXPECT_TRUE(has_line(text, "pathbench_peer_bandwidth_bytes_per_second{pair=\"x-0\"," + kGpu1 +
                                 "," + kRun1 + "} 1e+09"))
      << text;
}

TEST(PrometheusGpuLabels, HostSeriesHaveHostnameAndNoGpuLabels) {
  Result r = two_gpu_result();
  r.cases.push_back(make_case("host_memory/a", "host_memory", ojson{{"measure", "memcpy"}},
                              CaseStatus::kOk,
                              {metric("bandwidth", "GB/s", Better::kHigher, {10.0})}));
  const std::string text = prometheus_exposition(r);
  EXPECT_TRUE(has_line(
      text,
      "pathbench_host_memory_bandwidth_bytes_per_second{measure=\"memcpy\"," + kRun1 + "} 1e+10"))
      << text;
  // The run's own series belong to its device; so does the case's status.
  EXPECT_TRUE(has_line(text,
                       "pathbench_case_status{id=\"host_memory/a\",family=\"host_memory\","
                       "status=\"ok\"," +
                           kGpu1 + "," + kRun1 + "} 1"))
      << text;
  EXPECT_TRUE(has_line(text, "pathbench_result_complete{" + kGpu1 + "," + kRun1 + "} 1")) << text;
  // A machine without a GPU: Hostname only (empty labels are absent to Prometheus).
  r.context.erase("device");
  r.context["gpus"] = ojson::array();
  EXPECT_TRUE(has_line(prometheus_exposition(r),
                       "pathbench_host_memory_bandwidth_bytes_per_second{measure=\"memcpy\"," +
                           run_labels_of("") + "} 1e+10"));
}

}  // namespace
}  // namespace pathbench::test_prometheus
