#include <algorithm>
#include <map>

#include "export/compare_report.hpp"
#include "export/compare_report_parts.hpp"

// compare --json: pathbench.compare/v1.

namespace pathbench {

namespace {

using ojson = nlohmann::ordered_json;

ojson opt_json(const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); }

ojson case_json(const CaseComparison& k) {
  ojson metrics = ojson::array();
  for (const auto& m : k.metrics) {
    ojson mj{{"name", m.name},
             {"statistic", m.statistic},
             {"metric_label", metric_label(m)},
             {"unit", m.unit},
             {"better", to_string(m.better)},
             {"verdict", to_string(m.verdict)},
             {"label", verdict_label(m)},
             {"timing_class", to_string(m.timing_class)},
             {"baseline_median", m.baseline_median},
             {"result_median", m.result_median},
             {"change_pct", m.change_pct},
             {"ratio", m.ratio},
             {"threshold_pct", m.threshold_pct},
             {"effective_threshold_pct", m.effective_threshold_pct},
             {"threshold_mode", m.threshold_setting.fixed ? "fixed" : "ceiling"},
             {"threshold_source", to_string(m.threshold_source)},
             {"detectable_change_pct", m.detectable_pct},
             {"false_alarm_per_run", m.false_alarm_per_run},
             {"n_runs", m.n_runs},
             {"spread_pct", m.spread_pct},
             {"spread_known", m.spread_known},
             {"p_between", opt_json(m.p_between)},
             {"p_value", opt_json(m.p_value)},
             {"n_baseline", m.n_baseline},
             {"n_result", m.n_result},
             {"reason", m.reason}};
    if (m.confirmation) {
      const auto& cf = *m.confirmation;
      mj["confirmation"] = ojson{{"reproduced", cf.reproduced},
                                 {"runs", cf.runs},
                                 {"confirmed", cf.confirmed()},
                                 {"rerun_medians", cf.rerun_medians},
                                 {"rerun_changes_pct", cf.rerun_changes_pct},
                                 {"notes", cf.notes}};
    } else {
      mj["confirmation"] = nullptr;
    }
    metrics.push_back(std::move(mj));
  }
  return ojson{{"id", k.id},
               {"family", k.family},
               {"verdict", to_string(k.verdict)},
               {"reason", k.reason},
               {"metrics", std::move(metrics)}};
}

ojson not_gateable_json(const std::string& id, const MetricComparison& m) {
  return ojson{{"id", id},
               {"metric", m.name},
               {"statistic", m.statistic},
               {"metric_label", metric_label(m)},
               {"timing_class", to_string(m.timing_class)},
               {"spread_pct", m.spread_pct},
               {"threshold_pct", m.threshold_pct},
               {"needed_threshold_pct", m.effective_threshold_pct},
               {"n_runs", m.n_runs},
               {"change_pct", m.change_pct},
               {"reason", m.reason}};
}

// Everything but the elements of "cases" and "not_gateable" (there, empty arrays), in order.
ojson head_json(const Comparison& c) {
  auto ref = [](const ResultRef& r) {
    return ojson{{"file", r.file},
                 {"node_type", r.node_type},
                 {"topology_fingerprint", r.topology_fingerprint},
                 {"hostname", r.hostname},
                 {"start_time", r.start_time},
                 {"complete", r.incomplete.empty()},
                 {"incomplete_reason", r.incomplete}};
  };
  ojson j;
  j["schema"] = kCompareSchema;
  j["mode"] = c.floors_only ? "floors" : c.across ? "across" : "gate";
  if (!c.floors_only) {
    j["baseline"] = ref(c.baseline);
    j["baseline"]["runs"] = c.baseline.runs;
  }
  j["result"] = ref(c.result);
  j["alpha"] = c.alpha;
  j["k"] = c.k;
  j["default_threshold"] = c.default_threshold_pct / 100;
  j["default_threshold_pct"] = c.default_threshold_pct;
  j["exit_code"] = c.exit_code;
  ojson changes = ojson::array();
  for (const auto& ch : c.changes) {
    changes.push_back(ojson{{"field", ch.field},
                            {"label", ch.label},
                            {"baseline", ch.baseline},
                            {"result", ch.result},
                            {"note", ch.note},
                            {"text", ch.text()}});
  }
  j["changes"] = changes;
  j["noise"] = c.noise;
  j["allow_noisy"] = c.allow_noisy;
  j["incomparable"] = c.incomparable;
  std::map<Verdict, std::size_t> counts;
  for (const auto& k : c.cases) ++counts[k.verdict];
  ojson summary = ojson::object();
  for (auto v : {Verdict::kPass, Verdict::kRegression, Verdict::kImprovement, Verdict::kNoise,
                 Verdict::kMissing, Verdict::kNew, Verdict::kSkipped, Verdict::kFailed,
                 Verdict::kAcross, Verdict::kUnstable, Verdict::kFlaky, Verdict::kInsufficient}) {
    summary[std::string(to_string(v))] = static_cast<std::ptrdiff_t>(counts[v]);
  }
  j["summary"] = summary;
  j["cases"] = ojson::array();
  j["not_gateable"] = ojson::array();
  ojson floors = ojson::array();
  for (const auto& f : c.floors) floors.push_back(to_json(f));
  j["floors"] = floors;
  return j;
}

// Replaces the empty array of top-level `key` in `text` (a dump(2)) with `count` elements, each
// dumped on its own and indented as dump(2) would have indented it there.
template <typename Element>
std::string splice_array(std::string text, const std::string& key, std::size_t count,
                         const Element& element) {
  const std::string placeholder = "\n  \"" + key + "\": []";
  const std::size_t at = text.find(placeholder);
  if (count == 0 || at == std::string::npos) return text;
  const std::size_t open = at + placeholder.size() - 2;  // the "[]"
  std::string out;
  // Room for it all at once: the size of a few elements, scaled up (one more allocation at
  // most when the sample was small).
  std::size_t sampled = 0, sample_bytes = 0;
  for (std::size_t i = 0; i < count; i += std::max<std::size_t>(1, count / 32), ++sampled) {
    sample_bytes += element(i).dump(2).size() + 8;
  }
  out.reserve(text.size() + sample_bytes / sampled * count * 11 / 10 + 64);
  out.append(text, 0, open);
  out += '[';
  for (std::size_t i = 0; i < count; ++i) {
    out += i == 0 ? "\n    " : ",\n    ";
    const std::string dumped = element(i).dump(2);
    for (const char ch : dumped) {
      out += ch;
      if (ch == '\n') out += "    ";  // two levels deeper than the element's own dump
    }
  }
  out += "\n  ]";
  out.append(text, open + 2, std::string::npos);
  return out;
}

}  // namespace

nlohmann::ordered_json to_json(const Comparison& c) {
  ojson j = head_json(c);
  ojson& cases = j["cases"];
  for (const auto& k : c.cases) cases.push_back(case_json(k));
  std::vector<std::string> ids;
  const auto unstable = not_gateable(c, &ids);
  ojson& ng = j["not_gateable"];
  for (std::size_t i = 0; i < unstable.size(); ++i)
    ng.push_back(not_gateable_json(ids[i], *unstable[i]));
  return j;
}

std::string to_json_text(const Comparison& c) {
  std::vector<std::string> ids;
  const auto unstable = not_gateable(c, &ids);
  // The elements one at a time: never the whole comparison as one document in memory. The
  // cases last, so that their text (the bulk) is not copied again.
  std::string text =
      splice_array(head_json(c).dump(2), "not_gateable", unstable.size(),
                   [&](std::size_t i) { return not_gateable_json(ids[i], *unstable[i]); });
  text = splice_array(std::move(text), "cases", c.cases.size(),
                      [&](std::size_t i) { return case_json(c.cases[i]); });
  text += '\n';
  return text;
}

}  // namespace pathbench
