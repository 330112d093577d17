// The regression gate (compare/compare.hpp): verdict rules, exit codes, floors, identity checks,
// the JSON and JUnit outputs. Results are built in code on the context of a real H200 run
// (tests/fixtures/results/h200-default.json), so the identity and floor checks see the fields a
// real inventory writes.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numbers>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/compare.hpp"
#include "export/compare_report.hpp"
#include "inventory/fingerprint.hpp"
#include "inventory/inventory.hpp"
#include "result/result.hpp"
#include "stats/operation_distribution.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_compare {
namespace {

using ojson = nlohmann::ordered_json;

constexpr const char* kPinnedH2d256 =
    "copy/measure=bandwidth/direction=h2d/host_memory=pinned/host_node=local/bytes=268435456";
constexpr const char* kPinnedH2d4M =
    "copy/measure=bandwidth/direction=h2d/host_memory=pinned/host_node=local/bytes=4194304";
constexpr const char* kLatency =
    "copy/measure=latency/direction=h2d/host_memory=pinned/host_node=local/bytes=4";
constexpr const char* kMemcpy =
    "host_memory/measure=memcpy/cpu_node=0/mem_node=0/page=4k/bytes=67108864";
const double kGen5x16 = 32.0 * 16 * 128.0 / 130.0 / 8.0;  // 63.015 GB/s raw per direction

// The context of the real H200 run: node type, fingerprint and inventory fields as written.
const ojson& h200_context() {
  static const ojson context =
      load_result(std::string(PATHBENCH_FIXTURES) + "/results/h200-default.json").context;
  return context;
}

// Recomputes node_type-independent fingerprint from the context's inventory fields, as the
// inventory would have on a node with that topology.
void refingerprint(ojson& context) {
  context["topology_fingerprint"] =
      topology_fingerprint(inventory_from_json(nlohmann::json(context)));
}

// `n` samples around `median` with +-`spread` relative noise, in a shuffled order; the median
// of the samples is exactly `median` for odd n (and for even n, by symmetry).
std::vector<double> around(double median, std::size_t n = 9, double spread = 0.002) {
  static const double kOffsets9[] = {0.25, -1, 0.5, 0, -0.25, 1, -0.75, 0.75, -0.5};
  static const double kOffsets4[] = {0.5, -1, 1, -0.5};
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) {
    const double o = n == 4 ? kOffsets4[i] : n == 9 ? kOffsets9[i] : (i % 2 ? -1.0 : 1.0) * 0.1 * i;
    out.push_back(median * (1 + spread * o));
  }
  return out;
}

std::vector<double> scaled(std::vector<double> v, double factor) {
  for (auto& x : v) x *= factor;
  return v;
}

MetricResult metric(const std::string& name, const std::string& unit, Better better,
                    std::vector<double> samples) {
  MetricResult m;
  m.name = name;
  m.unit = unit;
  m.better = better;
  m.samples = std::move(samples);
  m.stats = summarize(m.samples);
  return m;
}

MetricResult bandwidth(std::vector<double> samples) {
  return metric("bandwidth", "GB/s", Better::kHigher, std::move(samples));
}

MetricResult time_per_copy(std::vector<double> samples) {
  return metric("time_per_copy", "s", Better::kLower, std::move(samples));
}

// params from the id's "axis=value" segments (integers where the value is one), as expansion
// writes them.
CaseResult make_case(const std::string& id, std::vector<MetricResult> metrics,
                     CaseStatus status = CaseStatus::kOk, const std::string& reason = "") {
  CaseResult c;
  c.id = id;
  c.family = id.substr(0, id.find('/'));
  c.scenario = c.family + "-scenario";
  std::istringstream in(id.substr(id.find('/') + 1));
  for (std::string part; std::getline(in, part, '/');) {
    const auto eq = part.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = part.substr(0, eq), value = part.substr(eq + 1);
    const bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char ch) {
      return std::isdigit(static_cast<unsigned char>(ch)) != 0;
    });
    if (digits) {
      c.params[key] = std::stoull(value);
    } else {
      c.params[key] = value;
    }
  }
  c.status = status;
  c.reason = reason;
  c.timing_method = status == CaseStatus::kOk ? "cuda_events_latched" : "";
  c.metrics = std::move(metrics);
  return c;
}

CaseResult copy_case(const std::string& id, double median_gb_per_s, std::size_t n = 9) {
  const auto bw = around(median_gb_per_s, n);
  std::vector<double> t;
  for (double x : bw) t.push_back(268435456.0 / (x * 1e9));
  return make_case(id, {bandwidth(bw), time_per_copy(t)});
}

Result make_result(std::vector<CaseResult> cases, ojson context = h200_context()) {
  Result r;
  r.context = std::move(context);
  r.scenario_files = {{"scenarios/default.json", std::string(64, 'a')}};
  r.start_time = "2026-11-29T13:46:11Z";
  r.end_time = "2026-11-29T13:46:24Z";
  r.cases = std::move(cases);
  return r;
}

Comparison run_compare(const Result& baseline, const Result& result,
                       CompareOptions options = CompareOptions{}) {
  return compare_results(baseline, "baseline.json", result, "result.json", options);
}

// Five runs of one case whose medians wander by +-0.1 %: a baseline whose between-run spread is
// known and small, so the scenario's threshold is what decides.
Comparison run_compare_5(const CaseResult& base, const Result& result,
                         CompareOptions options = CompareOptions{}) {
  std::vector<Result> runs;
  std::vector<std::string> files;
  for (double f : {1.0, 1.001, 0.999, 1.0005, 0.9995}) {
    CaseResult c = base;
    for (auto& m : c.metrics) {
      for (auto& x : m.samples) x *= f;
      m.stats = summarize(m.samples);
    }
    runs.push_back(make_result({c}));
    files.push_back("run" + std::to_string(files.size() + 1) + ".json");
  }
  return compare_results(build_baseline(runs, files, {}), "baseline.json", result, "result.json",
                         options);
}

const CaseComparison* find_case(const Comparison& c, const std::string& id) {
  for (const auto& k : c.cases) {
    if (k.id == id) return &k;
  }
  return nullptr;
}

const MetricComparison* find_metric(const CaseComparison& c, const std::string& name) {
  for (const auto& m : c.metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

const FloorCheck* find_floor(const Comparison& c, const std::string& id) {
  for (const auto& f : c.floors) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// --- A small XML well-formedness checker (no XML library is linked into the unit tests). -------

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;  // still escaped
};

struct XmlDocument {
  std::vector<XmlElement> elements;  // every start or empty-element tag, in document order
  std::string error;                 // empty when well-formed
  std::size_t count(const std::string& name) const {
    return std::count_if(elements.begin(), elements.end(),
                         [&](const XmlElement& e) { return e.name == name; });
  }
  const XmlElement* first(const std::string& name) const {
    for (const auto& e : elements) {
      if (e.name == name) return &e;
    }
    return nullptr;
  }
};

// Character data and attribute values: no raw '<', every '&' starts a predefined entity.
bool valid_text(const std::string& text, std::string& error) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<') {
      error = "raw '<' in text: " + text;
      return false;
    }
    if (text[i] == '&') {
      static const char* kEntities[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
      const bool known =
          std::any_of(std::begin(kEntities), std::end(kEntities),
                      [&](const char* e) { return text.compare(i, std::strlen(e), e) == 0; });
      if (!known) {
        error = "bare '&' in text: " + text;
        return false;
      }
    }
  }
  return true;
}

bool name_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '-' || ch == '_' || ch == ':' ||
         ch == '.';
}

XmlDocument parse_xml(const std::string& xml) {
  XmlDocument doc;
  std::vector<std::string> open;
  std::size_t i = 0;
  bool root_closed = false;
  auto fail = [&](const std::string& why) {
    doc.error = why + " (at byte " + std::to_string(i) + ")";
    return doc;
  };
  if (xml.rfind("<?xml ", 0) != 0) return fail("no XML declaration");
  i = xml.find("?>");
  if (i == std::string::npos) return fail("unterminated declaration");
  i += 2;
  while (i < xml.size()) {
    const std::size_t lt = xml.find('<', i);
    const std::string text = xml.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
    if (!valid_text(text, doc.error)) return doc;
    if (open.empty() && text.find_first_not_of(" \n\r\t") != std::string::npos) {
      return fail("text outside the root element");
    }
    if (lt == std::string::npos) break;
    i = lt + 1;
    if (i < xml.size() && xml[i] == '/') {
      ++i;
      std::size_t start = i;
      while (i < xml.size() && name_char(xml[i])) ++i;
      const std::string name = xml.substr(start, i - start);
      while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i >= xml.size() || xml[i] != '>') return fail("malformed end tag </" + name);
      ++i;
      if (open.empty() || open.back() != name) return fail("unbalanced end tag </" + name + ">");
      open.pop_back();
      if (open.empty()) root_closed = true;
      continue;
    }
    if (root_closed) return fail("second root element");
    XmlElement e;
    std::size_t start = i;
    while (i < xml.size() && name_char(xml[i])) ++i;
    e.name = xml.substr(start, i - start);
    if (e.name.empty()) return fail("empty tag name");
    bool empty_element = false;
    for (;;) {
      while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i >= xml.size()) return fail("unterminated tag <" + e.name);
      if (xml[i] == '>') {
        ++i;
        break;
      }
      if (xml.compare(i, 2, "/>") == 0) {
        i += 2;
        empty_element = true;
        break;
      }
      start = i;
      while (i < xml.size() && name_char(xml[i])) ++i;
      const std::string attr = xml.substr(start, i - start);
      if (attr.empty() || i + 1 >= xml.size() || xml[i] != '=' || xml[i + 1] != '"') {
        return fail("malformed attribute in <" + e.name);
      }
      i += 2;
      const std::size_t close = xml.find('"', i);
      if (close == std::string::npos) return fail("unterminated attribute value");
      const std::string value = xml.substr(i, close - i);
      if (!valid_text(value, doc.error)) return doc;
      if (!e.attributes.emplace(attr, value).second) return fail("duplicate attribute " + attr);
      i = close + 1;
    }
    doc.elements.push_back(e);
    if (!empty_element) open.push_back(e.name);
  }
  if (!open.empty()) return fail("unclosed element <" + open.back() + ">");
  if (!root_closed) return fail("no root element");
  return doc;
}

// The JUnit checks every output must pass: well-formed, and the suite's counts are the document's.
void expect_consistent_junit(const std::string& xml) {
  const XmlDocument doc = parse_xml(xml);
  ASSERT_EQ(doc.error, "") << xml;
  ASSERT_EQ(doc.count("testsuites"), 1u);
  ASSERT_EQ(doc.count("testsuite"), 1u);
  for (const char* suite_tag : {"testsuites", "testsuite"}) {
    const XmlElement* suite = doc.first(suite_tag);
    ASSERT_NE(suite, nullptr);
    EXPECT_EQ(suite->attributes.at("tests"), std::to_string(doc.count("testcase"))) << suite_tag;
    EXPECT_EQ(suite->attributes.at("failures"), std::to_string(doc.count("failure"))) << suite_tag;
    EXPECT_EQ(suite->attributes.at("errors"), std::to_string(doc.count("error"))) << suite_tag;
    EXPECT_EQ(suite->attributes.at("skipped"), std::to_string(doc.count("skipped"))) << suite_tag;
  }
}

// --- the verdict rules (cases that also meet a floor use the 4 MiB copy, which floors ignore) --

TEST(CompareVerdict, Names) {
  EXPECT_EQ(to_string(Verdict::kPass), "pass");
  EXPECT_EQ(to_string(Verdict::kRegression), "regression");
  EXPECT_EQ(to_string(Verdict::kImprovement), "improvement");
  EXPECT_EQ(to_string(Verdict::kNoise), "noise");
  EXPECT_EQ(to_string(Verdict::kMissing), "missing");
  EXPECT_EQ(to_string(Verdict::kNew), "new");
  EXPECT_EQ(to_string(Verdict::kSkipped), "skipped");
  EXPECT_EQ(to_string(Verdict::kFailed), "failed");
  EXPECT_EQ(to_string(Verdict::kAcross), "across");
}

TEST(CompareVerdict, IdenticalResultsAllPass) {
  const Result r = make_result({copy_case(kPinnedH2d256, 55.5), copy_case(kPinnedH2d4M, 53.6),
                                make_case(kLatency, {time_per_copy(around(2.3e-6))}),
                                make_case(kMemcpy, {bandwidth(around(5.9, 5))})});
  const Comparison c = run_compare(r, r);
  EXPECT_TRUE(c.incomparable.empty());
  ASSERT_EQ(c.cases.size(), 4u);
  for (const auto& k : c.cases) {
    EXPECT_EQ(k.verdict, Verdict::kPass) << k.id;
    ASSERT_FALSE(k.metrics.empty()) << k.id;
    EXPECT_DOUBLE_EQ(k.metrics.front().change_pct, 0) << k.id;
    EXPECT_DOUBLE_EQ(k.metrics.front().ratio, 1) << k.id;
    ASSERT_TRUE(k.metrics.front().p_value.has_value()) << k.id;
    EXPECT_GE(*k.metrics.front().p_value, 0.05) << k.id;
  }
  EXPECT_EQ(c.exit_code, 0);
}

TEST(CompareVerdict, TenPercentSlowerIsRegression) {
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5)});
  const Result r = make_result({copy_case(kPinnedH2d256, 0.9 * 55.5)});
  const Comparison c = run_compare(b, r);
  ASSERT_EQ(c.cases.size(), 1u);
  const CaseComparison& k = c.cases.front();
  EXPECT_EQ(k.verdict, Verdict::kRegression);
  ASSERT_EQ(k.metrics.size(), 1u) << "only the headline metric is gated without a gate block";
  const MetricComparison& m = k.metrics.front();
  EXPECT_EQ(m.name, "bandwidth");
  EXPECT_EQ(m.verdict, Verdict::kRegression);
  EXPECT_NEAR(m.change_pct, -10.0, 1e-6);
  EXPECT_NEAR(m.ratio, 0.9, 1e-9);
  // No ceiling of the scenario's: the device class's; the threshold applied is derived (one run:
  // the class default spread, 3 x 2 % x sqrt(1 + pi/2) on the log scale).
  EXPECT_DOUBLE_EQ(m.threshold_pct, GateRuleOptions{}.device.ceiling_pct);
  EXPECT_EQ(m.threshold_source, ThresholdSource::kUnknownSpread);
  EXPECT_NEAR(m.effective_threshold_pct,
              -std::expm1(-0.06 * std::sqrt(1 + std::numbers::pi / 2)) * 100, 1e-9);
  EXPECT_NEAR(m.baseline_median, 55.5, 1e-9);
  EXPECT_NEAR(m.result_median, 0.9 * 55.5, 1e-9);
  ASSERT_TRUE(m.p_value.has_value());
  EXPECT_LT(*m.p_value, 0.05);
  EXPECT_EQ(m.n_baseline, 9u);
  EXPECT_EQ(m.n_result, 9u);
  EXPECT_EQ(c.exit_code, 1);
}

TEST(CompareVerdict, TenPercentFasterIsImprovement) {
  const Result b = make_result({copy_case(kPinnedH2d256, 50.0)});
  const Result r = make_result({copy_case(kPinnedH2d256, 60.0)});
  const Comparison c = run_compare(b, r);
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.cases.front().verdict, Verdict::kImprovement);
  EXPECT_NEAR(c.cases.front().metrics.front().change_pct, 20.0, 1e-6);
  EXPECT_LT(*c.cases.front().metrics.front().p_value, 0.05);
  EXPECT_EQ(c.exit_code, 0);
}

TEST(CompareVerdict, LowerIsBetterMetricGoingUpIsRegression) {
  const Result b = make_result({make_case(kLatency, {time_per_copy(around(2.0e-6))})});
  const Result slower = make_result({make_case(kLatency, {time_per_copy(around(2.4e-6))})});
  const Comparison c = run_compare(b, slower);
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.cases.front().verdict, Verdict::kRegression);
  EXPECT_EQ(c.cases.front().metrics.front().better, Better::kLower);
  EXPECT_NEAR(c.cases.front().metrics.front().change_pct, 20.0, 1e-6);
  EXPECT_GT(c.cases.front().metrics.front().detectable_pct, 0) << "a time is flagged going up";
  EXPECT_EQ(c.exit_code, 1);

  // And a time going down is an improvement, not a regression.
  const Result faster = make_result({make_case(kLatency, {time_per_copy(around(1.6e-6))})});
  const Comparison d = run_compare(b, faster);
  EXPECT_EQ(d.cases.front().verdict, Verdict::kImprovement);
  EXPECT_EQ(d.exit_code, 0);
}

TEST(CompareVerdict, OverlappingNoisySamplesAreNoise) {
  const std::vector<double> wide = {100, 60, 140, 80, 120, 90, 110, 70, 130};  // median 100
  const Result b = make_result({make_case(kPinnedH2d256, {bandwidth(wide)})});
  const Result r = make_result({make_case(kPinnedH2d256, {bandwidth(scaled(wide, 0.9))})});
  const Comparison c = run_compare(b, r);
  ASSERT_EQ(c.cases.size(), 1u);
  const CaseComparison& k = c.cases.front();
  EXPECT_EQ(k.verdict, Verdict::kNoise);
  EXPECT_NEAR(k.metrics.front().change_pct, -10.0, 1e-6);
  ASSERT_TRUE(k.metrics.front().p_value.has_value());
  EXPECT_GE(*k.metrics.front().p_value, 0.05);
  EXPECT_NE(k.reason.find("significant"), std::string::npos) << k.reason;
  EXPECT_EQ(c.exit_code, 0) << "noise does not fail the gate";
}

// Issue 28: the threshold comes from the baseline's own spread, so a quiet path catches a small
// loss that a fixed 5 % let through; a fixed threshold keeps the old rule where a team wants it.
TEST(CompareVerdict, ThreePercentLossIsCaughtFromAQuietBaseline) {
  const CaseResult base = copy_case(kPinnedH2d256, 55.5);
  CaseResult slower = copy_case(kPinnedH2d256, 0.97 * 55.5);
  const Comparison c = run_compare_5(base, make_result({slower}));
  const MetricComparison& m = c.cases.front().metrics.front();
  EXPECT_EQ(m.verdict, Verdict::kRegression);
  EXPECT_EQ(m.threshold_source, ThresholdSource::kClassFloor) << "runs within 0.1 %: the floor";
  EXPECT_LT(m.effective_threshold_pct, 1.5);
  EXPECT_NEAR(m.detectable_pct, -m.effective_threshold_pct, 1e-12);
  EXPECT_EQ(c.exit_code, 1);

  slower.gate = ojson{{"threshold_pct", 5}, {"fixed", true}};
  const Comparison d = run_compare_5(base, make_result({slower}));
  EXPECT_EQ(d.cases.front().verdict, Verdict::kPass) << "within the fixed 5 %";
  EXPECT_EQ(d.cases.front().metrics.front().threshold_source, ThresholdSource::kFixed);
  EXPECT_EQ(d.exit_code, 0);
}

// One run cannot tell how far runs wander: the device-timed class default (2 %) applies, so a
// 3 % move passes, and the threshold says where it came from.
TEST(CompareVerdict, OneRunBaselineIsConservative) {
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5)});
  const Comparison c = run_compare(b, make_result({copy_case(kPinnedH2d256, 0.97 * 55.5)}));
  const MetricComparison& m = c.cases.front().metrics.front();
  EXPECT_EQ(m.verdict, Verdict::kPass);
  EXPECT_FALSE(m.spread_known);
  EXPECT_EQ(m.threshold_source, ThresholdSource::kUnknownSpread);
  EXPECT_NEAR(m.effective_threshold_pct,
              -std::expm1(-0.06 * std::sqrt(1 + std::numbers::pi / 2)) * 100, 1e-9);
  // A 10 % loss is still caught.
  EXPECT_EQ(run_compare(b, make_result({copy_case(kPinnedH2d256, 0.9 * 55.5)})).exit_code, 1);
  // A ceiling below what one run allows makes the metric not gateable, never a silent pass.
  CaseResult capped = copy_case(kPinnedH2d256, 0.5 * 55.5);
  capped.gate = ojson{{"threshold_pct", 2}};
  const Comparison capped_comparison = run_compare(b, make_result({capped}));
  const MetricComparison& u = capped_comparison.cases.front().metrics.front();
  EXPECT_EQ(u.verdict, Verdict::kUnstable);
  EXPECT_NE(u.reason.find("wider than the 2.0 % ceiling (the scenario's gate block)"),
            std::string::npos)
      << u.reason;
}

TEST(CompareVerdict, CommandLineThresholdIsACeiling) {
  const CaseResult base = copy_case(kPinnedH2d256, 55.5);
  const Result r = make_result({copy_case(kPinnedH2d256, 0.97 * 55.5)});
  CompareOptions options;
  options.default_threshold_pct = 2;  // the derived ~1.4 % fits under it
  const Comparison c = run_compare_5(base, r, options);
  EXPECT_EQ(c.cases.front().verdict, Verdict::kRegression);
  EXPECT_DOUBLE_EQ(c.cases.front().metrics.front().threshold_pct, 2.0);
  options.default_threshold_pct = 1;  // it does not fit under 1 %
  const Comparison d =
      run_compare_5(base, make_result({copy_case(kPinnedH2d256, 0.9 * 55.5)}), options);
  EXPECT_EQ(d.cases.front().verdict, Verdict::kUnstable);
  EXPECT_NE(d.cases.front().metrics.front().reason.find("ceiling (--threshold)"), std::string::npos)
      << d.cases.front().metrics.front().reason;
}

TEST(CompareVerdict, BaselineGateAppliesWhenResultHasNone) {
  CaseResult base = copy_case(kPinnedH2d256, 55.5);
  base.gate = ojson{{"threshold_pct", 8}, {"fixed", true}};
  const Comparison c = run_compare_5(base, make_result({copy_case(kPinnedH2d256, 0.97 * 55.5)}));
  EXPECT_EQ(c.cases.front().verdict, Verdict::kPass) << "the baseline's fixed 8 %";
  EXPECT_DOUBLE_EQ(c.cases.front().metrics.front().threshold_pct, 8.0);
}

TEST(CompareVerdict, PerMetricGateThresholdWinsOverThresholdPct) {
  const Result b = make_result({copy_case(kPinnedH2d4M, 55.5)});
  CaseResult slower = copy_case(kPinnedH2d4M, 0.9 * 55.5);
  // One run: the metric needs ~9.2 %. The metric's own ceiling (15 %) allows it, the block's
  // (2 %) would not.
  slower.gate = ojson{{"threshold_pct", 2}, {"metrics", ojson{{"bandwidth", 15}}}};
  const Comparison c = run_compare(b, make_result({slower}));
  ASSERT_EQ(c.cases.size(), 1u);
  const MetricComparison* bw = find_metric(c.cases.front(), "bandwidth");
  ASSERT_NE(bw, nullptr);
  EXPECT_DOUBLE_EQ(bw->threshold_pct, 15.0);
  EXPECT_EQ(bw->verdict, Verdict::kRegression) << "gated under the metric's own ceiling";
  EXPECT_EQ(c.exit_code, 1);

  slower.gate = ojson{{"threshold_pct", 50}, {"metrics", ojson{{"bandwidth", 3}}}};
  const Comparison d = run_compare(b, make_result({slower}));
  EXPECT_EQ(find_metric(d.cases.front(), "bandwidth")->verdict, Verdict::kUnstable);
  EXPECT_EQ(d.exit_code, 0);
}

TEST(CompareVerdict, MetricNamedInGateIsGatedBesidesHeadline) {
  // The headline (bandwidth) is unchanged; the second metric got 10 % worse.
  auto make = [](double time_factor) {
    return make_case(kPinnedH2d256,
                     {bandwidth(around(55.5)), time_per_copy(around(4.84e-3 * time_factor))});
  };
  const Result b = make_result({make(1.0)});
  CaseResult worse = make(1.2);
  const Comparison ungated = run_compare(b, make_result({worse}));
  ASSERT_EQ(ungated.cases.front().metrics.size(), 1u);
  EXPECT_EQ(ungated.cases.front().verdict, Verdict::kPass);

  worse.gate = ojson{{"metrics", ojson{{"time_per_copy", ojson{{"statistic", "median"}}}}}};
  const Comparison gated = run_compare(b, make_result({worse}));
  const CaseComparison& k = gated.cases.front();
  ASSERT_EQ(k.metrics.size(), 2u);
  EXPECT_EQ(k.metrics[0].name, "bandwidth") << "the headline comes first";
  EXPECT_EQ(k.metrics[0].verdict, Verdict::kPass);
  EXPECT_EQ(k.metrics[1].name, "time_per_copy");
  EXPECT_EQ(k.metrics[1].verdict, Verdict::kRegression);
  EXPECT_NEAR(k.metrics[1].change_pct, 20.0, 1e-6);
  EXPECT_EQ(k.verdict, Verdict::kRegression) << "the case takes its worst metric's verdict";
  EXPECT_EQ(gated.exit_code, 1);
}

TEST(CompareVerdict, GatedMetricAbsentIsMissing) {
  CaseResult b = make_case(kPinnedH2d256, {bandwidth(around(55.5))});
  CaseResult r = make_case(kPinnedH2d256, {bandwidth(around(55.5))});
  r.gate = ojson{{"metrics", ojson{{"round_trip_time", 10}}}};
  const Comparison c = run_compare(make_result({b}), make_result({r}));
  const MetricComparison* m = find_metric(c.cases.front(), "round_trip_time");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->verdict, Verdict::kMissing);
  EXPECT_EQ(c.cases.front().verdict, Verdict::kMissing);
  EXPECT_EQ(c.exit_code, 2);
}

TEST(CompareVerdict, FewerThanFiveSamplesAreInsufficientNotPass) {
  const Result b = make_result({copy_case(kPinnedH2d4M, 55.5)});
  // 4 samples, 10 % slower: no test is possible -> insufficient (exit 2), never a pass.
  const Comparison c = run_compare(b, make_result({copy_case(kPinnedH2d4M, 0.9 * 55.5, 4)}));
  const CaseComparison& k = c.cases.front();
  EXPECT_EQ(k.verdict, Verdict::kInsufficient);
  const MetricComparison& m = k.metrics.front();
  EXPECT_FALSE(m.p_value.has_value());
  EXPECT_EQ(m.n_baseline, 9u);
  EXPECT_EQ(m.n_result, 4u);
  EXPECT_NE(m.reason.find("samples"), std::string::npos) << m.reason;
  EXPECT_NE(k.reason.find("samples"), std::string::npos) << k.reason;
  EXPECT_EQ(c.exit_code, 2);

  // Within the threshold too: a --quick run can neither fail nor pass the gate.
  const Comparison d = run_compare(b, make_result({copy_case(kPinnedH2d4M, 0.99 * 55.5, 4)}));
  EXPECT_EQ(d.cases.front().verdict, Verdict::kInsufficient);
  EXPECT_EQ(d.exit_code, 2);

  // The baseline side counts too.
  const Comparison e = run_compare(make_result({copy_case(kPinnedH2d4M, 55.5, 4)}),
                                   make_result({copy_case(kPinnedH2d4M, 0.9 * 55.5)}));
  EXPECT_EQ(e.cases.front().verdict, Verdict::kInsufficient);
  EXPECT_FALSE(e.cases.front().metrics.front().p_value.has_value());

  // Five on each side is enough for a verdict.
  const Comparison f = run_compare(make_result({make_case(kMemcpy, {bandwidth(around(5.9, 5))})}),
                                   make_result({make_case(kMemcpy, {bandwidth(around(5.0, 5))})}));
  EXPECT_TRUE(f.cases.front().metrics.front().p_value.has_value());
}

TEST(CompareVerdict, CaseMissingFromResult) {
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5), copy_case(kPinnedH2d4M, 53.6)});
  const Result r = make_result({copy_case(kPinnedH2d256, 55.5)});
  const Comparison c = run_compare(b, r);
  const CaseComparison* k = find_case(c, kPinnedH2d4M);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->verdict, Verdict::kMissing);
  EXPECT_EQ(c.exit_code, 2);
}

TEST(CompareVerdict, CaseOnlyInResultIsNew) {
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5)});
  const Result r = make_result({copy_case(kPinnedH2d256, 55.5), copy_case(kPinnedH2d4M, 53.6)});
  const Comparison c = run_compare(b, r);
  const CaseComparison* k = find_case(c, kPinnedH2d4M);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->verdict, Verdict::kNew);
  EXPECT_EQ(c.exit_code, 0);
}

TEST(CompareVerdict, FailedCaseInResultFails) {
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5)});
  CaseResult failed = copy_case(kPinnedH2d256, 55.5);
  failed.status = CaseStatus::kFailed;
  failed.reason = "copy_pattern: destination mismatch at byte 4096";
  const Comparison c = run_compare(b, make_result({failed}));
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.cases.front().verdict, Verdict::kFailed);
  EXPECT_EQ(c.cases.front().reason, failed.reason);
  EXPECT_EQ(c.exit_code, 1);

  // A failed case that is not in the baseline still fails the gate (not "new").
  const Comparison d = run_compare(make_result({}), make_result({failed}));
  EXPECT_EQ(d.cases.front().verdict, Verdict::kFailed);
  EXPECT_EQ(d.exit_code, 1);
}

TEST(CompareVerdict, SkippedOnEitherSideIsSkipped) {
  const CaseResult ok = copy_case(kPinnedH2d256, 55.5);
  const CaseResult skipped =
      make_case(kPinnedH2d256, {}, CaseStatus::kSkipped, "no CUDA device visible");
  // Measured in the baseline but not in the result: incomplete, never a silent pass.
  const Comparison in_result = run_compare(make_result({ok}), make_result({skipped}));
  EXPECT_EQ(in_result.cases.front().verdict, Verdict::kMissing);
  EXPECT_NE(in_result.cases.front().reason.find("no CUDA device"), std::string::npos);
  EXPECT_EQ(in_result.exit_code, 2);

  const Comparison in_baseline = run_compare(make_result({skipped}), make_result({ok}));
  EXPECT_EQ(in_baseline.cases.front().verdict, Verdict::kSkipped);
  EXPECT_NE(in_baseline.cases.front().reason.find("baseline"), std::string::npos);
  EXPECT_EQ(in_baseline.exit_code, 0);

  const Comparison both = run_compare(make_result({skipped}), make_result({skipped}));
  EXPECT_EQ(both.cases.front().verdict, Verdict::kSkipped);
  EXPECT_EQ(both.exit_code, 0);
}

TEST(CompareVerdict, RegressionOutranksMissingInTheExitCode) {
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5), copy_case(kPinnedH2d4M, 53.6)});
  const Result r = make_result({copy_case(kPinnedH2d256, 0.9 * 55.5)});
  EXPECT_EQ(run_compare(b, r).exit_code, 1);
}

// --- severity ordering --------------------------------------------------------------------------

TEST(CompareOrder, SeverityWorstFirst) {
  const std::vector<Verdict> worst_first = {
      Verdict::kFailed,      Verdict::kRegression, Verdict::kMissing,
      Verdict::kNoise,       Verdict::kSkipped,    Verdict::kNew,
      Verdict::kImprovement, Verdict::kAcross,     Verdict::kPass};
  for (std::size_t i = 0; i + 1 < worst_first.size(); ++i) {
    EXPECT_GT(severity(worst_first[i]), severity(worst_first[i + 1]))
        << to_string(worst_first[i]) << " vs " << to_string(worst_first[i + 1]);
  }
}

TEST(CompareOrder, CasesComeWorstFirst) {
  const std::vector<double> wide = {100, 60, 140, 80, 120, 90, 110, 70, 130};
  const std::string pass_id =
      "copy/measure=bandwidth/direction=d2h/host_memory=pinned/host_node=local/bytes=65536";
  const std::string improved_id =
      "copy/measure=bandwidth/direction=d2h/host_memory=pinned/host_node=local/bytes=4194304";
  const std::string noise_id = "copy/measure=bandwidth/direction=d2d/bytes=268435456";
  const std::string skipped_id =
      "copy/measure=bandwidth/direction=d2h/host_memory=pageable-4k/host_node=local/bytes=65536";
  const std::string new_id =
      "copy/measure=bandwidth/direction=d2h/host_memory=pageable-4k/host_node=local/bytes=4194304";
  const std::string failed_id =
      "copy/measure=bandwidth/direction=d2h/host_memory=registered-4k/host_node=local/bytes=65536";
  const std::string small_regression = kPinnedH2d4M;  // -8 %
  const std::string big_regression = kPinnedH2d256;   // -20 %
  CaseResult failed = copy_case(failed_id, 20);
  failed.status = CaseStatus::kFailed;
  failed.reason = "latch timed out";

  // Baseline order is deliberately the reverse of the expected output order.
  const Result b = make_result({copy_case(pass_id, 21), copy_case(improved_id, 50),
                                make_case(skipped_id, {}, CaseStatus::kSkipped, "no GPU"),
                                make_case(noise_id, {bandwidth(wide)}), copy_case(kMemcpy, 6),
                                copy_case(small_regression, 53.6), copy_case(big_regression, 55.5),
                                copy_case(failed_id, 20)});
  const Result r =
      make_result({copy_case(pass_id, 21), copy_case(improved_id, 60),
                   make_case(skipped_id, {}, CaseStatus::kSkipped, "no GPU"),
                   make_case(noise_id, {bandwidth(scaled(wide, 0.9))}),
                   copy_case(small_regression, 0.88 * 53.6), copy_case(big_regression, 0.8 * 55.5),
                   failed, copy_case(new_id, 12)});
  const Comparison c = run_compare(b, r);
  std::vector<std::string> ids;
  std::vector<Verdict> verdicts;
  for (const auto& k : c.cases) {
    ids.push_back(k.id);
    verdicts.push_back(k.verdict);
  }
  const std::vector<Verdict> expected = {
      Verdict::kFailed,  Verdict::kRegression,  Verdict::kRegression,
      Verdict::kMissing, Verdict::kNoise,       Verdict::kSkipped,
      Verdict::kNew,     Verdict::kImprovement, Verdict::kPass};
  ASSERT_EQ(verdicts.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(verdicts[i], expected[i]) << i << ": " << ids[i] << " is " << to_string(verdicts[i]);
  }
  // Within one verdict the larger change comes first.
  EXPECT_EQ(ids[1], big_regression);
  EXPECT_EQ(ids[2], small_regression);
  EXPECT_EQ(ids[3], kMemcpy);
  EXPECT_EQ(c.exit_code, 1);
}

// --- node identity ------------------------------------------------------------------------------

TEST(CompareIdentity, SameContextIsComparable) {
  const Result r = make_result({copy_case(kPinnedH2d256, 55.5)});
  EXPECT_TRUE(identity_differences(r, r).empty());
  // Run-to-run state (clocks, current link, free memory, time) never makes two runs incomparable.
  ojson ctx = h200_context();
  ctx["gpus"][0]["pcie_gen_current"] = 1;
  ctx["gpus"][0]["clock_sm_mhz"] = 345;
  ctx["mem_available_bytes"] = 1234;
  ctx["driver_version"] = "590.1";
  const Result other = make_result({copy_case(kPinnedH2d256, 55.5)}, ctx);
  EXPECT_TRUE(identity_differences(r, other).empty()) << joined(identity_differences(r, other));
}

TEST(CompareIdentity, DifferentLinkWidthIsIncomparable) {
  ojson narrow = h200_context();
  narrow["gpus"][0]["pcie_width_max"] = 8;
  narrow["gpus"][0]["pcie_width_current"] = 8;
  refingerprint(narrow);
  ASSERT_NE(narrow["topology_fingerprint"], h200_context()["topology_fingerprint"]);
  // Same --node-type label on both: only the fingerprint tells them apart.
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5)});
  const Result r = make_result({copy_case(kPinnedH2d256, 27.0)}, narrow);
  const Comparison c = run_compare(b, r);
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_TRUE(c.cases.empty()) << "no case verdicts between different topologies";
  const std::string lines = joined(c.incomparable);
  EXPECT_NE(lines.find("pcie_width_max=16"), std::string::npos) << lines;
  EXPECT_NE(lines.find("pcie_width_max=8"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("cpu_model"), std::string::npos) << "only differing facts: " << lines;
}

TEST(CompareIdentity, DifferentGpuModelIsIncomparable) {
  ojson h100 = h200_context();
  h100["gpus"][0]["name"] = "NVIDIA H100 80GB HBM3";
  h100["gpus"][0]["memory_bytes"] = 85520809984;
  h100["node_type"] = "NVIDIA H100 80GB HBM3 x1 / PCIe Gen5 x16 / 1 NUMA";
  refingerprint(h100);
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5)});
  const Result r = make_result({copy_case(kPinnedH2d256, 0.5 * 55.5)}, h100);
  const Comparison c = run_compare(b, r);
  // No case verdicts across GPU models; the halved copy still fails the result's own floor,
  // and a floor not met outranks "incomparable".
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_TRUE(c.cases.empty());
  EXPECT_TRUE(std::any_of(c.floors.begin(), c.floors.end(), [](const FloorCheck& f) {
    return f.verdict == FloorVerdict::kBelowFloor;
  }));
  const std::string lines = joined(c.incomparable);
  EXPECT_NE(lines.find("node_type"), std::string::npos) << lines;
  EXPECT_NE(lines.find("NVIDIA H100 80GB HBM3"), std::string::npos) << lines;
  EXPECT_NE(lines.find("name=NVIDIA H200"), std::string::npos) << lines;
  EXPECT_NE(lines.find("mem_gib="), std::string::npos) << lines;
  // The identity check is symmetric in what it names.
  EXPECT_EQ(identity_differences(r, b).size(), identity_differences(b, r).size());
}

TEST(CompareIdentity, DifferentNodeTypeLabelAloneIsIncomparable) {
  ojson labelled = h200_context();
  labelled["node_type"] = "h200-pcie";
  labelled["node_type_derived"] = false;
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5)});
  const Result r = make_result({copy_case(kPinnedH2d256, 55.5)}, labelled);
  const Comparison c = run_compare(b, r);
  EXPECT_EQ(c.exit_code, 2);
  ASSERT_EQ(c.incomparable.size(), 1u) << joined(c.incomparable);
  EXPECT_NE(c.incomparable.front().find("h200-pcie"), std::string::npos);
}

TEST(CompareIdentity, AcrossGivesRatiosAndNoVerdicts) {
  ojson h100 = h200_context();
  h100["gpus"][0]["name"] = "NVIDIA H100 80GB HBM3";
  h100["node_type"] = "NVIDIA H100 80GB HBM3 x1 / PCIe Gen5 x16 / 1 NUMA";
  refingerprint(h100);
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5), copy_case(kPinnedH2d4M, 50.0)});
  const Result r =
      make_result({copy_case(kPinnedH2d256, 0.5 * 55.5), copy_case(kPinnedH2d4M, 60.0)}, h100);
  CompareOptions options;
  options.across = true;
  const Comparison c = run_compare(b, r, options);
  EXPECT_TRUE(c.across);
  EXPECT_TRUE(c.incomparable.empty());
  ASSERT_EQ(c.cases.size(), 2u);
  for (const auto& k : c.cases) {
    EXPECT_EQ(k.verdict, Verdict::kAcross) << k.id;
    for (const auto& m : k.metrics) {
      EXPECT_EQ(m.verdict, Verdict::kAcross);
      EXPECT_FALSE(m.p_value.has_value()) << "no test across node types";
    }
  }
  EXPECT_NEAR(find_case(c, kPinnedH2d256)->metrics.front().ratio, 0.5, 1e-9);
  EXPECT_NEAR(find_case(c, kPinnedH2d4M)->metrics.front().ratio, 1.2, 1e-9);
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_EQ(to_json(c)["mode"], "across");
}

// --- floors -------------------------------------------------------------------------------------

// The acceptance criterion: a pinned 256 MiB H2D copy at half of Gen5 x16 fails the gate even
// against a baseline that was just as slow.
TEST(CompareFloors, HalfOfGen5x16IsBelowFloor) {
  const Result slow = make_result({copy_case(kPinnedH2d256, 0.5 * kGen5x16)});
  const Comparison c = run_compare(slow, slow);
  EXPECT_EQ(c.cases.front().verdict, Verdict::kPass);
  const FloorCheck* f = find_floor(c, kPinnedH2d256);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->verdict, FloorVerdict::kBelowFloor);
  EXPECT_NEAR(f->fraction, 0.5, 1e-6);
  EXPECT_NEAR(f->link_raw_gb_per_s, kGen5x16, 1e-6);
  EXPECT_NEAR(f->floor_gb_per_s, 0.8 * kGen5x16, 1e-6);
  EXPECT_EQ(c.exit_code, 1);

  const Comparison floors_only = check_result_floors(slow, "result.json", CompareOptions{});
  EXPECT_TRUE(floors_only.floors_only);
  EXPECT_EQ(find_floor(floors_only, kPinnedH2d256)->verdict, FloorVerdict::kBelowFloor);
  EXPECT_EQ(floors_only.exit_code, 1);
}

TEST(CompareFloors, HealthyRealRunPasses) {
  const Result real = load_result(std::string(PATHBENCH_FIXTURES) + "/results/h200-default.json");
  const Comparison c = check_result_floors(real, "h200-default.json", CompareOptions{});
  ASSERT_EQ(c.floors.size(), 5u) << "the link and four pinned/registered 256 MiB copies";
  for (const auto& f : c.floors)
    EXPECT_EQ(f.verdict, FloorVerdict::kPass) << f.id << ": " << f.detail;
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_TRUE(c.cases.empty());
}

TEST(CompareFloors, LinkTrainedBelowMaximumIsDegraded) {
  ojson gen4 = h200_context();
  gen4["gpus"][0]["pcie_gen_current"] = 4;
  const Result r = make_result({copy_case(kPinnedH2d256, 25.0)}, gen4);
  const Comparison c = run_compare(r, r);
  EXPECT_TRUE(c.incomparable.empty()) << "the current link is state, not topology";
  const FloorCheck* link = find_floor(c, "gpu0/pcie_link");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->verdict, FloorVerdict::kLinkDegraded);
  EXPECT_NE(link->detail.find("Gen4"), std::string::npos) << link->detail;
  EXPECT_EQ(c.exit_code, 1);

  // Copies that meet the Gen4 floor do not rescue the degraded link.
  const Result r26 = make_result({copy_case(kPinnedH2d256, 26.0)}, gen4);
  const Comparison d = check_result_floors(r26, "result.json", CompareOptions{});
  EXPECT_EQ(find_floor(d, kPinnedH2d256)->verdict, FloorVerdict::kPass);
  EXPECT_EQ(find_floor(d, "gpu0/pcie_link")->verdict, FloorVerdict::kLinkDegraded);
  EXPECT_EQ(d.exit_code, 1);
}

TEST(CompareFloors, IdleDownshiftedLinkWithFastCopiesPasses) {
  ojson idle = h200_context();
  idle["gpus"][0]["pcie_gen_current"] = 1;  // read while the GPU idled
  const Result r = make_result({copy_case(kPinnedH2d256, 55.0)}, idle);
  const Comparison c = run_compare(r, r);
  const FloorCheck* link = find_floor(c, "gpu0/pcie_link");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->verdict, FloorVerdict::kPass) << link->detail;
  const FloorCheck* copy = find_floor(c, kPinnedH2d256);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->verdict, FloorVerdict::kPass) << copy->detail;
  EXPECT_NEAR(copy->link_raw_gb_per_s, kGen5x16, 1e-6) << "held to the maximum link";
  EXPECT_EQ(c.exit_code, 0);
}

// Exit 1 outranks exit 2 everywhere else (a regression with a missing case exits 1; ci/gate.sh
// without a baseline exits with the floors' 1 rather than 2): a floor that fails on a result
// compared with an incomparable baseline is still a failing node.
TEST(CompareFloors, FloorFailureOutranksIncomparable) {
  ojson narrow = h200_context();
  narrow["gpus"][0]["pcie_width_max"] = 8;
  narrow["gpus"][0]["pcie_width_current"] = 8;
  refingerprint(narrow);
  const double gen5x8 = kGen5x16 / 2;
  const Comparison c = run_compare(make_result({copy_case(kPinnedH2d256, 55.5)}),
                                   make_result({copy_case(kPinnedH2d256, 0.5 * gen5x8)}, narrow));
  ASSERT_FALSE(c.incomparable.empty());
  const FloorCheck* f = find_floor(c, kPinnedH2d256);
  ASSERT_NE(f, nullptr) << "floors are checked even when the baseline is incomparable";
  EXPECT_EQ(f->verdict, FloorVerdict::kBelowFloor);
  EXPECT_EQ(c.exit_code, 1) << "below_floor is reported in the JUnit as a failure but the exit "
                               "code says only 'incomparable'";
}

TEST(CompareFloors, FailedCasesInFloorsOnlyModeFail) {
  CaseResult failed = copy_case(kPinnedH2d256, 55.5);
  failed.status = CaseStatus::kFailed;
  failed.reason = "latch timed out";
  const Comparison c = check_result_floors(make_result({failed}), "r.json", CompareOptions{});
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.cases.front().verdict, Verdict::kFailed);
  EXPECT_EQ(c.exit_code, 1);
}

// --- JSON ---------------------------------------------------------------------------------------

TEST(CompareJson, SchemaAndDocumentedFields) {
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5), copy_case(kPinnedH2d4M, 53.6)});
  const Result r = make_result({copy_case(kPinnedH2d256, 0.9 * 55.5)});
  const Comparison c = run_compare(b, r);
  const ojson j = to_json(c);
  EXPECT_EQ(j["schema"], "pathbench.compare/v1");
  EXPECT_EQ(j["mode"], "gate");
  for (const char* key :
       {"schema", "mode", "baseline", "result", "alpha", "default_threshold",
        "default_threshold_pct", "exit_code", "incomparable", "summary", "cases", "floors"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* side : {"baseline", "result"}) {
    for (const char* key :
         {"file", "node_type", "topology_fingerprint", "hostname", "start_time"}) {
      EXPECT_TRUE(j[side].contains(key)) << side << "." << key;
    }
  }
  EXPECT_EQ(j["baseline"]["file"], "baseline.json");
  EXPECT_EQ(j["result"]["file"], "result.json");
  EXPECT_EQ(j["result"]["node_type"], h200_context()["node_type"]);
  EXPECT_DOUBLE_EQ(j["alpha"].get<double>(), 0.05);
  // No --threshold: no default ceiling (0), the class ceilings apply.
  EXPECT_DOUBLE_EQ(j["default_threshold"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(j["default_threshold_pct"].get<double>(), 0);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_TRUE(j["incomparable"].is_array());
  for (const char* v :
       {"pass", "regression", "improvement", "noise", "missing", "new", "skipped", "failed"}) {
    EXPECT_TRUE(j["summary"].contains(v)) << v;
  }
  EXPECT_EQ(j["summary"]["regression"], 1);
  EXPECT_EQ(j["summary"]["missing"], 1);
  EXPECT_EQ(j["summary"]["pass"], 0);

  ASSERT_EQ(j["cases"].size(), 2u);
  const ojson& first = j["cases"][0];
  EXPECT_EQ(first["id"], kPinnedH2d256);
  EXPECT_EQ(first["family"], "copy");
  EXPECT_EQ(first["verdict"], "regression");
  EXPECT_TRUE(first.contains("reason"));
  ASSERT_EQ(first["metrics"].size(), 1u);
  const ojson& m = first["metrics"][0];
  for (const char* key :
       {"name", "unit", "better", "verdict", "baseline_median", "result_median", "change_pct",
        "ratio", "threshold_pct", "p_value", "n_baseline", "n_result", "reason"}) {
    EXPECT_TRUE(m.contains(key)) << key;
  }
  EXPECT_EQ(m["name"], "bandwidth");
  EXPECT_EQ(m["unit"], "GB/s");
  EXPECT_EQ(m["better"], "higher");
  EXPECT_EQ(m["verdict"], "regression");
  EXPECT_NEAR(m["change_pct"].get<double>(), -10.0, 1e-6);
  EXPECT_LT(m["p_value"].get<double>(), 0.05);
  EXPECT_EQ(m["n_baseline"], 9);
  EXPECT_EQ(j["cases"][1]["verdict"], "missing");

  ASSERT_FALSE(j["floors"].empty());
  for (const auto& f : j["floors"]) {
    for (const char* key : {"id", "gpu", "verdict", "measured_gb_per_s", "floor_gb_per_s",
                            "link_raw_gb_per_s", "fraction", "detail"}) {
      EXPECT_TRUE(f.contains(key)) << key;
    }
  }
}

TEST(CompareJson, NoPValueIsNull) {
  const Comparison c = run_compare(make_result({copy_case(kPinnedH2d256, 55.5)}),
                                   make_result({copy_case(kPinnedH2d256, 55.5, 4)}));
  EXPECT_TRUE(to_json(c)["cases"][0]["metrics"][0]["p_value"].is_null());
}

TEST(CompareJson, FloorsModeHasNoBaseline) {
  const Comparison c = check_result_floors(make_result({copy_case(kPinnedH2d256, 55.5)}),
                                           "result.json", CompareOptions{});
  const ojson j = to_json(c);
  EXPECT_EQ(j["schema"], "pathbench.compare/v1");
  EXPECT_EQ(j["mode"], "floors");
  EXPECT_FALSE(j.contains("baseline"));
  EXPECT_EQ(j["result"]["file"], "result.json");
  EXPECT_EQ(j["floors"].size(), 2u);
}

TEST(CompareJson, IncomparableListsDifferences) {
  ojson narrow = h200_context();
  narrow["gpus"][0]["pcie_width_max"] = 8;
  refingerprint(narrow);
  const Comparison c = run_compare(make_result({copy_case(kPinnedH2d256, 55.5)}),
                                   make_result({copy_case(kPinnedH2d256, 55.5)}, narrow));
  const ojson j = to_json(c);
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_FALSE(j["incomparable"].empty());
  EXPECT_TRUE(j["cases"].empty());
}

// --- JUnit --------------------------------------------------------------------------------------

TEST(CompareJunit, WellFormedWithCountsMatchingElements) {
  const std::vector<double> wide = {100, 60, 140, 80, 120, 90, 110, 70, 130};
  const std::string noise_id = "copy/measure=bandwidth/direction=d2d/bytes=268435456";
  const std::string skipped_id = "host_memory/measure=first_touch/page=hugetlb/bytes=268435456";
  const std::string failed_id =
      "copy/measure=bandwidth/direction=d2h/host_memory=pinned/host_node=local/bytes=268435456";
  CaseResult failed = copy_case(failed_id, 55.0);
  failed.status = CaseStatus::kFailed;
  failed.reason = "copy_pattern: mismatch";
  ojson gen4 = h200_context();
  gen4["gpus"][0]["pcie_gen_current"] = 4;
  const Result b = make_result({copy_case(kPinnedH2d256, 55.5), copy_case(kPinnedH2d4M, 53.6),
                                make_case(noise_id, {bandwidth(wide)}),
                                make_case(skipped_id, {}, CaseStatus::kSkipped, "no hugetlb pages"),
                                copy_case(failed_id, 55.0), copy_case(kMemcpy, 6)});
  const Result r = make_result(
      {copy_case(kPinnedH2d256, 0.45 * 55.5), make_case(noise_id, {bandwidth(scaled(wide, 0.9))}),
       make_case(skipped_id, {}, CaseStatus::kSkipped, "no hugetlb pages"), failed,
       copy_case(kMemcpy, 6), copy_case(kLatency, 1)},
      gen4);
  const Comparison c = run_compare(b, r);
  ASSERT_TRUE(c.incomparable.empty());
  const std::string xml = junit_xml(c);
  expect_consistent_junit(xml);
  const XmlDocument doc = parse_xml(xml);
  EXPECT_EQ(doc.count("testcase"), c.cases.size() + c.floors.size());
  // regression + failed case + below_floor copy + degraded link
  EXPECT_EQ(doc.count("failure"), 4u) << xml;
  EXPECT_EQ(doc.count("error"), 1u) << "the missing case";
  EXPECT_EQ(doc.count("skipped"), 1u);
  EXPECT_NE(xml.find("name=\"" + std::string(kPinnedH2d256) + "\""), std::string::npos);
  EXPECT_NE(xml.find("type=\"regression\""), std::string::npos);
  EXPECT_NE(xml.find("type=\"below_floor\""), std::string::npos);
  EXPECT_NE(xml.find("type=\"link_degraded\""), std::string::npos);
}

TEST(CompareJunit, IncomparableIsAnError) {
  ojson narrow = h200_context();
  narrow["gpus"][0]["pcie_width_max"] = 8;
  refingerprint(narrow);
  const Comparison c = run_compare(make_result({copy_case(kPinnedH2d256, 55.5)}),
                                   make_result({copy_case(kPinnedH2d256, 55.5)}, narrow));
  const std::string xml = junit_xml(c);
  expect_consistent_junit(xml);
  const XmlDocument doc = parse_xml(xml);
  EXPECT_GE(doc.count("error"), 1u);
  EXPECT_NE(xml.find("type=\"incomparable\""), std::string::npos);
  EXPECT_NE(xml.find("pcie_width_max=8"), std::string::npos);
}

TEST(CompareJunit, EscapesMarkupInIdsAndReasons) {
  const std::string evil_id = "copy/measure=bandwidth/label=<a href=\"x\">&amp;</a>'q'";
  const std::string evil_reason = "failed: <tag attr=\"v\"> & more </tag> \"quoted\" & 'single'";
  CaseResult failed = make_case(evil_id, {}, CaseStatus::kFailed, evil_reason);
  failed.family = "copy<&>\"";
  CaseResult skipped =
      make_case(evil_id + "/skip", {}, CaseStatus::kSkipped, "needs <hugetlb> & \"root\"");
  CaseResult regressed = copy_case(evil_id + "/reg", 0.9 * 55.5);
  const Result b =
      make_result({copy_case(evil_id + "/reg", 55.5), skipped, copy_case(evil_id + "/gone", 1.0)});
  const Result r = make_result({failed, skipped, regressed});
  const Comparison c = run_compare(b, r);
  const std::string xml = junit_xml(c);
  expect_consistent_junit(xml);
  EXPECT_EQ(xml.find(evil_id), std::string::npos) << "the raw id must not appear";
  EXPECT_EQ(xml.find("<tag"), std::string::npos);
  EXPECT_EQ(xml.find("<hugetlb>"), std::string::npos);
  EXPECT_NE(xml.find("&lt;a href=&quot;x&quot;&gt;&amp;amp;&lt;/a&gt;"), std::string::npos) << xml;
  EXPECT_NE(xml.find("&lt;tag attr=&quot;v&quot;&gt; &amp; more &lt;/tag&gt;"), std::string::npos)
      << xml;
  const XmlDocument doc = parse_xml(xml);
  EXPECT_EQ(doc.count("failure"), 2u);
  EXPECT_EQ(doc.count("error"), 1u);
  EXPECT_EQ(doc.count("skipped"), 1u);
}

TEST(CompareJunit, ControlCharactersNeverReachTheXml) {
  CaseResult failed = make_case("copy/measure=bandwidth/x=1", {}, CaseStatus::kFailed,
                                std::string("bad\x01\x1b[31mred\x7f"));
  const Comparison c = run_compare(make_result({}), make_result({failed}));
  const std::string xml = junit_xml(c);
  expect_consistent_junit(xml);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_EQ(xml.find('\x1b'), std::string::npos);
}

TEST(CompareJunit, FloorsOnlyAndAllPass) {
  const Result r = make_result({copy_case(kPinnedH2d256, 55.5)});
  expect_consistent_junit(junit_xml(check_result_floors(r, "r.json", CompareOptions{})));
  const std::string xml = junit_xml(run_compare(r, r));
  expect_consistent_junit(xml);
  const XmlDocument doc = parse_xml(xml);
  EXPECT_EQ(doc.count("failure") + doc.count("error") + doc.count("skipped"), 0u);
}

// --- the table ----------------------------------------------------------------------------------

TEST(CompareTable, RegressionListedFirstAndExitLine) {
  const Result b = make_result({copy_case(kPinnedH2d4M, 53.6), copy_case(kPinnedH2d256, 55.5)});
  const Result r =
      make_result({copy_case(kPinnedH2d4M, 53.6), copy_case(kPinnedH2d256, 0.9 * 55.5)});
  const Comparison c = run_compare(b, r);
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&buf, &size);
  ASSERT_NE(out, nullptr);
  print_comparison(c, out, false);
  std::fclose(out);
  const std::string text(buf, size);
  std::free(buf);
  EXPECT_EQ(text.find("\033["), std::string::npos) << "no colour when not a terminal";
  const auto reg = text.find("regression");
  const auto pass = text.find("\npass");
  ASSERT_NE(reg, std::string::npos) << text;
  ASSERT_NE(pass, std::string::npos) << text;
  EXPECT_LT(reg, pass) << text;
  EXPECT_NE(text.find("exit 1"), std::string::npos) << text;
}

// --- percentile gates: {"statistic": "p99"} judges the per-repetition p99s -------------------

constexpr const char* kServing = "serving/strategy=pinned_pool/request_bytes=65536";

// One repetition of 1000 operations: a lognormal body around `body` seconds, and every 50th
// operation (2 %) in a tail around `tail`: the p99 lies in the tail, the median in the body.
std::vector<double> operations(double body, double tail, std::mt19937_64& rng) {
  std::lognormal_distribution<double> jitter(0, 0.05);
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back((i % 50 == 0 ? tail : body) * jitter(rng));
  return v;
}

// A per-operation metric as the core records it: the samples are the repetitions' medians.
MetricResult latency(const std::string& name, double body, double tail, std::mt19937_64& rng,
                     std::size_t repetitions = 5) {
  DistributionRecorder recorder;
  std::vector<double> medians;
  for (std::size_t r = 0; r < repetitions; ++r) {
    medians.push_back(recorder.add_repetition(operations(body, tail, rng)));
  }
  MetricResult m = metric(name, "s", Better::kLower, std::move(medians));
  m.distribution = recorder.finish();
  return m;
}

ojson p99_gate() {
  return ojson::parse(
      R"({"threshold_pct": 25, "metrics": {"h2d_latency": {"statistic": "p99", "threshold_pct": 50}}})");
}

CaseResult serving_case(double tail, std::mt19937_64& rng, const ojson& gate = p99_gate()) {
  CaseResult c =
      make_case(kServing, {latency("h2d_latency", 10e-6, tail, rng),
                           metric("throughput", "requests/s", Better::kHigher, around(9e4, 5))});
  c.timing_method = "host_steady_clock";
  c.gate = gate;
  return c;
}

// Five runs of the serving case, their tails around `tail`.
std::vector<Result> serving_runs(unsigned seed, double tail = 50e-6) {
  std::mt19937_64 rng(seed);
  std::vector<Result> runs;
  for (int i = 0; i < 5; ++i) {
    runs.push_back(make_result({serving_case(tail, rng)}));
    runs.back().start_time = "2026-11-29T13:4" + std::to_string(i) + ":11Z";
  }
  return runs;
}

Baseline baseline_of(const std::vector<Result>& runs) {
  std::vector<std::string> files;
  for (std::size_t i = 0; i < runs.size(); ++i) files.push_back("run" + std::to_string(i + 1));
  return build_baseline(runs, files, {});
}

Result serving_result(unsigned seed, double tail, const ojson& gate = p99_gate()) {
  std::mt19937_64 rng(seed);
  return make_result({serving_case(tail, rng, gate)});
}

// The serving latencies are host-timed (heavy-tailed): these runs of one node are gated only with
// the run and machine minimums lifted, as --min-runs-host 1 --min-machines-host 1 does.
CompareOptions one_node() {
  CompareOptions o;
  o.min_runs_heavy = 1;
  o.min_machines_heavy = 1;
  return o;
}

Comparison gate_serving(const Baseline& b, const Result& r) {
  return compare_results(b, "baseline.json", r, "result.json", one_node());
}

std::string table_of(const Comparison& c) {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&buf, &size);
  print_comparison(c, out, false);
  std::fclose(out);
  std::string text(buf, size);
  std::free(buf);
  return text;
}

TEST(PercentileGate, CatchesAP99RegressionTheMedianDoesNotShow) {
  const Baseline b = baseline_of(serving_runs(1));
  // The tail doubled; the body (and so every repetition's median) did not move.
  const Result slower_tail = serving_result(2, 100e-6);
  const Comparison c = gate_serving(b, slower_tail);
  ASSERT_EQ(c.cases.size(), 1u);
  const MetricComparison* m = find_metric(c.cases.front(), "h2d_latency");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->statistic, "p99");
  EXPECT_EQ(m->verdict, Verdict::kRegression) << m->reason;
  EXPECT_DOUBLE_EQ(m->threshold_pct, 50.0);
  EXPECT_NEAR(m->baseline_median, 50e-6, 5e-6) << "the median of the baseline runs' p99s";
  EXPECT_NEAR(m->result_median, 100e-6, 10e-6);
  EXPECT_NEAR(m->change_pct, 100, 25);
  EXPECT_EQ(m->n_runs, 5u);
  EXPECT_EQ(m->n_baseline, 25u) << "5 runs x 5 per-repetition p99s";
  EXPECT_EQ(m->n_result, 5u);
  EXPECT_TRUE(m->spread_known) << "the spread of the runs' p99s, not of their medians";
  ASSERT_TRUE(m->p_value.has_value());
  EXPECT_LT(*m->p_value, 0.05);
  EXPECT_EQ(c.cases.front().verdict, Verdict::kRegression);
  EXPECT_EQ(c.exit_code, 1);

  // The same result gated on the median (the scenario's gate without the statistic): a pass.
  const Result median_gated = serving_result(
      2, 100e-6, ojson::parse(R"({"threshold_pct": 25, "metrics": {"h2d_latency": 50}})"));
  const Comparison d = gate_serving(b, median_gated);
  const MetricComparison* median = find_metric(d.cases.front(), "h2d_latency");
  ASSERT_NE(median, nullptr);
  EXPECT_EQ(median->statistic, "median");
  EXPECT_EQ(median->verdict, Verdict::kPass) << median->reason;
  EXPECT_LT(std::abs(median->change_pct), 5) << "the median did not see the tail";
  EXPECT_EQ(d.exit_code, 0);
}

TEST(PercentileGate, NoFalseAlarmOnAnUnchangedNode) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const Baseline b = baseline_of(serving_runs(seed));
    const Comparison c = gate_serving(b, serving_result(1000 + seed, 50e-6));
    const MetricComparison* m = find_metric(c.cases.front(), "h2d_latency");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->statistic, "p99");
    EXPECT_EQ(m->verdict, Verdict::kPass) << "seed " << seed << ": " << m->reason;
    EXPECT_EQ(c.exit_code, 0) << "seed " << seed;
  }
}

TEST(PercentileGate, MissingDistributionIsMissingNotAFallbackToTheMedian) {
  const std::string reason_tail =
      " holds no per-operation distribution of it (not a per-operation metric, or written before "
      "distributions were recorded)";
  // The baseline's runs have no distribution of h2d_latency (results written before them).
  std::vector<Result> old_runs = serving_runs(1);
  for (auto& r : old_runs) r.cases[0].metrics[0].distribution.reset();
  const Comparison c = gate_serving(baseline_of(old_runs), serving_result(2, 100e-6));
  const MetricComparison* m = find_metric(c.cases.front(), "h2d_latency");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->verdict, Verdict::kMissing);
  EXPECT_EQ(m->statistic, "p99");
  EXPECT_EQ(m->reason,
            "the gate judges the p99 of h2d_latency, but run 1 of the baseline" + reason_tail);
  EXPECT_EQ(c.cases.front().verdict, Verdict::kMissing);
  EXPECT_EQ(c.exit_code, 2);

  // Only the third run lacks it.
  std::vector<Result> mixed = serving_runs(1);
  mixed[2].cases[0].metrics[0].distribution.reset();
  EXPECT_EQ(find_metric(gate_serving(baseline_of(mixed), serving_result(2, 50e-6)).cases.front(),
                        "h2d_latency")
                ->reason,
            "the gate judges the p99 of h2d_latency, but run 3 of the baseline" + reason_tail);

  // A one-run baseline (a result) without it.
  const Comparison one = run_compare(old_runs[0], serving_result(2, 50e-6));
  EXPECT_EQ(find_metric(one.cases.front(), "h2d_latency")->reason,
            "the gate judges the p99 of h2d_latency, but the baseline" + reason_tail);
  EXPECT_EQ(one.exit_code, 2);

  // The result without it.
  Result plain = serving_result(2, 100e-6);
  plain.cases[0].metrics[0].distribution.reset();
  const Comparison r = gate_serving(baseline_of(serving_runs(1)), plain);
  const MetricComparison* rm = find_metric(r.cases.front(), "h2d_latency");
  EXPECT_EQ(rm->verdict, Verdict::kMissing);
  EXPECT_EQ(rm->reason, "the gate judges the p99 of h2d_latency, but the result" + reason_tail);
  EXPECT_EQ(r.exit_code, 2);
  // The reports name the statistic and say why.
  EXPECT_NE(junit_xml(r).find("h2d_latency (p99): the gate judges the p99"), std::string::npos);
}

TEST(PercentileGate, ReportsNameTheStatistic) {
  const Comparison c = gate_serving(baseline_of(serving_runs(1)), serving_result(2, 100e-6));
  const std::string text = table_of(c);
  EXPECT_NE(text.find("h2d_latency (p99)"), std::string::npos) << text;
  const ojson j = to_json(c);
  const ojson& m = j["cases"][0]["metrics"][0];
  EXPECT_EQ(m["name"], "h2d_latency");
  EXPECT_EQ(m["statistic"], "p99");
  EXPECT_EQ(m["metric_label"], "h2d_latency (p99)");
  EXPECT_EQ(ojson::parse(to_json_text(c)), j);
  const std::string xml = junit_xml(c);
  expect_consistent_junit(xml);
  EXPECT_NE(xml.find("message=\"h2d_latency (p99): regression"), std::string::npos) << xml;

  // A median gate keeps the bare name.
  const Comparison d =
      gate_serving(baseline_of(serving_runs(1)),
                   serving_result(2, 50e-6, ojson::parse(R"({"metrics": {"h2d_latency": 50}})")));
  EXPECT_EQ(to_json(d)["cases"][0]["metrics"][0]["statistic"], "median");
  EXPECT_EQ(to_json(d)["cases"][0]["metrics"][0]["metric_label"], "h2d_latency");
  EXPECT_EQ(table_of(d).find("(p99)"), std::string::npos);
}

TEST(PercentileGate, ReRunsAreJudgedOnTheSameStatistic) {
  const Baseline b = baseline_of(serving_runs(1));
  const Comparison c = gate_serving(b, serving_result(2, 100e-6));
  ASSERT_EQ(suspect_case_ids(c), std::vector<std::string>{kServing});

  Comparison confirmed = c;
  apply_confirmation(confirmed, b, {serving_result(3, 100e-6), serving_result(4, 100e-6)},
                     one_node());
  const MetricComparison& m = confirmed.cases.front().metrics.front();
  EXPECT_EQ(m.verdict, Verdict::kRegression);
  ASSERT_TRUE(m.confirmation);
  EXPECT_EQ(m.confirmation->reproduced, 3u);
  ASSERT_EQ(m.confirmation->rerun_medians.size(), 2u);
  EXPECT_NEAR(m.confirmation->rerun_medians[0], 100e-6, 10e-6) << "the re-run's p99, not median";
  EXPECT_EQ(confirmed.exit_code, 1);

  // Re-runs whose tails are back to normal: flaky, though their medians never moved.
  Comparison flaky = c;
  apply_confirmation(flaky, b, {serving_result(3, 50e-6), serving_result(4, 50e-6)}, one_node());
  EXPECT_EQ(flaky.cases.front().metrics.front().verdict, Verdict::kFlaky);
  EXPECT_EQ(flaky.exit_code, 0);

  // A re-run without the distribution cannot show the tail again: it counts against the node.
  Result plain = serving_result(3, 50e-6);
  plain.cases[0].metrics[0].distribution.reset();
  Comparison lost = c;
  apply_confirmation(lost, b, {plain, serving_result(4, 50e-6)}, one_node());
  const MetricComparison& l = lost.cases.front().metrics.front();
  EXPECT_EQ(l.verdict, Verdict::kRegression);
  ASSERT_TRUE(l.confirmation);
  EXPECT_EQ(l.confirmation->reproduced, 2u);
  ASSERT_EQ(l.confirmation->notes.size(), 1u);
  EXPECT_EQ(l.confirmation->notes[0],
            "re-run 1: the gate judges the p99 of h2d_latency, but the re-run holds no "
            "per-operation distribution of it (not a per-operation metric, or written before "
            "distributions were recorded)");
}

TEST(PercentileGate, BaselineFileKeepsThePerRepetitionStatistics) {
  const std::vector<Result> runs = serving_runs(1);
  const Baseline b = baseline_of(runs);
  const ojson j = to_json(b);
  const ojson& run0 = j["cases"][0]["metrics"]["h2d_latency"]["runs"][0];
  ASSERT_TRUE(run0.contains("per_repetition"));
  EXPECT_EQ(run0["per_repetition"]["p99"],
            ojson(runs[0].cases[0].metrics[0].distribution->repetition_values("p99")));
  EXPECT_FALSE(j["cases"][0]["metrics"]["throughput"]["runs"][0].contains("per_repetition"))
      << "a metric without a distribution writes none";
  EXPECT_EQ(to_json(baseline_from_json(j, "b.json")), j);

  const Result slower_tail = serving_result(2, 100e-6);
  const Comparison from_file = gate_serving(baseline_from_json(j, "b.json"), slower_tail);
  const Comparison in_memory = gate_serving(b, slower_tail);
  EXPECT_EQ(to_json(from_file)["cases"], to_json(in_memory)["cases"]);
  EXPECT_EQ(from_file.exit_code, 1);

  // A file written before per_repetition existed still reads; its p99 gate is missing.
  ojson old = j;
  for (auto& run : old["cases"][0]["metrics"]["h2d_latency"]["runs"]) run.erase("per_repetition");
  const Comparison c = gate_serving(baseline_from_json(old, "old.json"), slower_tail);
  EXPECT_EQ(find_metric(c.cases.front(), "h2d_latency")->verdict, Verdict::kMissing);
  EXPECT_EQ(c.exit_code, 2);

  const auto refusal = [&](const std::string& pointer, const ojson& value) {
    ojson bad = j;
    bad[ojson::json_pointer(pointer)] = value;
    try {
      baseline_from_json(bad, "b.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string at = "/cases/0/metrics/h2d_latency/runs/1/per_repetition";
  EXPECT_EQ(
      refusal(at + "/p99", ojson::array({1e-5, 2e-5})),
      "b.json: " + at + "/p99: 2 values, but the run has 5 samples (one value per repetition)");
  EXPECT_EQ(refusal(at + "/p95", ojson::array({1e-5})),
            "b.json: " + at + "/p95: unknown statistic (one of p50, p90, p99, p99.9, max)");
  EXPECT_EQ(refusal(at + "/max/4", -1), "b.json: " + at + "/max/4: a duration below 0");
  EXPECT_EQ(refusal(at + "/p90/0", "x"), "b.json: " + at + "/p90/0: expected a number");
  EXPECT_EQ(refusal(at, ojson::array()),
            "b.json: " + at + ": expected an object of statistic: per-repetition values");
  ojson without_max = j;
  without_max[ojson::json_pointer(at)].erase("max");
  try {
    baseline_from_json(without_max, "b.json");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "b.json: " + at + "/max: missing");
  }
}

}  // namespace
}  // namespace pathbench::test_compare
