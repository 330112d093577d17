#include "compare/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "compare/case_verdicts.hpp"
#include "compare/context_changes.hpp"
#include "compare/run_noise.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "result/gate_block.hpp"
#include "result/run_context.hpp"
#include "stats/robust.hpp"

namespace pathbench {

std::string FleetMetric::label() const {
  return statistic == kMedianStatistic ? concat(case_id, " / ", metric)
                                       : concat(case_id, " / ", metric, " ", statistic);
}

std::string FleetDifference::text() const {
  return concat(label, " ", node_value.empty() ? "(absent)" : node_value,
                " (group: ", majority_value.empty() ? "(absent)" : majority_value, " on ",
                std::to_string(majority_count), " of ", std::to_string(others), ")");
}

std::size_t FleetGroup::outliers() const {
  return static_cast<std::size_t>(
      std::count_if(nodes.begin(), nodes.end(), [](const auto& n) { return n.outlier; }));
}

std::size_t FleetReport::outliers() const {
  std::size_t n = 0;
  for (const auto& g : groups) n += g.outliers();
  return n;
}

bool FleetReport::judged() const {
  return std::any_of(groups.begin(), groups.end(), [](const auto& g) { return g.judged; });
}

int exit_code_of(const FleetReport& report) {
  if (report.outliers() > 0) return 1;
  return report.judged() ? 0 : 2;
}

namespace {

struct NodeInput {
  const FleetInput* input = nullptr;
  RunContext context;
  std::string label;
};

// Hostnames label the nodes; where two results share one (a node measured twice, or results
// gathered from one machine), the files' stems do, and where those repeat too, the paths.
std::vector<std::string> node_labels(const std::vector<FleetInput>& inputs,
                                     const std::vector<RunContext>& contexts) {
  const auto unique = [](const std::vector<std::string>& names) {
    std::set<std::string> seen;
    for (const auto& n : names) {
      if (n.empty() || !seen.insert(n).second) return false;
    }
    return true;
  };
  std::vector<std::string> labels;
  for (const auto& c : contexts) labels.push_back(c.hostname.value_or(""));
  if (unique(labels)) return labels;
  labels.clear();
  for (const auto& in : inputs) labels.push_back(std::filesystem::path(in.file).stem().string());
  if (unique(labels)) return labels;
  labels.clear();
  for (const auto& in : inputs) labels.push_back(in.file);
  return labels;
}

std::optional<double> busy_pct(const RunContext& c) {
  if (!c.environment) return std::nullopt;
  const auto& env = *c.environment;
  const auto share = env.find("cpu_share");
  if (share == env.end() || !share->is_object()) return std::nullopt;
  const auto busy = share->find("busy_pct");
  if (busy == share->end() || !busy->is_number()) return std::nullopt;
  return busy->get<double>();
}

std::string percent_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f %%", v);
  return buf;
}

// The node's context fields that differ from the mode of the other nodes' values, where that
// mode is held by more than half of them: one odd neighbour is not "the group".
std::vector<FleetDifference> differences_of(std::size_t self, const std::vector<NodeInput>& nodes,
                                            const FleetOptions& options) {
  std::vector<FleetDifference> out;
  const std::size_t others = nodes.size() - 1;
  if (others == 0) return out;
  struct Field {
    std::string label, node_value;
    std::map<std::string, std::size_t> other_values;  // value -> how many others have it
    std::size_t differing = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Field> fields;
  for (std::size_t j = 0; j < nodes.size(); ++j) {
    if (j == self) continue;
    for (const auto& change : context_changes(nodes[j].context, nodes[self].context)) {
      auto [it, added] = fields.try_emplace(change.field);
      if (added) {
        order.push_back(change.field);
        it->second.label = change.label;
        it->second.node_value = change.result;
      }
      ++it->second.other_values[change.baseline];
      ++it->second.differing;
    }
  }
  for (const auto& name : order) {
    Field& f = fields[name];
    // The others without a change have the node's own value.
    if (f.differing < others) f.other_values[f.node_value] += others - f.differing;
    const auto mode =
        std::max_element(f.other_values.begin(), f.other_values.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (mode->first == f.node_value || 2 * mode->second <= others) continue;
    out.push_back({name, f.label, f.node_value, mode->first, mode->second, others});
  }
  // A busy CPU is no context field, but it is the commonest reason one node of a type is slow.
  std::vector<double> busy;
  for (std::size_t j = 0; j < nodes.size(); ++j) {
    if (j == self) continue;
    if (auto b = busy_pct(nodes[j].context)) busy.push_back(*b);
  }
  if (const auto mine = busy_pct(nodes[self].context); mine && !busy.empty()) {
    const double typical = median_of(busy);
    if (*mine - typical > options.busy_difference_points) {
      out.push_back({"environment/cpu_share/busy_pct", "CPU busy during the run",
                     percent_text(*mine), concat("median ", percent_text(typical)), busy.size(),
                     others});
    }
  }
  return out;
}

std::string format_change(double pct) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", pct);
  return buf;
}

std::string finding_text(const FleetMetric& m, const FleetNodeValue& v) {
  char z[96];
  std::snprintf(z, sizeof z, "robust z %.1f on the %s side; limits z %.1f and %.1f %%",
                std::abs(v.bad_z), v.bad_z >= 0 ? "bad" : "good", v.z_limit, m.threshold_pct);
  return concat(m.label(), ": ", format_value(v.value, m.unit), " vs group median ",
                format_value(m.median, m.unit), " (", format_change(v.change_pct), ", ", z, ")");
}

struct PeerSpread {
  double center = 0, spread = 0;
  std::size_t inliers = 0;
};

// The other nodes' median and spread, that a node is judged against (leave-one-out: a node
// never widens the spread it is measured with). The spread is the larger of the scaled MAD and
// the standard deviation of the ordinary values: the MAD alone is robust but from a handful of
// nodes often comes out small by chance. Ordinary are the values within 3 MADs or within the gate
// threshold of the median, whichever is wider: a run a few percent off (the H200's run medians
// have such tails, docs/measurements.md) is within what the gate tolerates and belongs in the
// spread, while a second outlier far beyond both cannot inflate it and hide the first.
PeerSpread peer_spread(const std::vector<double>& others, double floor, double threshold_pct) {
  PeerSpread p;
  p.center = median_of(others);
  const double mad = scaled_mad(others);
  const double cut = std::max(3 * mad, threshold_pct / 100 * std::abs(p.center));
  std::vector<double> kept;
  for (double x : others) {
    if (std::abs(x - p.center) <= cut) kept.push_back(x);
  }
  p.inliers = kept.size();
  double sd = 0;
  if (kept.size() > 1) {
    double mean = 0;
    for (double x : kept) mean += x;
    mean /= static_cast<double>(kept.size());
    double ss = 0;
    for (double x : kept) ss += (x - mean) * (x - mean);
    sd = std::sqrt(ss / static_cast<double>(kept.size() - 1));
  }
  p.spread = std::max({mad, sd, floor});
  return p;
}

// How many spreads a new value from the same distribution exceeds on one side with probability
// `p`, when center and spread come from `m` values: Student's t quantile with m - 1 degrees of
// freedom, times sqrt(1 + 1/m) for the uncertainty of the center (a prediction interval).
double prediction_limit(double p, std::size_t m) {
  if (m < 2) return std::numeric_limits<double>::infinity();
  const double df = static_cast<double>(m - 1);
  double lo = 0, hi = 1e6;
  for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_upper_tail(mid, df) > p ? lo : hi) = mid;
  }
  return hi * std::sqrt(1 + 1 / static_cast<double>(m));
}

struct MetricKey {
  std::string case_id, metric;
  bool operator<(const MetricKey& o) const {
    return std::tie(case_id, metric) < std::tie(o.case_id, o.metric);
  }
};

FleetGroup analyze_group(std::vector<NodeInput> nodes, const FleetOptions& options) {
  FleetGroup g;
  const RunContext& first = nodes.front().context;
  g.node_type = first.node_type.value_or("");
  g.topology_fingerprint = first.topology_fingerprint.value_or("");
  std::sort(nodes.begin(), nodes.end(),
            [](const NodeInput& a, const NodeInput& b) { return a.label < b.label; });
  g.judged = nodes.size() >= options.min_nodes;
  if (!g.judged) {
    g.reason = concat(std::to_string(nodes.size()), " node", nodes.size() == 1 ? "" : "s",
                      " of this type; at least ", std::to_string(options.min_nodes),
                      " are needed to judge one against the others");
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    FleetNode n;
    n.label = nodes[i].label;
    n.file = nodes[i].input->file;
    n.hostname = nodes[i].context.hostname.value_or("");
    const Result& r = nodes[i].input->result;
    if (!r.complete) {
      n.notes.push_back(
          concat("incomplete run", r.incomplete_reason.empty() ? "" : ": ", r.incomplete_reason));
    }
    n.differences = differences_of(i, nodes, options);
    g.nodes.push_back(std::move(n));
  }
  // Noise (steal, another GPU process, throttling) that most other nodes ran without is a
  // difference of the node: the likeliest reason it measured worse.
  std::vector<std::vector<std::string>> noise;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    try {
      noise.push_back(run_noise_reasons(nodes[i].context));
    } catch (const std::invalid_argument& e) {
      throw InputError(g.nodes[i].file, "/context/environment", e.what());
    }
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (noise[i].empty()) continue;
    const std::size_t others = nodes.size() - 1;
    std::size_t quiet = 0;
    for (std::size_t j = 0; j < nodes.size(); ++j) quiet += j != i && noise[j].empty();
    std::string reasons;
    for (const auto& r : noise[i]) reasons += concat(reasons.empty() ? "" : "; ", r);
    if (2 * quiet > others) {
      g.nodes[i].differences.push_back(
          {"environment/noise", "run taken under noise:", reasons, "none", quiet, others});
    } else {
      g.nodes[i].notes.push_back(concat("noise: ", reasons));
    }
  }

  // Every gated metric of a case that ran somewhere in the group, in the first node's order.
  std::vector<MetricKey> keys;
  std::map<MetricKey, FleetMetric> metrics;
  std::map<std::string, std::size_t> ok_count;  // case id -> nodes where it is ok
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (const CaseResult& c : nodes[i].input->result.cases) {
      if (c.status != CaseStatus::kOk || c.metrics.empty()) continue;
      ++ok_count[c.id];
      for (const auto& name : gated_metric_names(c.metrics.front().name, c.gate)) {
        const MetricResult* m = find_metric(c, name);
        if (m == nullptr) continue;
        const MetricGate entry = metric_gate(c.gate, name);
        const auto values = gated_values(*m, entry.statistic);
        if (!values || values->empty()) continue;
        const MetricKey key{c.id, name};
        auto [it, added] = metrics.try_emplace(key);
        if (added) {
          keys.push_back(key);
          FleetMetric& fm = it->second;
          fm.case_id = c.id;
          fm.family = c.family;
          fm.metric = name;
          fm.statistic = entry.statistic;
          fm.unit = m->unit;
          fm.better = m->better;
          fm.threshold_pct = entry.threshold_pct.value_or(options.default_threshold_pct);
        }
        FleetNodeValue v;
        v.node = i;
        v.value = entry.median() ? m->stats.median : median_of(*values);
        it->second.values.push_back(v);
      }
    }
  }
  // A case that failed here but ran elsewhere is this node's finding; one skipped or missing here
  // is a note (a reservation or a setting the others have: the differences say which).
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::set<std::string> present;
    std::vector<std::string> skipped;
    for (const CaseResult& c : nodes[i].input->result.cases) {
      present.insert(c.id);
      if (c.status == CaseStatus::kFailed && !c.reason.starts_with(kInterruptedReason)) {
        g.nodes[i].failed_cases.push_back(concat(c.id, ": ", c.reason));
      } else if (c.status == CaseStatus::kSkipped && ok_count.contains(c.id)) {
        skipped.push_back(concat(c.id, " (", c.reason, ")"));
      }
    }
    std::vector<std::string> missing;
    for (const auto& [id, count] : ok_count) {
      if (!present.contains(id)) missing.push_back(id);
    }
    // One note per kind: a node that ran another scenario set misses dozens of cases.
    const auto note = [&](const std::vector<std::string>& ids, const char* what) {
      if (ids.empty()) return;
      std::string text = concat(std::to_string(ids.size()), " case", ids.size() == 1 ? "" : "s",
                                " that ran on other nodes ", what, " here: ", ids.front());
      if (ids.size() > 1) text += concat(" and ", std::to_string(ids.size() - 1), " more");
      g.nodes[i].notes.push_back(std::move(text));
    };
    note(skipped, "skipped");
    note(missing, "missing");
  }

  for (const MetricKey& key : keys) {
    FleetMetric m = std::move(metrics[key]);
    std::vector<double> values;
    for (const auto& v : m.values) values.push_back(v.value);
    m.median = median_of(values);
    const double floor = options.min_spread_fraction * std::abs(m.median);
    m.spread = scaled_mad(values);
    if (m.spread < floor) {
      m.spread = floor;
      m.spread_floored = true;
    }
    m.spread_pct = m.median != 0 ? 100 * m.spread / std::abs(m.median) : 0;
    const double sign = m.better == Better::kHigher ? -1 : 1;
    for (std::size_t k = 0; k < m.values.size(); ++k) {
      FleetNodeValue& v = m.values[k];
      v.change_pct = m.median != 0 ? 100 * (v.value - m.median) / std::abs(m.median) : 0;
      std::vector<double> others = values;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(k));
      const PeerSpread peers = peer_spread(others, floor, m.threshold_pct);
      v.z = peers.spread > 0 ? (v.value - peers.center) / peers.spread : 0;
      v.bad_z = sign * v.z;
      v.z_limit = std::max(
          options.z_limit,
          prediction_limit(options.alpha / static_cast<double>(values.size()), peers.inliers));
      const double bad_change = sign * v.change_pct;
      if (g.judged && values.size() >= options.min_nodes) {
        v.outlier = v.bad_z > v.z_limit && bad_change > m.threshold_pct;
        v.ahead = -v.bad_z > v.z_limit && -bad_change > m.threshold_pct;
      }
    }
    g.metrics.push_back(std::move(m));
  }

  // Findings, worst first.
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    std::vector<std::pair<double, std::string>> found;
    for (const auto& m : g.metrics) {
      for (const auto& v : m.values) {
        if (v.node != i) continue;
        if (g.judged) g.nodes[i].worst_bad_z = std::max(g.nodes[i].worst_bad_z, v.bad_z);
        if (v.outlier) found.emplace_back(v.bad_z, finding_text(m, v));
        if (v.ahead) found.emplace_back(-1, concat("ahead of the group: ", finding_text(m, v)));
      }
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (auto& f : found) g.nodes[i].findings.push_back(std::move(f.second));
    const auto bad = static_cast<std::size_t>(
        std::count_if(found.begin(), found.end(), [](const auto& f) { return f.first > 0; }));
    g.nodes[i].outlier_metrics = bad;
    g.nodes[i].outlier =
        g.judged && (!g.nodes[i].failed_cases.empty() || bad >= options.min_metrics);
    g.nodes[i].suspect = g.judged && !g.nodes[i].outlier && bad > 0;
  }
  // Outliers first, keeping the label order; the values' node indices follow the new order.
  std::vector<std::size_t> order(g.nodes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto rank = [](const FleetNode& n) { return n.outlier ? 2 : n.suspect ? 1 : 0; };
    return rank(g.nodes[a]) > rank(g.nodes[b]);
  });
  std::vector<std::size_t> position(order.size());
  std::vector<FleetNode> sorted;
  for (std::size_t k = 0; k < order.size(); ++k) {
    position[order[k]] = k;
    sorted.push_back(std::move(g.nodes[order[k]]));
  }
  g.nodes = std::move(sorted);
  for (auto& m : g.metrics) {
    for (auto& v : m.values) v.node = position[v.node];
    std::stable_sort(m.values.begin(), m.values.end(),
                     [](const auto& a, const auto& b) { return a.node < b.node; });
  }
  return g;
}

}  // namespace

FleetReport analyze_fleet(const std::vector<FleetInput>& inputs, const FleetOptions& options) {
  FleetReport report;
  report.options = options;
  std::vector<RunContext> contexts;
  for (const auto& in : inputs)
    contexts.push_back(RunContext::from_json(in.result.context, in.file));
  const auto labels = node_labels(inputs, contexts);

  // Groups in the order their first result was given.
  std::vector<std::pair<std::string, std::string>> group_keys;
  std::map<std::pair<std::string, std::string>, std::vector<NodeInput>> grouped;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::pair key{contexts[i].node_type.value_or(""),
                        contexts[i].topology_fingerprint.value_or("")};
    auto [it, added] = grouped.try_emplace(key);
    if (added) group_keys.push_back(key);
    it->second.push_back({&inputs[i], std::move(contexts[i]), labels[i]});
  }
  for (const auto& key : group_keys)
    report.groups.push_back(analyze_group(std::move(grouped[key]), options));

  // The node-type view: each group's median of every metric that more than one group has.
  if (report.groups.size() > 1) {
    std::vector<MetricKey> keys;
    std::map<MetricKey, FleetNodeTypeRow> rows;
    for (std::size_t gi = 0; gi < report.groups.size(); ++gi) {
      for (const auto& m : report.groups[gi].metrics) {
        const MetricKey key{m.case_id, m.metric};
        auto [it, added] = rows.try_emplace(key);
        if (added) {
          keys.push_back(key);
          it->second = {m.case_id,   m.metric,
                        m.statistic, m.unit,
                        m.better,    std::vector<std::optional<double>>(report.groups.size())};
        }
        it->second.medians[gi] = m.median;
      }
    }
    for (const auto& key : keys) {
      auto& row = rows[key];
      if (std::count_if(row.medians.begin(), row.medians.end(),
                        [](const auto& v) { return v.has_value(); }) > 1) {
        report.node_types.push_back(std::move(row));
      }
    }
  }
  return report;
}

}  // namespace pathbench
