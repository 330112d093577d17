#include <cmath>
#include <set>

#include "compare/baseline.hpp"
#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "result/gate_block.hpp"
#include "stats/operation_distribution.hpp"

// The baseline file (pathbench.baseline/v1): writing it, and reading it back naming the JSON
// pointer of whatever is wrong.

namespace pathbench {

using ojson = nlohmann::ordered_json;

ojson to_json(const Baseline& b) {
  ojson j;
  j["schema"] = kBaselineSchema;
  j["node_type"] = b.node_type;
  j["topology_fingerprint"] = b.topology_fingerprint;
  j["created"] = b.created;
  ojson runs = ojson::array();
  for (std::size_t i = 0; i < b.runs.size(); ++i) {
    const auto& r = b.runs[i];
    runs.push_back(
        ojson{{"file", r.file},
              {"hostname", r.hostname},
              {"start_time", r.start_time},
              {"end_time", r.end_time},
              {"git_sha", r.git_sha},
              {"context", i < b.run_contexts.size() ? b.run_contexts[i].to_json() : ojson()}});
  }
  j["runs"] = runs;
  j["context"] = b.context.to_json();
  ojson cases = ojson::array();
  for (const auto& c : b.cases) {
    ojson metrics = ojson::object();
    for (const auto& m : c.metrics) {
      ojson mruns = ojson::array();
      for (const auto& r : m.runs) {
        ojson run{{"median", r.median}, {"samples", r.samples}};
        // A per-operation metric's statistics per repetition: what a gate entry with a
        // statistic judges (absent for other metrics, and in files written before them).
        if (r.per_repetition.size() == kDistributionStatistics.size()) {
          ojson per = ojson::object();
          for (std::size_t k = 0; k < kDistributionStatistics.size(); ++k) {
            per[std::string(kDistributionStatistics[k].name)] = r.per_repetition[k];
          }
          run["per_repetition"] = std::move(per);
        }
        mruns.push_back(std::move(run));
      }
      metrics[m.name] =
          ojson{{"unit", m.unit},
                {"better", to_string(m.better)},
                {"timing_class", to_string(m.timing_class)},
                {"between_run",
                 {{"n_runs", m.between.n_runs},
                  {"center", m.between.center},
                  {"spread", m.between.known ? ojson(m.between.spread) : ojson()},
                  {"spread_mad", m.between.known ? ojson(m.between.spread_mad) : ojson()},
                  {"spread_sd", m.between.known ? ojson(m.between.spread_sd) : ojson()},
                  {"spread_pct", m.between.known ? ojson(m.between.spread_pct) : ojson()}}},
                {"runs", mruns}};
    }
    cases.push_back(
        ojson{{"id", c.id},
              {"scenario", c.scenario},
              {"family", c.family},
              {"params", c.params},
              {"timing_method", c.timing_method.empty() ? ojson() : ojson(c.timing_method)},
              {"status", to_string(c.status)},
              {"reason", c.reason},
              {"gate", c.gate},
              {"metrics", metrics}});
  }
  j["cases"] = cases;
  return j;
}

namespace {

// Reads a baseline document, naming the JSON pointer of whatever is wrong.
class BaselineReader {
 public:
  explicit BaselineReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& at, const std::string& what) const {
    throw InputError(file_, at, what);
  }
  const ojson& field(const ojson& obj, const std::string& at, const char* key) const {
    if (!obj.is_object()) fail(at, "expected an object");
    const auto it = obj.find(key);
    if (it == obj.end()) fail(at + "/" + key, "missing");
    return *it;
  }
  std::string text(const ojson& obj, const std::string& at, const char* key) const {
    const ojson& v = field(obj, at, key);
    if (v.is_null()) return {};
    if (!v.is_string()) fail(at + "/" + key, "expected a string");
    return v.get<std::string>();
  }
  double number(const ojson& v, const std::string& at) const {
    if (!v.is_number()) fail(at, "expected a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(at, "not a finite number");
    return d;
  }
  const ojson& array(const ojson& obj, const std::string& at, const char* key) const {
    const ojson& v = field(obj, at, key);
    if (!v.is_array()) fail(at + "/" + key, "expected an array");
    return v;
  }

  // {"p50": [...], ..., "max": [...]}: every statistic of kDistributionStatistics, nothing else,
  // each one value per repetition (as many as the run's samples), finite and >= 0.
  std::vector<std::vector<double>> per_repetition(const ojson& v, const std::string& at,
                                                  std::size_t repetitions) const {
    if (!v.is_object()) fail(at, "expected an object of statistic: per-repetition values");
    for (const auto& [key, values] : v.items()) {
      if (!distribution_statistic_index(key)) {
        fail(at + "/" + pointer_token(key),
             "unknown statistic (one of " + distribution_statistic_names() + ")");
      }
    }
    std::vector<std::vector<double>> out;
    for (const auto& statistic : kDistributionStatistics) {
      const std::string key(statistic.name);
      const std::string sat = at + "/" + key;
      const auto it = v.find(key);
      if (it == v.end()) fail(sat, "missing");
      if (!it->is_array()) fail(sat, "expected an array");
      if (it->size() != repetitions) {
        fail(sat, std::to_string(it->size()) + " values, but the run has " +
                      std::to_string(repetitions) + " samples (one value per repetition)");
      }
      std::vector<double>& values = out.emplace_back();
      for (std::size_t i = 0; i < it->size(); ++i) {
        const double x = number((*it)[i], sat + "/" + std::to_string(i));
        if (x < 0) fail(sat + "/" + std::to_string(i), "a duration below 0");
        values.push_back(x);
      }
    }
    return out;
  }

  Baseline read(const ojson& j) const {
    if (!j.is_object()) fail("", "expected a JSON object");
    const std::string schema = text(j, "", "schema");
    if (schema != kBaselineSchema) {
      fail("/schema", "\"" + schema + "\" is not " + kBaselineSchema);
    }
    Baseline b;
    b.node_type = text(j, "", "node_type");
    b.topology_fingerprint = text(j, "", "topology_fingerprint");
    b.created = text(j, "", "created");
    const ojson& runs = array(j, "", "runs");
    if (runs.empty()) fail("/runs", "a baseline holds at least one run");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::string at = "/runs/" + std::to_string(i);
      const ojson& r = runs[i];
      b.runs.push_back({text(r, at, "file"), text(r, at, "hostname"), text(r, at, "start_time"),
                        text(r, at, "end_time"), text(r, at, "git_sha")});
      const ojson& ctx = field(r, at, "context");
      if (!ctx.is_object()) fail(at + "/context", "expected an object");
      b.run_contexts.push_back(RunContext::from_json(ctx, file_, at + "/context"));
    }
    const ojson& ctx = field(j, "", "context");
    if (!ctx.is_object()) fail("/context", "expected an object");
    b.context = RunContext::from_json(ctx, file_, "/context");
    const ojson& cases = array(j, "", "cases");
    std::set<std::string> ids;
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const std::string at = "/cases/" + std::to_string(k);
      const ojson& c = cases[k];
      BaselineCase bc;
      bc.id = text(c, at, "id");
      if (bc.id.empty()) fail(at + "/id", "empty case id");
      if (!ids.insert(bc.id).second) fail(at + "/id", "case " + bc.id + " appears twice");
      bc.scenario = text(c, at, "scenario");
      bc.family = text(c, at, "family");
      bc.params = field(c, at, "params");
      bc.timing_method = text(c, at, "timing_method");
      const auto status = parse_case_status(text(c, at, "status"));
      if (!status || *status == CaseStatus::kFailed) {
        fail(at + "/status", "expected \"ok\" or \"skipped\"");
      }
      bc.status = *status;
      bc.reason = text(c, at, "reason");
      bc.gate = field(c, at, "gate");
      // null: no gate block; else checked as a scenario's or a result's (one checker).
      if (!bc.gate.is_null()) check_gate_block(bc.gate, file_, at + "/gate");
      const ojson& metrics = field(c, at, "metrics");
      if (!metrics.is_object()) fail(at + "/metrics", "expected an object");
      for (const auto& [name, m] : metrics.items()) {
        const std::string mat = at + "/metrics/" + name;
        BaselineMetric bm;
        bm.name = name;
        bm.unit = text(m, mat, "unit");
        const auto better = parse_better(text(m, mat, "better"));
        if (!better) fail(mat + "/better", "expected \"higher\" or \"lower\"");
        bm.better = *better;
        const auto cls = parse_timing_class(text(m, mat, "timing_class"));
        if (!cls) fail(mat + "/timing_class", "expected \"device\" or \"host\"");
        bm.timing_class = *cls;
        const ojson& mruns = array(m, mat, "runs");
        if (mruns.size() != b.runs.size()) {
          fail(mat + "/runs", std::to_string(mruns.size()) + " runs, but the baseline has " +
                                  std::to_string(b.runs.size()));
        }
        for (std::size_t r = 0; r < mruns.size(); ++r) {
          const std::string rat = mat + "/runs/" + std::to_string(r);
          BaselineRun run;
          run.median = number(field(mruns[r], rat, "median"), rat + "/median");
          const ojson& samples = array(mruns[r], rat, "samples");
          for (std::size_t s = 0; s < samples.size(); ++s) {
            run.samples.push_back(number(samples[s], rat + "/samples/" + std::to_string(s)));
          }
          if (run.samples.empty()) fail(rat + "/samples", "no samples");
          if (const auto per = mruns[r].find("per_repetition"); per != mruns[r].end()) {
            run.per_repetition = per_repetition(*per, rat + "/per_repetition", run.samples.size());
          }
          bm.runs.push_back(std::move(run));
        }
        bm.between = between_run_of(bm.runs);  // recomputed: the file's copy is for readers
        bc.metrics.push_back(std::move(bm));
      }
      b.cases.push_back(std::move(bc));
    }
    return b;
  }

 private:
  std::string file_;
};

}  // namespace

Baseline baseline_from_json(const ojson& j, const std::string& file) {
  return BaselineReader(file).read(j);
}

void save_baseline(const std::filesystem::path& path, const Baseline& b) {
  write_file_atomically(path,
                        to_json(b).dump(2, ' ', false, ojson::error_handler_t::replace) + "\n");
}

}  // namespace pathbench
