#include <cstdio>

#include "core/markup.hpp"
#include "core/units.hpp"
#include "export/compare_report.hpp"
#include "export/compare_report_parts.hpp"

// compare --junit: one testsuite, what changed as its properties, a testcase per case and floor.

namespace pathbench {

namespace {

std::string format_p(const std::optional<double>& p) {
  if (!p) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", *p);
  return buf;
}

std::string describe_metric(const MetricComparison& m) {
  if (m.verdict == Verdict::kMissing) return metric_label(m) + ": " + m.reason;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s: %s: %s -> %s (%+.2f %%, ceiling %.1f %%, applied %.2f %% (%s), between-run "
                "spread %.2f %%%s over %zu run%s, p = %s between runs, %s within, n = %zu/%zu)",
                metric_label(m).c_str(), verdict_label(m).c_str(),
                format_value(m.baseline_median, m.unit).c_str(),
                format_value(m.result_median, m.unit).c_str(), m.change_pct, m.threshold_pct,
                m.effective_threshold_pct, std::string(to_string(m.threshold_source)).c_str(),
                m.spread_pct, m.spread_known ? "" : " (default)", m.n_runs,
                m.n_runs == 1 ? "" : "s", format_p(m.p_between).c_str(),
                format_p(m.p_value).c_str(), m.n_baseline, m.n_result);
  std::string text = buf;
  if (m.confirmation) {
    text += "; re-run medians:";
    for (std::size_t i = 0; i < m.confirmation->rerun_medians.size(); ++i) {
      char r[96];
      std::snprintf(r, sizeof r, " %s (%+.2f %%)",
                    format_value(m.confirmation->rerun_medians[i], m.unit).c_str(),
                    m.confirmation->rerun_changes_pct[i]);
      text += r;
    }
    for (const auto& n : m.confirmation->notes) text += "; " + n;
  }
  return text;
}

}  // namespace

std::string junit_xml(const Comparison& c) {
  // The counts first: the header carries them, and the body is then written once, straight into
  // the one string (a large comparison's XML is hundreds of MB: no stream, no copies).
  std::size_t failures = 0, errors = 0, skipped = 0;
  for (const auto& k : c.cases) {
    switch (k.verdict) {
      case Verdict::kRegression:
      case Verdict::kFailed:
        ++failures;
        break;
      case Verdict::kMissing:
      case Verdict::kInsufficient:
        ++errors;
        break;
      case Verdict::kSkipped:
      case Verdict::kUnstable:
        ++skipped;
        break;
      default:
        break;
    }
  }
  for (const auto& f : c.floors) {
    if (is_failure(f.verdict)) {
      ++failures;
    } else if (f.verdict == FloorVerdict::kUnknownLink) {
      ++skipped;
    }
  }
  const bool noisy = !c.noise.empty() && !c.allow_noisy;
  if (!c.incomparable.empty()) ++errors;
  if (noisy) ++errors;
  const std::size_t tests =
      c.cases.size() + c.floors.size() + (c.incomparable.empty() ? 0 : 1) + (noisy ? 1 : 0);

  std::string out;
  const std::string counts = "tests=\"" + std::to_string(tests) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
                             "\" skipped=\"" + std::to_string(skipped) + "\"";
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"pathbench\" " + counts + ">\n";
  out += "  <testsuite name=\"pathbench compare " + markup_escape(c.result.node_type) + "\" " +
         counts + ">\n";
  // What changed comes first: the properties a CI page shows before the test cases.
  out += "    <properties>\n";
  if (!c.floors_only) {
    out += "      <property name=\"baseline.runs\" value=\"" + std::to_string(c.baseline.runs) +
           "\"/>\n";
  }
  for (const auto& ch : c.changes) {
    out += "      <property name=\"changed." + markup_escape(ch.field) + "\" value=\"" +
           markup_escape(ch.text()) + "\"/>\n";
  }
  if (!c.result.incomplete.empty()) {
    out += "      <property name=\"result.incomplete\" value=\"" +
           markup_escape(c.result.incomplete) + "\"/>\n";
  }
  for (std::size_t i = 0; i < c.noise.size(); ++i) {
    out += "      <property name=\"noise." + std::to_string(i) + "\" value=\"" +
           markup_escape(c.noise[i]) + "\"/>\n";
  }
  out += "    </properties>\n";

  for (const auto& k : c.cases) {
    out += "    <testcase classname=\"pathbench." + markup_escape(k.family) + "\" name=\"" +
           markup_escape(k.id) + "\">\n";
    std::string text, headline;
    for (const auto& m : k.metrics) {
      text += describe_metric(m) + "\n";
      if (m.verdict == k.verdict && headline.empty()) {
        // Which statistic failed, when it is not the median the reader assumes.
        headline = m.statistic == kMedianStatistic ? verdict_label(m)
                                                   : metric_label(m) + ": " + verdict_label(m);
      }
    }
    if (!k.reason.empty()) text += k.reason + "\n";
    if (headline.empty()) headline = std::string(to_string(k.verdict));
    switch (k.verdict) {
      case Verdict::kRegression:
      case Verdict::kFailed:
        out += "      <failure type=\"" + std::string(to_string(k.verdict)) + "\" message=\"" +
               markup_escape(headline + (k.reason.empty() ? "" : ": " + k.reason)) + "\">" +
               markup_escape(text) + "</failure>\n";
        break;
      case Verdict::kMissing:
      case Verdict::kInsufficient:
        out += "      <error type=\"" + std::string(to_string(k.verdict)) + "\" message=\"" +
               markup_escape(k.verdict == Verdict::kMissing ? "case missing from the result"
                                                            : k.reason) +
               "\">" + markup_escape(text) + "</error>\n";
        break;
      case Verdict::kSkipped:
        out += "      <skipped message=\"" + markup_escape(k.reason) + "\"/>\n";
        break;
      case Verdict::kUnstable:
        // Not gateable on this node type: visible as a skip, never a silent pass.
        out += "      <skipped message=\"" + markup_escape("not gateable: " + k.reason) + "\"/>\n";
        break;
      default:
        if (!text.empty()) {
          out += "      <system-out>" + markup_escape(headline + "\n" + text) + "</system-out>\n";
        }
    }
    out += "    </testcase>\n";
  }
  for (const auto& f : c.floors) {
    out += "    <testcase classname=\"pathbench.floors\" name=\"" + markup_escape(f.id) + "\">\n";
    if (is_failure(f.verdict)) {
      out += "      <failure type=\"" + std::string(to_string(f.verdict)) + "\" message=\"" +
             markup_escape(f.detail) + "\"/>\n";
    } else if (f.verdict == FloorVerdict::kUnknownLink) {
      out += "      <skipped message=\"" + markup_escape(f.detail) + "\"/>\n";
    } else {
      out += "      <system-out>" + markup_escape(f.detail) + "</system-out>\n";
    }
    out += "    </testcase>\n";
  }
  if (!c.incomparable.empty()) {
    std::string text;
    for (const auto& d : c.incomparable) text += d + "\n";
    out +=
        "    <testcase classname=\"pathbench.compare\" name=\"comparable\">\n"
        "      <error type=\"incomparable\" message=\"results are from different node types "
        "or topologies\">" +
        markup_escape(text) + "</error>\n    </testcase>\n";
  }
  if (noisy) {
    std::string text;
    for (const auto& d : c.noise) text += d + "\n";
    out +=
        "    <testcase classname=\"pathbench.compare\" name=\"quiet\">\n"
        "      <error type=\"noisy\" message=\"incomparable: taken under noise\">" +
        markup_escape(text) + "</error>\n    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace pathbench
