#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.hpp"

#include "core/units.hpp"
#include "export/compare_report.hpp"
#include "export/compare_report_parts.hpp"

// The readable compare table on stdout.

namespace pathbench {

namespace {

void print_table(const Comparison& c, std::FILE* out, bool color) {
  auto paint = [&](Verdict v) -> const char* {
    if (!color) return "";
    switch (v) {
      case Verdict::kRegression:
      case Verdict::kFailed:
        return "\033[31m";
      case Verdict::kMissing:
      case Verdict::kNoise:
      case Verdict::kFlaky:
      case Verdict::kUnstable:
      case Verdict::kInsufficient:
        return "\033[33m";
      case Verdict::kImprovement:
        return "\033[32m";
      default:
        return "";
    }
  };
  const char* reset = color ? "\033[0m" : "";
  if (!c.floors_only) {
    // What changed is the first thing an upgrade gate's reader needs.
    if (c.changes.empty()) {
      std::fprintf(out, "what changed since the baseline: nothing in the node's context\n");
    } else {
      std::fprintf(out, "what changed since the baseline:\n");
      for (const auto& ch : c.changes) std::fprintf(out, "  %s\n", ch.text().c_str());
    }
    std::fprintf(out, "baseline: %s (%s, %zu run%s, newest %s)\nresult:   %s (%s, %s)\n",
                 c.baseline.file.c_str(), c.baseline.node_type.c_str(), c.baseline.runs,
                 c.baseline.runs == 1 ? "" : "s", c.baseline.start_time.c_str(),
                 c.result.file.c_str(), c.result.node_type.c_str(), c.result.start_time.c_str());
    for (const auto* ref : {&c.baseline, &c.result}) {
      if (ref->incomplete.empty()) continue;
      std::fprintf(out,
                   "incomplete: %s holds only the cases its run finished (%s); the rest cannot be "
                   "judged (exit 2 unless something fails)\n",
                   ref->file.c_str(), ref->incomplete.c_str());
    }
    if (c.baseline.runs < kMinRunsForSpread && !c.across) {
      const GateRuleOptions defaults;
      std::fprintf(out,
                   "the baseline has %zu run%s: the between-run spread is unknown, so the class "
                   "default applies to device-timed metrics (%.1f %%) and host-timed metrics are "
                   "not gated (%zu runs needed); promote at least %zu runs: pathbench baseline "
                   "promote R1 R2 R3 ...\n",
                   c.baseline.runs, c.baseline.runs == 1 ? "" : "s",
                   defaults.device.unknown_spread * 100, defaults.min_runs_heavy,
                   kMinRunsForSpread);
    }
  }
  for (const auto& n : c.noise) std::fprintf(out, "noisy: %s\n", n.c_str());
  if (!c.noise.empty()) {
    std::fprintf(out, c.allow_noisy
                          ? "judged anyway (--allow-noisy): treat the verdicts with care\n"
                          : "incomparable: noisy (exit 2); re-run on a quiet node, or pass "
                            "--allow-noisy to judge anyway\n");
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
      std::fprintf(out, "%-26s  %-14s  %14s  %14s  %9s  %9s %-11s  %9s  %s\n", "verdict", "metric",
                   "baseline", "result", "change", "applied", "(from)", "p", "case");
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
      std::fprintf(out, "%s%-26s%s  %-14s  %s  (%s)\n", paint(k.verdict),
                   std::string(to_string(k.verdict)).c_str(), reset, "", k.id.c_str(),
                   k.reason.c_str());
      continue;
    }
    for (const auto& m : k.metrics) {
      if (c.across) {
        std::fprintf(out, "%-12s  %-14s  %14s  %14s  %8.3f  %s\n", "", metric_label(m).c_str(),
                     format_value(m.baseline_median, m.unit).c_str(),
                     format_value(m.result_median, m.unit).c_str(), m.ratio, k.id.c_str());
        continue;
      }
      if (m.verdict == Verdict::kUnstable) continue;  // listed in their own section below
      char p[16] = "n/a";
      if (m.p_between) std::snprintf(p, sizeof p, "%.2g", *m.p_between);
      std::fprintf(out, "%s%-26s%s  %-14s  %14s  %14s  %+8.2f%%  %8.2f%% %-11s  %9s  %s\n",
                   paint(m.verdict), verdict_label(m).c_str(), reset, metric_label(m).c_str(),
                   format_value(m.baseline_median, m.unit).c_str(),
                   format_value(m.result_median, m.unit).c_str(), m.change_pct,
                   m.effective_threshold_pct, std::string(to_string(m.threshold_source)).c_str(), p,
                   k.id.c_str());
      if (!m.reason.empty() && m.verdict != Verdict::kPass) {
        std::fprintf(out, "                            %s\n", m.reason.c_str());
      }
      if (m.confirmation && !m.confirmation->rerun_medians.empty()) {
        std::string medians;
        for (std::size_t i = 0; i < m.confirmation->rerun_medians.size(); ++i) {
          char r[96];
          std::snprintf(r, sizeof r, "%s%s (%+.2f %%)", i ? ", " : "",
                        format_value(m.confirmation->rerun_medians[i], m.unit).c_str(),
                        m.confirmation->rerun_changes_pct[i]);
          medians += r;
        }
        std::fprintf(out, "                            re-runs: %s\n", medians.c_str());
      }
      if (m.confirmation) {
        for (const auto& n : m.confirmation->notes) {
          std::fprintf(out, "                            %s\n", n.c_str());
        }
      }
    }
  }
  for (const auto& [reason, n] : skip_reasons) {
    std::fprintf(out, "%-26s  %zu case%s: %s\n", "skipped", n, n == 1 ? "" : "s", reason.c_str());
  }
  std::vector<std::string> ids;
  const auto unstable = not_gateable(c, &ids);
  if (!unstable.empty()) {
    std::fprintf(out,
                 "not gateable on this node type (spread beyond the ceiling, or too few baseline "
                 "runs for a heavy-tailed metric; reported, never failing):\n");
    for (std::size_t i = 0; i < unstable.size(); ++i) {
      const auto& m = *unstable[i];
      std::fprintf(out,
                   "  %s%-9s%s spread %6.2f %%, needs %6.2f %% (ceiling %5.1f %%)  (%s-timed, %zu "
                   "runs, now %+.2f %%)  %s %s\n    %s\n",
                   paint(m.verdict), "unstable", reset, m.spread_pct, m.effective_threshold_pct,
                   m.threshold_pct, std::string(to_string(m.timing_class)).c_str(), m.n_runs,
                   m.change_pct, metric_label(m).c_str(), ids[i].c_str(), m.reason.c_str());
    }
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

}  // namespace

void print_comparison(const Comparison& c, std::FILE* out, bool color) {
  // Case ids, metric names, reasons and context values come from the files compared: the table
  // is made printable as a whole (core/errors.hpp), keeping only its own newlines and colours.
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* text = ::open_memstream(&buffer, &size);
  if (text == nullptr) throw SystemError("open_memstream", errno);
  print_table(c, text, color);
  std::fclose(text);
  const std::string shown = printable_lines(
      std::string_view(buffer, size),
      color ? std::vector<std::string_view>{"\033[31m", "\033[32m", "\033[33m", "\033[0m"}
            : std::vector<std::string_view>{});
  std::free(buffer);
  std::fwrite(shown.data(), 1, shown.size(), out);
}

}  // namespace pathbench
