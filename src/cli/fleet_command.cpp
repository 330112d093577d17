#include "cli/fleet_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "cli/commands.hpp"
#include "compare/fleet.hpp"
#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "export/fleet_report.hpp"
#include "result/gate_block.hpp"
#include "result/result.hpp"

namespace pathbench::cli {

namespace {

// A directory contributes its *.json files that are results (sorted by name); other JSON there
// (a fleet report, a comparison) is passed over and said so. A file named on the command line
// must be a result.
std::vector<FleetInput> read_inputs(const std::vector<std::string>& inputs) {
  std::vector<FleetInput> out;
  // Read case by case (read_result_file), as every result reader does; a directory's other JSON
  // comes back whole in `other` and is passed over.
  const auto read = [&](const std::filesystem::path& path, bool named) {
    std::vector<CaseResult> cases;
    nlohmann::ordered_json other;
    auto result = read_result_file(
        path, [&](CaseResult&& c, std::size_t) { cases.push_back(std::move(c)); },
        named ? nullptr : &other);
    if (!result) {
      std::fprintf(stderr, "pathbench fleet: %s is not a %s file: passed over\n",
                   path.string().c_str(), kResultSchema);
      return;
    }
    result->cases = std::move(cases);
    out.push_back({path.string(), std::move(*result)});
  };
  for (const auto& input : inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(input, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(input, ec)) {
        if (entry.path().extension() == ".json" && entry.is_regular_file())
          files.push_back(entry.path());
      }
      if (ec) throw InputError(input, "", concat("cannot list the directory: ", ec.message()));
      std::sort(files.begin(), files.end());
      const std::size_t before = out.size();
      for (const auto& f : files) read(f, false);
      if (out.size() == before) throw InputError(input, "", "the directory holds no result file");
    } else {
      read(input, true);
    }
  }
  return out;
}

}  // namespace

int fleet_command(const FleetCliOptions& options) {
  if (!(std::isfinite(options.z_limit) && options.z_limit > 0 && options.z_limit <= 100)) {
    throw InputError::option("--z-limit", "must be in (0, 100]");
  }
  if (!(options.alpha > 0 && options.alpha < 1)) {
    throw InputError::option("--alpha", "must be in (0, 1)");
  }
  if (!(std::isfinite(options.threshold_pct) && options.threshold_pct > 0 &&
        options.threshold_pct <= kMaxGatePercent)) {
    throw InputError::option("--threshold", "expected a percentage in (0, 1000]");
  }
  if (options.min_nodes < 3 || options.min_nodes > 100000) {
    throw InputError::option("--min-nodes",
                             "must be at least 3: two nodes cannot say which is odd");
  }
  // Every output path is checked before anything is read or written: a typo in the last one
  // must not leave the first ones written.
  for (const auto* path : {&options.json_out, &options.junit_out, &options.html_out}) {
    if (path->empty()) continue;
    try {
      check_output_target(*path);
    } catch (const std::exception& e) {
      throw InputError(*path, "", concat("cannot write the fleet report: ", e.what()));
    }
  }
  if (options.min_metrics < 1 || options.min_metrics > 100000) {
    throw InputError::option("--min-metrics", "must be at least 1");
  }
  const auto inputs = read_inputs(options.inputs);
  FleetOptions fleet;
  fleet.z_limit = options.z_limit;
  fleet.alpha = options.alpha;
  fleet.default_threshold_pct = options.threshold_pct;
  fleet.min_nodes = static_cast<std::size_t>(options.min_nodes);
  fleet.min_metrics = static_cast<std::size_t>(options.min_metrics);
  const FleetReport report = analyze_fleet(inputs, fleet);
  const std::string text = fleet_text(report);
  const std::string json = fleet_json(report).dump(2) + "\n";
  const std::string junit = fleet_junit(report);
  const std::string html = fleet_html(report);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  write_report_file(options.json_out, json, "fleet JSON");
  write_report_file(options.junit_out, junit, "fleet JUnit");
  write_report_file(options.html_out, html, "fleet HTML");
  return exit_code_of(report);
}

}  // namespace pathbench::cli
