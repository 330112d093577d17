#include "export/fleet_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/markup.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace pathbench {

namespace {

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string signed_pct(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%+.1f %%", v);
  return buf;
}

std::string group_title(const FleetGroup& g) {
  return concat(
      g.node_type.empty() ? "(no node type)" : g.node_type, " [",
      g.topology_fingerprint.empty() ? "no fingerprint" : g.topology_fingerprint.substr(0, 12),
      "]");
}

std::string verdict_word(const FleetGroup& g, const FleetNode& n) {
  if (!g.judged) return "not judged";
  return n.outlier ? "OUTLIER" : n.suspect ? "suspect" : "ok";
}

}  // namespace

std::string fleet_text(const FleetReport& report) {
  std::string out;
  for (const auto& g : report.groups) {
    out +=
        concat("== ", group_title(g), ": ", std::to_string(g.nodes.size()), " node",
               g.nodes.size() == 1 ? "" : "s", ", ", std::to_string(g.metrics.size()), " metrics");
    out += g.judged ? concat(", ", std::to_string(g.outliers()), " outlier",
                             g.outliers() == 1 ? "" : "s", "\n")
                    : concat("; not judged: ", g.reason, "\n");
    for (const auto& n : g.nodes) {
      out += concat("  ", verdict_word(g, n), "  ", n.label);
      if (g.judged)
        out += concat("  (worst robust z on the bad side ", fixed(n.worst_bad_z, 1), ")");
      out += concat("  ", n.file, "\n");
      for (const auto& f : n.failed_cases) out += concat("      failed: ", f, "\n");
      for (const auto& f : n.findings) out += concat("      ", f, "\n");
      for (const auto& d : n.differences) out += concat("      differs: ", d.text(), "\n");
      for (const auto& note : n.notes) out += concat("      note: ", note, "\n");
    }
  }
  if (!report.node_types.empty()) {
    out += "== node types (group medians; change vs the first type that has the metric)\n";
    for (std::size_t gi = 0; gi < report.groups.size(); ++gi) {
      out += concat("  [", std::to_string(gi + 1), "] ", group_title(report.groups[gi]), "\n");
    }
    for (const auto& row : report.node_types) {
      out += concat("  ", row.case_id, " / ", row.metric,
                    row.statistic == "median" ? "" : concat(" ", row.statistic), ":");
      std::optional<double> reference;
      for (std::size_t gi = 0; gi < row.medians.size(); ++gi) {
        if (!row.medians[gi]) {
          out += concat("  [", std::to_string(gi + 1), "] -");
          continue;
        }
        out +=
            concat("  [", std::to_string(gi + 1), "] ", format_value(*row.medians[gi], row.unit));
        if (!reference) {
          reference = row.medians[gi];
        } else if (*reference != 0) {
          out += concat(
              " (", signed_pct(100 * (*row.medians[gi] - *reference) / std::abs(*reference)), ")");
        }
      }
      out += "\n";
    }
  }
  const std::size_t outliers = report.outliers();
  if (outliers > 0) {
    out += concat("pathbench fleet: ", std::to_string(outliers), " outlier node",
                  outliers == 1 ? "" : "s", "\n");
  } else if (!report.judged()) {
    out += concat("pathbench fleet: no group has ", std::to_string(report.options.min_nodes),
                  " nodes: nothing judged\n");
  } else {
    out += "pathbench fleet: no outlier\n";
  }
  return out;
}

nlohmann::ordered_json fleet_json(const FleetReport& report) {
  nlohmann::ordered_json j;
  j["schema"] = kFleetSchema;
  j["created"] = iso8601_utc_now();
  j["options"] = {{"z_limit", report.options.z_limit},
                  {"alpha", report.options.alpha},
                  {"default_threshold_pct", report.options.default_threshold_pct},
                  {"min_nodes", report.options.min_nodes},
                  {"min_spread_fraction", report.options.min_spread_fraction},
                  {"min_metrics", report.options.min_metrics},
                  {"busy_difference_points", report.options.busy_difference_points}};
  j["outliers"] = report.outliers();
  j["judged"] = report.judged();
  auto& groups = j["groups"] = nlohmann::ordered_json::array();
  for (const auto& g : report.groups) {
    nlohmann::ordered_json jg;
    jg["node_type"] = g.node_type;
    jg["topology_fingerprint"] = g.topology_fingerprint;
    jg["judged"] = g.judged;
    jg["reason"] = g.judged ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(g.reason);
    jg["outliers"] = g.outliers();
    auto& nodes = jg["nodes"] = nlohmann::ordered_json::array();
    for (const auto& n : g.nodes) {
      nlohmann::ordered_json jn;
      jn["label"] = n.label;
      jn["hostname"] = n.hostname;
      jn["file"] = n.file;
      jn["outlier"] = n.outlier;
      jn["suspect"] = n.suspect;
      jn["outlier_metrics"] = n.outlier_metrics;
      jn["worst_bad_z"] = n.worst_bad_z;
      jn["findings"] = n.findings;
      jn["failed_cases"] = n.failed_cases;
      auto& diffs = jn["differences"] = nlohmann::ordered_json::array();
      for (const auto& d : n.differences) {
        diffs.push_back({{"field", d.field},
                         {"label", d.label},
                         {"value", d.node_value},
                         {"majority", d.majority_value},
                         {"majority_count", d.majority_count},
                         {"others", d.others}});
      }
      jn["notes"] = n.notes;
      nodes.push_back(std::move(jn));
    }
    auto& metrics = jg["metrics"] = nlohmann::ordered_json::array();
    for (const auto& m : g.metrics) {
      nlohmann::ordered_json jm;
      jm["case"] = m.case_id;
      jm["family"] = m.family;
      jm["metric"] = m.metric;
      jm["statistic"] = m.statistic;
      jm["unit"] = m.unit;
      jm["better"] = std::string(to_string(m.better));
      jm["threshold_pct"] = m.threshold_pct;
      jm["median"] = m.median;
      jm["spread"] = m.spread;
      jm["spread_pct"] = m.spread_pct;
      jm["spread_floored"] = m.spread_floored;
      auto& values = jm["nodes"] = nlohmann::ordered_json::array();
      for (const auto& v : m.values) {
        values.push_back({{"node", g.nodes[v.node].label},
                          {"value", v.value},
                          {"change_pct", v.change_pct},
                          {"z", v.z},
                          {"bad_z", v.bad_z},
                          {"z_limit", v.z_limit},
                          {"outlier", v.outlier},
                          {"ahead", v.ahead}});
      }
      metrics.push_back(std::move(jm));
    }
    groups.push_back(std::move(jg));
  }
  auto& types = j["node_types"] = nlohmann::ordered_json::array();
  for (const auto& row : report.node_types) {
    nlohmann::ordered_json medians = nlohmann::ordered_json::array();
    for (const auto& v : row.medians) medians.push_back(v ? nlohmann::ordered_json(*v) : nullptr);
    types.push_back({{"case", row.case_id},
                     {"metric", row.metric},
                     {"statistic", row.statistic},
                     {"unit", row.unit},
                     {"better", std::string(to_string(row.better))},
                     {"medians", std::move(medians)}});
  }
  return j;
}

std::string fleet_junit(const FleetReport& report) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  std::size_t nodes = 0, skipped = 0;
  for (const auto& g : report.groups) {
    nodes += g.nodes.size();
    if (!g.judged) skipped += g.nodes.size();
  }
  out += concat("<testsuites name=\"pathbench fleet\" tests=\"", std::to_string(nodes),
                "\" failures=\"", std::to_string(report.outliers()), "\" skipped=\"",
                std::to_string(skipped), "\">\n");
  for (const auto& g : report.groups) {
    out +=
        concat("  <testsuite name=\"pathbench fleet ", markup_escape(group_title(g)), "\" tests=\"",
               std::to_string(g.nodes.size()), "\" failures=\"", std::to_string(g.outliers()),
               "\" skipped=\"", std::to_string(g.judged ? 0 : g.nodes.size()), "\">\n");
    for (const auto& n : g.nodes) {
      out += concat("    <testcase classname=\"pathbench.fleet\" name=\"", markup_escape(n.label),
                    "\" file=\"", markup_escape(n.file), "\">\n");
      std::string details;
      for (const auto& f : n.failed_cases) details += concat("failed: ", f, "\n");
      for (const auto& f : n.findings) details += concat(f, "\n");
      for (const auto& d : n.differences) details += concat("differs: ", d.text(), "\n");
      for (const auto& note : n.notes) details += concat("note: ", note, "\n");
      if (!g.judged) {
        out += concat("      <skipped message=\"", markup_escape(g.reason), "\"/>\n");
      } else if (n.outlier) {
        const std::string headline =
            !n.failed_cases.empty()
                ? concat("failed: ", n.failed_cases.front())
                : (n.findings.empty() ? std::string("outlier") : n.findings.front());
        out += concat("      <failure type=\"outlier\" message=\"", markup_escape(headline), "\">",
                      markup_escape(details), "</failure>\n");
      } else if (!details.empty()) {
        out += concat("      <system-out>", markup_escape(details), "</system-out>\n");
      }
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

namespace {

// Bad side red, good side blue, saturating at twice the z limit; white within the limit's half.
std::string heat_colour(double bad_z, double z_limit) {
  const double t = std::clamp(std::abs(bad_z) / (2 * z_limit), 0.0, 1.0);
  const int fade = static_cast<int>(255 - 200 * t);
  char buf[32];
  if (bad_z >= 0) {
    std::snprintf(buf, sizeof buf, "rgb(255,%d,%d)", fade, fade);
  } else {
    std::snprintf(buf, sizeof buf, "rgb(%d,%d,255)", fade, fade);
  }
  return buf;
}

}  // namespace

std::string fleet_html(const FleetReport& report) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>pathbench fleet</title><style>"
      "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;font-size:12px}"
      "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap}"
      "td.node{text-align:left}ol.key{font-size:12px}"
      "td.out{font-weight:bold;color:#a00}.legend span{padding:2px 8px;margin-right:4px}"
      "ul{margin-top:0.2em}</style></head><body>\n<h1>pathbench fleet</h1>\n";
  out += concat(
      "<p>", std::to_string(report.outliers()), " outlier node", report.outliers() == 1 ? "" : "s",
      ". A node is an outlier on a metric when its "
      "robust z-score (distance from the other nodes' median in their robust spread) exceeds ",
      fixed(report.options.z_limit, 1),
      " (or the prediction limit an ordinary node of a group that size exceeds with "
      "probability alpha / nodes, alpha = ",
      fixed(report.options.alpha, 3),
      ") on the bad side <em>and</em> it is worse than the median by more than the "
      "metric's gate threshold. A node is an outlier when ",
      std::to_string(report.options.min_metrics),
      " or more of its metrics are, or a case failed on it; with fewer it is a suspect "
      "(listed, not failing).</p>\n");
  out += concat("<p class=\"legend\">cell colour: <span style=\"background:",
                heat_colour(2 * report.options.z_limit, report.options.z_limit),
                "\">bad side</span><span style=\"background:",
                heat_colour(-2 * report.options.z_limit, report.options.z_limit),
                "\">good side</span> (saturating at z = ", fixed(2 * report.options.z_limit, 1),
                "); cell text: change vs the group median; a bold cell is an outlier.</p>\n");
  for (const auto& g : report.groups) {
    out += concat("<h2>", markup_escape(group_title(g)), "</h2>\n");
    if (!g.judged) out += concat("<p>Not judged: ", markup_escape(g.reason), "</p>\n");
    // Columns are numbered (case ids are long); the key below the table names them.
    out += "<table><tr><th>node</th><th>verdict</th>";
    for (std::size_t k = 0; k < g.metrics.size(); ++k) {
      out += concat("<th title=\"", markup_escape(g.metrics[k].label()), "\">",
                    std::to_string(k + 1), "</th>");
    }
    out += "</tr>\n";
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const auto& n = g.nodes[i];
      out += concat("<tr><td class=\"node\">", markup_escape(n.label), "</td><td class=\"node",
                    n.outlier ? " out" : "", "\">", verdict_word(g, n), "</td>");
      for (const auto& m : g.metrics) {
        const auto v = std::find_if(m.values.begin(), m.values.end(),
                                    [&](const auto& x) { return x.node == i; });
        if (v == m.values.end()) {
          out += "<td>-</td>";
          continue;
        }
        out += concat("<td", v->outlier ? " class=\"out\"" : "",
                      " style=\"background:", heat_colour(v->bad_z, report.options.z_limit),
                      "\" title=\"",
                      markup_escape(concat(format_value(v->value, m.unit), ", z ", fixed(v->z, 2))),
                      "\">", markup_escape(signed_pct(v->change_pct)), "</td>");
      }
      out += "</tr>\n";
    }
    out += "</table>\n<details><summary>columns</summary><ol class=\"key\">";
    for (const auto& m : g.metrics) {
      out += concat("<li>", markup_escape(m.label()), " (threshold ", fixed(m.threshold_pct, 1),
                    " %, median ", markup_escape(format_value(m.median, m.unit)), ")</li>");
    }
    out += "</ol></details>\n";
    for (const auto& n : g.nodes) {
      if (n.findings.empty() && n.failed_cases.empty() && n.differences.empty() &&
          n.notes.empty()) {
        continue;
      }
      out += concat("<h3>", markup_escape(n.label),
                    n.outlier   ? " (outlier)"
                    : n.suspect ? " (suspect)"
                                : "",
                    "</h3><ul>");
      for (const auto& f : n.failed_cases) out += concat("<li>failed: ", markup_escape(f), "</li>");
      for (const auto& f : n.findings) out += concat("<li>", markup_escape(f), "</li>");
      for (const auto& d : n.differences) {
        out += concat("<li>differs: ", markup_escape(d.text()), "</li>");
      }
      for (const auto& note : n.notes) out += concat("<li>note: ", markup_escape(note), "</li>");
      out += "</ul>\n";
    }
  }
  if (!report.node_types.empty()) {
    out += "<h2>Node types</h2>\n<table><tr><th>metric</th>";
    for (const auto& g : report.groups)
      out += concat("<th>", markup_escape(group_title(g)), "</th>");
    out += "</tr>\n";
    for (const auto& row : report.node_types) {
      out += concat("<tr><td class=\"node\">",
                    markup_escape(concat(row.case_id, " / ", row.metric)), "</td>");
      for (const auto& v : row.medians) {
        out += concat("<td>", v ? markup_escape(format_value(*v, row.unit)) : std::string("-"),
                      "</td>");
      }
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace pathbench
