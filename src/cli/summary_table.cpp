#include "cli/summary_table.hpp"

#include <algorithm>
#include <string>

#include "core/units.hpp"

namespace pathbench::cli {

void print_summary_table(const Result& result, std::FILE* out) {
  std::size_t id_width = 4;
  for (const auto& c : result.cases) id_width = std::max(id_width, c.id.size());
  id_width = std::min<std::size_t>(id_width, 90);
  std::fprintf(out, "%-7s  %-*s  %-16s  %12s  %25s  %6s  %3s\n", "status",
               static_cast<int>(id_width), "case", "metric", "median", "p10 .. p90", "cv", "n");
  std::size_t ok = 0, skipped = 0, failed = 0;
  for (const auto& c : result.cases) {
    const std::string status(to_string(c.status));
    std::string id = c.id.size() > id_width ? c.id.substr(0, id_width - 3) + "..." : c.id;
    if (c.status == CaseStatus::kOk) ++ok;
    if (c.status == CaseStatus::kSkipped) ++skipped;
    if (c.status == CaseStatus::kFailed) ++failed;
    if (c.metrics.empty() || c.metrics.front().samples.empty()) {
      std::fprintf(out, "%-7s  %-*s  %s\n", status.c_str(), static_cast<int>(id_width), id.c_str(),
                   c.reason.c_str());
      continue;
    }
    const auto& m = c.metrics.front();
    const std::string range =
        format_value(m.stats.p10, m.unit) + " .. " + format_value(m.stats.p90, m.unit);
    char cv[16];
    std::snprintf(cv, sizeof cv, "%.2f%%", m.stats.cv * 100);
    std::fprintf(out, "%-7s  %-*s  %-16s  %12s  %25s  %6s  %3zu\n", status.c_str(),
                 static_cast<int>(id_width), id.c_str(), m.name.c_str(),
                 format_value(m.stats.median, m.unit).c_str(), range.c_str(), cv, m.stats.n);
    if (c.status == CaseStatus::kFailed) std::fprintf(out, "         %s\n", c.reason.c_str());
  }
  std::fprintf(out, "%zu cases: %zu ok, %zu skipped, %zu failed\n", result.cases.size(), ok,
               skipped, failed);
}

}  // namespace pathbench::cli
