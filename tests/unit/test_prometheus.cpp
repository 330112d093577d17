#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "export/prometheus.hpp"
#include "result/result.hpp"

namespace pathbench {
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

std::string labels(const std::string& params) {
  return params + ",gpu=\"0\",node_type=\"" + kNodeTypeEscaped + "\"";
}

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
      labels("measure=\"memcpy\",cpu_node=\"0\",mem_node=\"0\",page=\"4k\",bytes=\"1048576\"");
  EXPECT_TRUE(has_line(
      text, "pathbench_host_memory_bandwidth_bytes_per_second{" + memcpy_labels + "} 1.25e+10"))
      << text;
  EXPECT_TRUE(
      has_line(text, "pathbench_host_memory_time_per_copy_seconds{" + memcpy_labels + "} 8.5e-05"))
      << text;
  // s/GiB -> seconds per byte: 0.5 / 2^30.
  EXPECT_TRUE(has_line(text, "pathbench_host_memory_cost_seconds_per_byte{" +
                                 labels("measure=\"mlock\",bytes=\"67108864\"") +
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
        "pathbench_copy_bandwidth_bytes_per_second",
        "pathbench_copy_time_per_copy_seconds", "pathbench_host_memory_bandwidth_bytes_per_second",
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
  const std::string tail = ",gpu=\"0\",node_type=\"" + std::string(kNodeTypeEscaped) + "\"} 1";
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

TEST(Prometheus, InfoCarriesContextAndTheGpuOnlyThere) {
  const std::string text = prometheus_exposition(sample_result());
  EXPECT_TRUE(has_line(
      text,
      std::string("pathbench_info{tool_version=\"0.1.0\",git_sha=\"abc123\",node_type=\"") +
          kNodeTypeEscaped +
          "\",topology_fingerprint=\"f00d\",hostname=\"node-a\",cpu_model=\"\",kernel=\"Linux "
          "6.8\",bios_vendor=\"\",bios_version=\"1.2\",bios_date=\"\",driver_version=\"580.159."
          "04\",cuda_driver_version=\"13000\",cuda_runtime_version=\"\",thp_enabled=\"\","
          "numa_balancing=\"\",gpu=\"0\",gpu_name=\"NVIDIA H200\",gpu_uuid=\"GPU-1234\","
          "gpu_pci_bus_id=\"00000000:01:00.0\",gpu_vbios=\"\",gpu_pcie_gen_max=\"5\","
          "gpu_pcie_width_max=\"16\"} 1"))
      << text;
  for (const auto& line : lines_of(text)) {
    if (line.starts_with("pathbench_info") || line.starts_with("#")) continue;
    EXPECT_EQ(line.find("H200"), std::string::npos) << line;
  }
}

TEST(Prometheus, GpuIndexFromTheOnlyGpuWhenTheDeviceWasNotRecorded) {
  Result r = sample_result();
  r.context.erase("device");
  EXPECT_NE(prometheus_exposition(r).find("gpu=\"0\",gpu_name=\"NVIDIA H200\""), std::string::npos);
  // Two GPUs and no record of which one ran: no guess.
  r.context["gpus"].push_back(ojson{{"index", 1}, {"name", "NVIDIA H200"}});
  const std::string text = prometheus_exposition(r);
  EXPECT_NE(text.find("gpu=\"\",gpu_name=\"\""), std::string::npos) << text;
  EXPECT_NE(text.find("pathbench_result_end_timestamp_seconds{gpu=\"\","), std::string::npos);
}

TEST(Prometheus, RunTimestamps) {
  const std::string text = prometheus_exposition(sample_result());
  const std::string run_labels = std::string("{gpu=\"0\",node_type=\"") + kNodeTypeEscaped + "\"}";
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
      "{param_gpu=\"param\",param_2x=\"1\",param___y=\"true\",a_b=\"v\",gpu=\"1\",node_type=\"n\"}";
  EXPECT_TRUE(has_line(text, "pathbench_my_family_fault_time_seconds" + l + " 0.002")) << text;
  EXPECT_TRUE(has_line(text, "pathbench_my_family_faults" + l + " 7")) << text;
  EXPECT_EQ(text.find("pathbench_my_family_faults" + l + " 9"), std::string::npos) << text;
  EXPECT_TRUE(has_line(text, "pathbench_my_family_migrations_faults_per_second" + l + " 3"))
      << text;
  EXPECT_TRUE(has_line(text, "pathbench_my_family_ratio" + l + " 0.5")) << text;
  EXPECT_EQ(text.find("pathbench_my_family_nothing"), std::string::npos) << text;
  EXPECT_NE(text.find("hostname=\"bad\xEF\xBF\xBDutf8\""), std::string::npos) << text;
}

}  // namespace
}  // namespace pathbench
