#include "compare/baseline.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "compare/run_noise.hpp"
#include "core/units.hpp"
#include "stats/operation_distribution.hpp"
#include "stats/robust.hpp"
#include "stats/summary.hpp"

namespace pathbench {

using ojson = nlohmann::ordered_json;

std::string_view to_string(TimingClass c) { return c == TimingClass::kDevice ? "device" : "host"; }

std::optional<TimingClass> parse_timing_class(std::string_view s) {
  if (s == "device") return TimingClass::kDevice;
  if (s == "host") return TimingClass::kHost;
  return std::nullopt;
}

TimingClass timing_class_of(const CaseResult& c, const std::string& metric) {
  // Observed by the host even inside a latched case: issue-to-completion and CPU-side costs.
  static const std::set<std::string> kHostObserved = {"round_trip_time", "issue_cpu_time",
                                                      "pack_time"};
  if (c.timing_method != to_string(TimingMethod::kCudaEventsLatched)) return TimingClass::kHost;
  return kHostObserved.contains(metric) ? TimingClass::kHost : TimingClass::kDevice;
}

BetweenRun between_run_of(const std::vector<BaselineRun>& runs) {
  BetweenRun b;
  b.n_runs = runs.size();
  std::vector<double> medians;
  for (const auto& r : runs) medians.push_back(r.median);
  b.center = median_of(medians);
  b.known = runs.size() >= kMinRunsForSpread;
  if (b.known) {
    b.spread_mad = scaled_mad(medians);
    b.spread_sd = summarize(medians).stddev;
    b.spread = std::max(b.spread_mad, b.spread_sd);
    b.spread_pct = b.center != 0 ? b.spread / std::abs(b.center) * 100 : 0;
  }
  return b;
}

std::optional<BaselineMetric> statistic_view(const BaselineMetric& m, std::string_view statistic,
                                             std::size_t* missing_run) {
  const auto k = distribution_statistic_index(statistic);
  BaselineMetric view;
  view.name = m.name;
  view.unit = m.unit;
  view.better = m.better;
  view.timing_class = m.timing_class;
  view.runs.reserve(m.runs.size());
  for (std::size_t r = 0; r < m.runs.size(); ++r) {
    const auto& per = m.runs[r].per_repetition;
    if (!k || *k >= per.size() || per[*k].empty()) {
      if (missing_run != nullptr) *missing_run = r;
      return std::nullopt;
    }
    BaselineRun run;
    run.samples = per[*k];
    run.median = median_of(run.samples);
    view.runs.push_back(std::move(run));
  }
  view.between = between_run_of(view.runs);
  return view;
}

namespace {

std::string machine_key(const RunContext& ctx) {
  std::vector<std::string> uuids;
  for (const auto& g : ctx.gpus) uuids.push_back(g.uuid.value_or(""));
  std::sort(uuids.begin(), uuids.end());
  std::string key = ctx.hostname.value_or("");
  for (const auto& u : uuids) key += "\n" + u;
  return key;
}

}  // namespace

std::vector<std::size_t> run_machines_of(const Baseline& b) {
  const bool contexts = b.run_contexts.size() == b.runs.size();
  std::map<std::string, std::size_t> index;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < b.runs.size(); ++i) {
    const std::string key = contexts ? machine_key(b.run_contexts[i]) : b.runs[i].hostname;
    out.push_back(index.try_emplace(key, index.size()).first->second);
  }
  return out;
}

std::vector<double> BaselineMetric::pooled_samples() const {
  std::vector<double> all;
  for (const auto& r : runs) all.insert(all.end(), r.samples.begin(), r.samples.end());
  return all;
}

const BaselineMetric* BaselineCase::metric(const std::string& name) const {
  for (const auto& m : metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

const BaselineCase* Baseline::find(const std::string& id) const {
  for (const auto& c : cases) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

namespace {

// Results' contexts were checked when their files were read; these names are for errors in a
// result built in code.
RunContext context_of(const Result& r, const std::string& file) {
  return RunContext::from_json(context_json(r), file);
}

BaselineRunRef run_ref(const Result& r, const RunContext& context, const std::string& file) {
  return {file, context.hostname.value_or(""), r.start_time, r.end_time,
          context.git_sha.value_or("")};
}

// One run given twice (a glob that matched a copy): same host, same start second, same samples.
// Start times have one-second resolution, so two short runs can share one; their samples differ.
bool same_run(const Result& a, const RunContext& a_context, const Result& b,
              const RunContext& b_context) {
  if (a.start_time != b.start_time ||
      a_context.hostname.value_or("") != b_context.hostname.value_or("") ||
      a.cases.size() != b.cases.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.cases.size(); ++i) {
    const auto& x = a.cases[i].metrics;
    const auto& y = b.cases[i].metrics;
    if (x.size() != y.size()) return false;
    for (std::size_t m = 0; m < x.size(); ++m) {
      if (x[m].samples != y[m].samples) return false;
    }
  }
  return true;
}

BaselineCase case_header(const CaseResult& c) {
  BaselineCase b;
  b.id = c.id;
  b.scenario = c.scenario;
  b.family = c.family;
  b.params = c.params;
  b.timing_method = c.timing_method;
  b.status = c.status;
  b.reason = c.reason;
  b.gate = c.gate;
  return b;
}

void add_run(BaselineCase& b, const CaseResult& c) {
  for (const auto& m : c.metrics) {
    auto it = std::find_if(b.metrics.begin(), b.metrics.end(),
                           [&](const BaselineMetric& x) { return x.name == m.name; });
    if (it == b.metrics.end()) {
      BaselineMetric fresh;
      fresh.name = m.name;
      fresh.unit = m.unit;
      fresh.better = m.better;
      fresh.timing_class = timing_class_of(c, m.name);
      b.metrics.push_back(std::move(fresh));
      it = b.metrics.end() - 1;
    }
    BaselineRun& run = it->runs.emplace_back();
    run.median = m.stats.median;
    run.samples = m.samples;
    if (m.distribution) {
      run.per_repetition.assign(m.distribution->per_repetition.begin(),
                                m.distribution->per_repetition.end());
    }
  }
}

// case_header and add_run for a case that is not needed any more (a result being read): its
// strings and samples are moved, not copied.
BaselineCase baseline_case_of(CaseResult&& c) {
  BaselineCase b;
  b.id = std::move(c.id);
  b.scenario = std::move(c.scenario);
  b.family = std::move(c.family);
  b.params = std::move(c.params);
  b.timing_method = c.timing_method;
  b.status = c.status;
  b.reason = std::move(c.reason);
  b.gate = std::move(c.gate);
  if (c.status == CaseStatus::kOk) {
    // Metric names are unique within a case: they are the keys of one JSON object.
    b.metrics.reserve(c.metrics.size());
    for (auto& m : c.metrics) {
      BaselineMetric& fresh = b.metrics.emplace_back();
      fresh.timing_class = timing_class_of(c, m.name);
      fresh.name = std::move(m.name);
      fresh.unit = std::move(m.unit);
      fresh.better = m.better;
      BaselineRun& run = fresh.runs.emplace_back();
      run.median = m.stats.median;
      run.samples = std::move(m.samples);
      if (m.distribution) {
        for (auto& values : m.distribution->per_repetition) {
          run.per_repetition.push_back(std::move(values));
        }
      }
    }
  }
  return b;
}

void finish(Baseline& b) {
  for (auto& c : b.cases) {
    for (auto& m : c.metrics) m.between = between_run_of(m.runs);
  }
}

}  // namespace

Baseline build_baseline(const std::vector<Result>& results, const std::vector<std::string>& files,
                        const PromoteOptions& options) {
  std::vector<RunContext> contexts;
  for (std::size_t i = 0; i < results.size(); ++i) {
    contexts.push_back(context_of(results[i], files[i]));
  }
  return build_baseline(results, files, contexts, options);
}

Baseline build_baseline(const std::vector<Result>& results, const std::vector<std::string>& files,
                        const std::vector<RunContext>& contexts, const PromoteOptions& options) {
  if (results.empty()) throw PromoteError(3, "baseline promote", "", "no result given");
  const auto refuse = [](int code, const std::string& file, const std::string& pointer,
                         const std::string& what) {
    throw PromoteError(code, file, pointer, what);
  };
  const std::string node_type = contexts.front().node_type.value_or("");
  const std::string fingerprint = contexts.front().topology_fingerprint.value_or("");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const RunContext& context = contexts[i];
    const std::string& file = files[i];
    if (!r.complete || r.end_time.empty()) {
      refuse(3, file, r.end_time.empty() ? "/context/end_time" : "/complete",
             "the run did not finish (" +
                 (r.incomplete_reason.empty() ? std::string("no end") : r.incomplete_reason) +
                 "): an incomplete run is no baseline");
    }
    if (context.node_type.value_or("") != node_type) {
      refuse(2, file, "/context/node_type",
             "node type \"" + context.node_type.value_or("") + "\" differs from \"" + node_type +
                 "\" of " + files.front() +
                 "; a baseline holds runs of one node type (promote each type separately)");
    }
    if (context.topology_fingerprint.value_or("") != fingerprint) {
      refuse(2, file, "/context/topology_fingerprint",
             "topology fingerprint differs from " + files.front() +
                 "'s: the nodes are laid out differently (compare them with compare --across)");
    }
    for (std::size_t k = 0; k < i; ++k) {
      // The same run twice would shrink the spread the gate trusts.
      if (same_run(results[k], contexts[k], r, context)) {
        refuse(3, file, "/context/start_time",
               "the same run as " + files[k] + " (host and start time); promote each run once");
      }
    }
    if (!options.allow_noisy) {
      std::vector<std::string> noise;
      try {
        noise = run_noise_reasons(context);
      } catch (const std::invalid_argument& e) {
        refuse(3, file, "/context/environment", e.what());
      }
      if (!noise.empty()) {
        std::string why;
        for (const auto& n : noise) why += (why.empty() ? "" : "; ") + n;
        refuse(2, file, "/context/environment",
               "taken under noise (" + why + "); re-run on a quiet node or pass --allow-noisy");
      }
    }
    std::size_t ok = 0;
    for (std::size_t k = 0; k < r.cases.size(); ++k) {
      const CaseResult& c = r.cases[k];
      const std::string at = "/cases/" + std::to_string(k);
      if (c.status == CaseStatus::kFailed) {
        refuse(3, file, at,
               "case " + c.id + " failed (" + c.reason +
                   "); a baseline must not contain failed "
                   "cases");
      }
      if (c.status != CaseStatus::kOk) continue;
      ++ok;
      for (const auto& m : c.metrics) {
        if (m.samples.size() < options.min_samples) {
          refuse(3, file, at + "/metrics/" + m.name + "/samples",
                 "case " + c.id + ": " + std::to_string(m.samples.size()) +
                     " samples; a baseline needs at least " + std::to_string(options.min_samples) +
                     " per run to be tested against (a --quick run is a smoke test, not a "
                     "baseline)");
        }
      }
    }
    if (ok == 0) refuse(3, file, "/cases", "no case ran: nothing to compare against");
  }

  Baseline b;
  b.node_type = node_type;
  b.topology_fingerprint = fingerprint;
  b.created = iso8601_utc_now();
  // Oldest run first, so the newest context is the one "what changed" reads.
  std::vector<std::size_t> order(results.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t c) {
    return results[a].start_time < results[c].start_time;
  });
  const Result& reference = results[order.front()];
  std::map<std::string, std::size_t> index;
  for (const auto& c : reference.cases) {
    index[c.id] = b.cases.size();
    b.cases.push_back(case_header(c));
  }
  for (const std::size_t i : order) {
    const Result& r = results[i];
    const std::string& file = files[i];
    b.runs.push_back(run_ref(r, contexts[i], file));
    b.run_contexts.push_back(contexts[i]);
    std::set<std::string> seen;
    for (std::size_t k = 0; k < r.cases.size(); ++k) {
      const CaseResult& c = r.cases[k];
      const auto it = index.find(c.id);
      if (it == index.end()) {
        refuse(3, file, "/cases/" + std::to_string(k),
               "case " + c.id + " is not in " + files[order.front()] +
                   "; every run of a baseline must run the same cases");
      }
      seen.insert(c.id);
      BaselineCase& bc = b.cases[it->second];
      if (bc.status != c.status) {
        refuse(3, file, "/cases/" + std::to_string(k) + "/status",
               "case " + c.id + " is " + std::string(to_string(c.status)) + " here but " +
                   std::string(to_string(bc.status)) + " in " + files[order.front()] +
                   "; a case must run (or skip) in every run of a baseline");
      }
      if (c.status == CaseStatus::kOk) add_run(bc, c);
      if (c.gate.is_object()) bc.gate = c.gate;  // the newest scenario's gate block
    }
    if (seen.size() != index.size()) {
      for (const auto& [id, pos] : index) {
        if (!seen.contains(id)) {
          refuse(3, file, "/cases",
                 "case " + id + " of " + files[order.front()] +
                     " is missing; every run of a baseline must run the same cases");
        }
      }
    }
  }
  b.context = contexts[order.back()];
  finish(b);
  return b;
}

namespace {

// A one-run baseline's fields from a result, its cases left out.
Baseline baseline_header(const Result& result, const std::string& file) {
  Baseline b;
  b.context = context_of(result, file);
  b.node_type = b.context.node_type.value_or("");
  b.topology_fingerprint = b.context.topology_fingerprint.value_or("");
  b.created = result.end_time;
  b.runs.push_back(run_ref(result, b.context, file));
  b.run_contexts.push_back(b.context);
  return b;
}

}  // namespace

Baseline baseline_from_result(const Result& result, const std::string& file) {
  Baseline b = baseline_header(result, file);
  b.cases.reserve(result.cases.size());
  for (const auto& c : result.cases) {
    BaselineCase bc = case_header(c);
    if (c.status == CaseStatus::kOk) add_run(bc, c);
    b.cases.push_back(std::move(bc));
  }
  finish(b);
  return b;
}

Baseline load_baseline(const std::filesystem::path& path) {
  // A result (`compare A B` takes one as the baseline) is read case by case and each case becomes
  // a baseline case at once: neither the file nor the whole result is ever held.
  std::vector<BaselineCase> cases;
  ojson other;
  const std::optional<Result> result = read_result_file(
      path, [&](CaseResult&& c, std::size_t) { cases.push_back(baseline_case_of(std::move(c))); },
      &other);
  if (!result) return baseline_from_json(other, path.string());
  Baseline b = baseline_header(*result, path.string());
  b.cases = std::move(cases);
  finish(b);
  return b;
}

}  // namespace pathbench
