#include "compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "compare/mann_whitney.hpp"
#include "core/units.hpp"
#include "inventory/fingerprint.hpp"
#include "inventory/inventory.hpp"

namespace pathbench {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kRegression:
      return "regression";
    case Verdict::kImprovement:
      return "improvement";
    case Verdict::kNoise:
      return "noise";
    case Verdict::kMissing:
      return "missing";
    case Verdict::kNew:
      return "new";
    case Verdict::kSkipped:
      return "skipped";
    case Verdict::kFailed:
      return "failed";
    case Verdict::kAcross:
      return "across";
  }
  return "unknown";
}

int severity(Verdict v) {
  switch (v) {
    case Verdict::kFailed:
      return 8;
    case Verdict::kRegression:
      return 7;
    case Verdict::kMissing:
      return 6;
    case Verdict::kNoise:
      return 5;
    case Verdict::kSkipped:
      return 4;
    case Verdict::kNew:
      return 3;
    case Verdict::kImprovement:
      return 2;
    case Verdict::kAcross:
      return 1;
    case Verdict::kPass:
      return 0;
  }
  return 0;
}

namespace {

std::string context_string(const Result& r, const char* key) {
  const auto it = r.context.find(key);
  return it != r.context.end() && it->is_string() ? it->get<std::string>() : std::string();
}

ResultRef ref_of(const Result& r, const std::string& file) {
  return {file, context_string(r, "node_type"), context_string(r, "topology_fingerprint"),
          context_string(r, "hostname"), r.start_time};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The canonical topology text behind a result's fingerprint, when its context can be read back.
std::optional<std::vector<std::string>> topology_lines(const Result& r) {
  try {
    return lines_of(topology_canonical_text(inventory_from_json(nlohmann::json(r.context))));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

const MetricResult* find_metric(const CaseResult& c, const std::string& name) {
  for (const auto& m : c.metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// The gate block that applies: the new result's (its scenario may have been tuned), else the
// baseline's.
const nlohmann::ordered_json& gate_of(const CaseResult& baseline, const CaseResult& result) {
  return result.gate.is_object() ? result.gate : baseline.gate;
}

double threshold_for(const nlohmann::ordered_json& gate, const std::string& metric,
                     double default_pct) {
  if (!gate.is_object()) return default_pct;
  if (const auto m = gate.find("metrics"); m != gate.end() && m->contains(metric)) {
    return m->at(metric).get<double>();
  }
  if (const auto t = gate.find("threshold_pct"); t != gate.end()) return t->get<double>();
  return default_pct;
}

// The headline metric is always gated; a gate block can add others by naming them.
std::vector<std::string> gated_metrics(const CaseResult& baseline, const CaseResult& result) {
  std::vector<std::string> names;
  if (!baseline.metrics.empty()) names.push_back(baseline.metrics.front().name);
  const auto& gate = gate_of(baseline, result);
  if (gate.is_object()) {
    if (const auto m = gate.find("metrics"); m != gate.end()) {
      for (const auto& [name, pct] : m->items()) {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    }
  }
  return names;
}

MetricComparison compare_metric(const MetricResult& b, const MetricResult& r, double threshold_pct,
                                const CompareOptions& options) {
  MetricComparison m;
  m.name = b.name;
  m.unit = b.unit;
  m.better = b.better;
  m.baseline_median = b.stats.median;
  m.result_median = r.stats.median;
  m.n_baseline = b.samples.size();
  m.n_result = r.samples.size();
  m.threshold_pct = threshold_pct;
  m.ratio = b.stats.median != 0 ? r.stats.median / b.stats.median : 0;
  m.change_pct = b.stats.median != 0 ? (m.ratio - 1) * 100 : 0;
  if (options.across) {
    m.verdict = Verdict::kAcross;
    return m;
  }
  const bool bad_direction = b.better == Better::kHigher ? m.change_pct < 0 : m.change_pct > 0;
  const bool beyond_threshold = std::abs(m.change_pct) > threshold_pct;
  if (m.n_baseline < options.min_samples || m.n_result < options.min_samples) {
    m.verdict = beyond_threshold ? Verdict::kNoise : Verdict::kPass;
    m.reason = "no statistical verdict: " + std::to_string(m.n_baseline) + " and " +
               std::to_string(m.n_result) + " samples (at least " +
               std::to_string(options.min_samples) + " on each side are needed)";
    return m;
  }
  const MannWhitneyResult test = mann_whitney_u(b.samples, r.samples);
  m.p_value = test.p_value;
  if (!beyond_threshold) {
    m.verdict = Verdict::kPass;
  } else if (test.p_value >= options.alpha) {
    m.verdict = Verdict::kNoise;
    char why[160];
    std::snprintf(why, sizeof why,
                  "median moved %.2f %% but the samples do not differ significantly (p = %.3g >= "
                  "%.3g)",
                  m.change_pct, test.p_value, options.alpha);
    m.reason = why;
  } else {
    m.verdict = bad_direction ? Verdict::kRegression : Verdict::kImprovement;
  }
  return m;
}

CaseComparison compare_case(const CaseResult& b, const CaseResult& r,
                            const CompareOptions& options) {
  CaseComparison c{r.id, r.family, Verdict::kPass, "", {}};
  if (r.status == CaseStatus::kFailed) {
    c.verdict = Verdict::kFailed;
    c.reason = r.reason;
    return c;
  }
  if (b.status == CaseStatus::kOk && r.status == CaseStatus::kSkipped) {
    // Measured before, not now (a driver that no longer loads, a lost NUMA node): the gate must
    // not pass on what it could not measure.
    c.verdict = Verdict::kMissing;
    c.reason = "ran in the baseline, skipped in the result: " + r.reason;
    return c;
  }
  if (b.status != CaseStatus::kOk || r.status != CaseStatus::kOk) {
    c.verdict = Verdict::kSkipped;
    c.reason = r.status != CaseStatus::kOk        ? "skipped in the result: " + r.reason
               : b.status == CaseStatus::kSkipped ? "skipped in the baseline: " + b.reason
                                                  : "failed in the baseline: " + b.reason;
    return c;
  }
  const auto& gate = gate_of(b, r);
  for (const auto& name : gated_metrics(b, r)) {
    const MetricResult* bm = find_metric(b, name);
    const MetricResult* rm = find_metric(r, name);
    if (bm == nullptr || rm == nullptr) {
      MetricComparison m;
      m.name = name;
      m.verdict = Verdict::kMissing;
      m.reason = std::string("metric absent from the ") + (bm ? "result" : "baseline");
      c.metrics.push_back(std::move(m));
      continue;
    }
    c.metrics.push_back(compare_metric(
        *bm, *rm, threshold_for(gate, name, options.default_threshold_pct), options));
  }
  for (const auto& m : c.metrics) {
    if (severity(m.verdict) > severity(c.verdict)) {
      c.verdict = m.verdict;
      c.reason = m.reason;
    }
  }
  if (options.across && c.verdict != Verdict::kFailed) c.verdict = Verdict::kAcross;
  return c;
}

void sort_worst_first(std::vector<CaseComparison>& cases) {
  std::stable_sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) {
    if (severity(a.verdict) != severity(b.verdict))
      return severity(a.verdict) > severity(b.verdict);
    const double ca = a.metrics.empty() ? 0 : a.metrics.front().change_pct;
    const double cb = b.metrics.empty() ? 0 : b.metrics.front().change_pct;
    return std::abs(ca) > std::abs(cb);
  });
}

int exit_code_of(const Comparison& c) {
  bool failing = false, incomplete = !c.incomparable.empty();
  for (const auto& k : c.cases) {
    if (k.verdict == Verdict::kRegression || k.verdict == Verdict::kFailed) failing = true;
    if (k.verdict == Verdict::kMissing) incomplete = true;
  }
  for (const auto& f : c.floors) {
    if (is_failure(f.verdict)) failing = true;
  }
  if (failing) return 1;
  return incomplete ? 2 : 0;
}

}  // namespace

std::vector<std::string> identity_differences(const Result& baseline, const Result& result) {
  std::vector<std::string> diffs;
  const std::string bt = context_string(baseline, "node_type");
  const std::string rt = context_string(result, "node_type");
  if (bt != rt) diffs.push_back("node_type: \"" + bt + "\" vs \"" + rt + "\"");
  if (context_string(baseline, "topology_fingerprint") ==
      context_string(result, "topology_fingerprint")) {
    return diffs;
  }
  const auto bl = topology_lines(baseline);
  const auto rl = topology_lines(result);
  if (!bl || !rl) {
    diffs.push_back("topology_fingerprint differs");
    return diffs;
  }
  const std::set<std::string> bs(bl->begin(), bl->end()), rs(rl->begin(), rl->end());
  for (const auto& line : *bl) {
    if (!rs.contains(line)) diffs.push_back("topology: baseline has \"" + line + "\"");
  }
  for (const auto& line : *rl) {
    if (!bs.contains(line)) diffs.push_back("topology: result has \"" + line + "\"");
  }
  if (diffs.empty()) diffs.push_back("topology_fingerprint differs");
  return diffs;
}

Comparison compare_results(const Result& baseline, const std::string& baseline_file,
                           const Result& result, const std::string& result_file,
                           const CompareOptions& options) {
  Comparison c;
  c.across = options.across;
  c.baseline = ref_of(baseline, baseline_file);
  c.result = ref_of(result, result_file);
  c.alpha = options.alpha;
  c.default_threshold_pct = options.default_threshold_pct;
  c.floors = check_floors(result, options.floors);
  if (!options.across) c.incomparable = identity_differences(baseline, result);
  if (!c.incomparable.empty()) {
    c.exit_code = exit_code_of(c);  // a floor not met still fails (1) before incomparable (2)
    return c;
  }
  std::map<std::string, const CaseResult*> by_id;
  for (const auto& r : result.cases) by_id[r.id] = &r;
  std::set<std::string> seen;
  for (const auto& b : baseline.cases) {
    seen.insert(b.id);
    const auto it = by_id.find(b.id);
    if (it == by_id.end()) {
      c.cases.push_back({b.id, b.family, Verdict::kMissing, "not in the result", {}});
      continue;
    }
    c.cases.push_back(compare_case(b, *it->second, options));
  }
  for (const auto& r : result.cases) {
    if (seen.contains(r.id)) continue;
    if (r.status == CaseStatus::kFailed) {
      c.cases.push_back({r.id, r.family, Verdict::kFailed, r.reason, {}});
    } else {
      c.cases.push_back({r.id, r.family, Verdict::kNew, "not in the baseline", {}});
    }
  }
  sort_worst_first(c.cases);
  if (options.across) {
    const bool failed = std::any_of(c.cases.begin(), c.cases.end(),
                                    [](const auto& k) { return k.verdict == Verdict::kFailed; });
    c.exit_code = failed ? 1 : c.cases.empty() ? 2 : 0;
  } else {
    c.exit_code = exit_code_of(c);
  }
  return c;
}

Comparison check_result_floors(const Result& result, const std::string& result_file,
                               const CompareOptions& options) {
  Comparison c;
  c.floors_only = true;
  c.result = ref_of(result, result_file);
  c.alpha = options.alpha;
  c.default_threshold_pct = options.default_threshold_pct;
  c.floors = check_floors(result, options.floors);
  for (const auto& r : result.cases) {
    if (r.status == CaseStatus::kFailed) {
      c.cases.push_back({r.id, r.family, Verdict::kFailed, r.reason, {}});
    }
  }
  c.exit_code = exit_code_of(c);
  return c;
}

nlohmann::ordered_json to_json(const Comparison& c) {
  using ojson = nlohmann::ordered_json;
  auto ref = [](const ResultRef& r) {
    return ojson{{"file", r.file},
                 {"node_type", r.node_type},
                 {"topology_fingerprint", r.topology_fingerprint},
                 {"hostname", r.hostname},
                 {"start_time", r.start_time}};
  };
  ojson j;
  j["schema"] = kCompareSchema;
  j["mode"] = c.floors_only ? "floors" : c.across ? "across" : "gate";
  if (!c.floors_only) j["baseline"] = ref(c.baseline);
  j["result"] = ref(c.result);
  j["alpha"] = c.alpha;
  j["default_threshold"] = c.default_threshold_pct / 100;
  j["default_threshold_pct"] = c.default_threshold_pct;
  j["exit_code"] = c.exit_code;
  j["incomparable"] = c.incomparable;
  ojson summary = ojson::object();
  for (auto v :
       {Verdict::kPass, Verdict::kRegression, Verdict::kImprovement, Verdict::kNoise,
        Verdict::kMissing, Verdict::kNew, Verdict::kSkipped, Verdict::kFailed, Verdict::kAcross}) {
    summary[std::string(to_string(v))] = std::count_if(
        c.cases.begin(), c.cases.end(), [&](const CaseComparison& k) { return k.verdict == v; });
  }
  j["summary"] = summary;
  ojson cases = ojson::array();
  for (const auto& k : c.cases) {
    ojson metrics = ojson::array();
    for (const auto& m : k.metrics) {
      metrics.push_back(ojson{{"name", m.name},
                              {"unit", m.unit},
                              {"better", to_string(m.better)},
                              {"verdict", to_string(m.verdict)},
                              {"baseline_median", m.baseline_median},
                              {"result_median", m.result_median},
                              {"change_pct", m.change_pct},
                              {"ratio", m.ratio},
                              {"threshold_pct", m.threshold_pct},
                              {"p_value", m.p_value ? ojson(*m.p_value) : ojson(nullptr)},
                              {"n_baseline", m.n_baseline},
                              {"n_result", m.n_result},
                              {"reason", m.reason}});
    }
    cases.push_back(ojson{{"id", k.id},
                          {"family", k.family},
                          {"verdict", to_string(k.verdict)},
                          {"reason", k.reason},
                          {"metrics", metrics}});
  }
  j["cases"] = cases;
  ojson floors = ojson::array();
  for (const auto& f : c.floors) floors.push_back(to_json(f));
  j["floors"] = floors;
  return j;
}

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters even when escaped.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') {
          out += '?';
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string describe_metric(const MetricComparison& m) {
  char buf[256];
  if (m.verdict == Verdict::kMissing) return m.name + ": " + m.reason;
  std::snprintf(buf, sizeof buf, "%s: %s -> %s (%+.2f %%, threshold %.1f %%, p = %s, n = %zu/%zu)",
                m.name.c_str(), format_value(m.baseline_median, m.unit).c_str(),
                format_value(m.result_median, m.unit).c_str(), m.change_pct, m.threshold_pct,
                m.p_value ? ([&] {
                              char p[32];
                              std::snprintf(p, sizeof p, "%.3g", *m.p_value);
                              return std::string(p);
                            }())
                                .c_str()
                          : "n/a",
                m.n_baseline, m.n_result);
  return buf;
}

}  // namespace

std::string junit_xml(const Comparison& c) {
  std::size_t failures = 0, errors = 0, skipped = 0;
  std::ostringstream body;
  for (const auto& k : c.cases) {
    body << "    <testcase classname=\"pathbench." << xml_escape(k.family) << "\" name=\""
         << xml_escape(k.id) << "\">\n";
    std::string text;
    for (const auto& m : k.metrics) text += describe_metric(m) + "\n";
    if (!k.reason.empty()) text += k.reason + "\n";
    switch (k.verdict) {
      case Verdict::kRegression:
      case Verdict::kFailed:
        ++failures;
        body << "      <failure type=\"" << to_string(k.verdict) << "\" message=\""
             << xml_escape(k.reason.empty() ? std::string(to_string(k.verdict)) : k.reason) << "\">"
             << xml_escape(text) << "</failure>\n";
        break;
      case Verdict::kMissing:
        ++errors;
        body << "      <error type=\"missing\" message=\"case missing from the result\">"
             << xml_escape(text) << "</error>\n";
        break;
      case Verdict::kSkipped:
        ++skipped;
        body << "      <skipped message=\"" << xml_escape(k.reason) << "\"/>\n";
        break;
      default:
        if (!text.empty()) body << "      <system-out>" << xml_escape(text) << "</system-out>\n";
    }
    body << "    </testcase>\n";
  }
  for (const auto& f : c.floors) {
    body << "    <testcase classname=\"pathbench.floors\" name=\"" << xml_escape(f.id) << "\">\n";
    if (is_failure(f.verdict)) {
      ++failures;
      body << "      <failure type=\"" << to_string(f.verdict) << "\" message=\""
           << xml_escape(f.detail) << "\"/>\n";
    } else if (f.verdict == FloorVerdict::kUnknownLink) {
      ++skipped;
      body << "      <skipped message=\"" << xml_escape(f.detail) << "\"/>\n";
    } else {
      body << "      <system-out>" << xml_escape(f.detail) << "</system-out>\n";
    }
    body << "    </testcase>\n";
  }
  if (!c.incomparable.empty()) {
    ++errors;
    std::string text;
    for (const auto& d : c.incomparable) text += d + "\n";
    body << "    <testcase classname=\"pathbench.compare\" name=\"comparable\">\n"
         << "      <error type=\"incomparable\" message=\"results are from different node types "
            "or topologies\">"
         << xml_escape(text) << "</error>\n    </testcase>\n";
  }
  const std::size_t tests = c.cases.size() + c.floors.size() + (c.incomparable.empty() ? 0 : 1);
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"pathbench\" tests=\"" << tests << "\" failures=\"" << failures
      << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\">\n"
      << "  <testsuite name=\"pathbench compare " << xml_escape(c.result.node_type) << "\" tests=\""
      << tests << "\" failures=\"" << failures << "\" errors=\"" << errors << "\" skipped=\""
      << skipped << "\">\n"
      << body.str() << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

void print_comparison(const Comparison& c, std::FILE* out, bool color) {
  auto paint = [&](Verdict v) -> const char* {
    if (!color) return "";
    switch (v) {
      case Verdict::kRegression:
      case Verdict::kFailed:
        return "\033[31m";
      case Verdict::kMissing:
      case Verdict::kNoise:
        return "\033[33m";
      case Verdict::kImprovement:
        return "\033[32m";
      default:
        return "";
    }
  };
  const char* reset = color ? "\033[0m" : "";
  if (!c.floors_only) {
    std::fprintf(out, "baseline: %s (%s, %s)\nresult:   %s (%s, %s)\n", c.baseline.file.c_str(),
                 c.baseline.node_type.c_str(), c.baseline.start_time.c_str(), c.result.file.c_str(),
                 c.result.node_type.c_str(), c.result.start_time.c_str());
  }
  for (const auto& d : c.incomparable) std::fprintf(out, "incomparable: %s\n", d.c_str());
  if (!c.incomparable.empty()) {
    std::fprintf(out,
                 "the results come from different node types or topologies; pass --across to "
                 "see ratios instead of verdicts\n");
  }
  if (!c.cases.empty()) {
    if (c.across) {
      std::fprintf(out, "%-12s  %-14s  %14s  %14s  %8s  %s\n", "verdict", "metric", "baseline",
                   "result", "ratio", "case");
    } else {
      std::fprintf(out, "%-12s  %-14s  %14s  %14s  %9s  %9s  %9s  %s\n", "verdict", "metric",
                   "baseline", "result", "change", "threshold", "p", "case");
    }
  }
  // Skips are usually the same on both sides (no GPU, one NUMA node): one line per reason.
  std::map<std::string, std::size_t> skip_reasons;
  for (const auto& k : c.cases) {
    if (k.verdict == Verdict::kSkipped) {
      ++skip_reasons[k.reason];
      continue;
    }
    if (k.metrics.empty()) {
      std::fprintf(out, "%s%-12s%s  %-14s  %s  (%s)\n", paint(k.verdict),
                   std::string(to_string(k.verdict)).c_str(), reset, "", k.id.c_str(),
                   k.reason.c_str());
      continue;
    }
    for (const auto& m : k.metrics) {
      if (c.across) {
        std::fprintf(out, "%-12s  %-14s  %14s  %14s  %8.3f  %s\n", "", m.name.c_str(),
                     format_value(m.baseline_median, m.unit).c_str(),
                     format_value(m.result_median, m.unit).c_str(), m.ratio, k.id.c_str());
        continue;
      }
      char p[16] = "n/a";
      if (m.p_value) std::snprintf(p, sizeof p, "%.2g", *m.p_value);
      std::fprintf(out, "%s%-12s%s  %-14s  %14s  %14s  %+8.2f%%  %8.1f%%  %9s  %s\n",
                   paint(m.verdict), std::string(to_string(m.verdict)).c_str(), reset,
                   m.name.c_str(), format_value(m.baseline_median, m.unit).c_str(),
                   format_value(m.result_median, m.unit).c_str(), m.change_pct, m.threshold_pct, p,
                   k.id.c_str());
      if (!m.reason.empty() && m.verdict != Verdict::kPass) {
        std::fprintf(out, "              %s\n", m.reason.c_str());
      }
    }
  }
  for (const auto& [reason, n] : skip_reasons) {
    std::fprintf(out, "%-12s  %zu case%s: %s\n", "skipped", n, n == 1 ? "" : "s", reason.c_str());
  }
  for (const auto& f : c.floors) {
    const bool bad = is_failure(f.verdict);
    std::fprintf(out, "%sfloor %-13s%s %s: %s\n", bad && color ? "\033[31m" : "",
                 std::string(to_string(f.verdict)).c_str(), reset, f.id.c_str(), f.detail.c_str());
  }
  std::map<Verdict, std::size_t> counts;
  for (const auto& k : c.cases) ++counts[k.verdict];
  std::string summary;
  for (const auto& [v, n] : counts) {
    summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(to_string(v));
  }
  std::fprintf(out, "%zu cases%s%s; exit %d\n", c.cases.size(), summary.empty() ? "" : ": ",
               summary.c_str(), c.exit_code);
}

}  // namespace pathbench
