#include "cli/compare_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "compare/compare.hpp"
#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "result/result.hpp"

namespace pathbench::cli {

namespace {

void write_output(const std::string& path, const std::string& text, const char* what) {
  if (path.empty()) return;
  try {
    write_file_atomically(path, text);
  } catch (const std::exception& e) {
    throw InputError(path, "", std::string("cannot write the ") + what + ": " + e.what());
  }
  std::fprintf(stderr, "%s written to %s\n", what, path.c_str());
}

std::filesystem::path baseline_file_for(const Result& result, const std::string& dir) {
  const auto it = result.context.find("node_type");
  const std::string node_type =
      it != result.context.end() && it->is_string() ? it->get<std::string>() : "";
  return std::filesystem::path(dir) / (file_name_label(node_type) + ".json");
}

}  // namespace

int compare_command(const CompareCliOptions& options) {
  if (!(options.alpha > 0 && options.alpha < 1)) {
    throw InputError::option("--alpha", "must be in (0, 1)");
  }
  if (!(options.threshold_pct > 0)) throw InputError::option("--threshold", "must be positive");
  if (!(options.floor_fraction > 0 && options.floor_fraction <= 1)) {
    throw InputError::option("--floor-fraction", "must be in (0, 1]");
  }
  if (!(options.nvlink_floor_fraction > 0 && options.nvlink_floor_fraction <= 1)) {
    throw InputError::option("--nvlink-floor", "must be in (0, 1]");
  }
  const std::size_t wanted = options.floors_only ? 1 : 2;
  if (options.files.size() != wanted) {
    throw InputError("compare", "",
                     options.floors_only ? "--floors takes exactly one RESULT"
                                         : "expected BASELINE and RESULT (or --floors RESULT)");
  }
  CompareOptions compare;
  compare.alpha = options.alpha;
  compare.default_threshold_pct = options.threshold_pct;
  compare.across = options.across;
  compare.floors.fraction = options.floor_fraction;
  compare.floors.nvlink_fraction = options.nvlink_floor_fraction;

  Comparison comparison;
  if (options.floors_only) {
    const Result result = load_result(options.files[0]);
    comparison = check_result_floors(result, options.files[0], compare);
  } else {
    const Result baseline = load_result(options.files[0]);
    const Result result = load_result(options.files[1]);
    comparison = compare_results(baseline, options.files[0], result, options.files[1], compare);
  }
  print_comparison(comparison, stdout, ::isatty(STDOUT_FILENO) == 1);
  write_output(options.json_out, to_json(comparison).dump(2) + "\n", "comparison JSON");
  write_output(options.junit_out, junit_xml(comparison), "JUnit XML");
  return comparison.exit_code;
}

int baseline_promote_command(const BaselineCliOptions& options) {
  const Result result = load_result(options.result);
  std::size_t ok = 0;
  for (const auto& c : result.cases) {
    if (c.status == CaseStatus::kFailed) {
      throw InputError(
          options.result, "",
          "case " + c.id + " failed (" + c.reason + "); a baseline must not contain failed cases");
    }
    if (c.status == CaseStatus::kOk) ++ok;
  }
  if (ok == 0) throw InputError(options.result, "", "no case ran: nothing to compare against");
  if (result.end_time.empty()) {
    throw InputError(options.result, "/context/end_time",
                     "the run did not finish (no end_time): an incomplete run is no baseline");
  }
  const auto target = baseline_file_for(result, options.dir);
  if (std::filesystem::exists(target) && !options.force) {
    throw InputError(target.string(), "",
                     "a baseline for this node type exists; pass --force to replace it");
  }
  save_result(target, result);
  std::printf("baseline for \"%s\": %s (%zu ok cases)\n",
              result.context.value("node_type", std::string()).c_str(), target.c_str(), ok);
  return 0;
}

int baseline_path_command(const BaselineCliOptions& options) {
  const Result result = load_result(options.result);
  const auto target = baseline_file_for(result, options.dir);
  std::printf("%s\n", target.c_str());
  if (!std::filesystem::exists(target)) {
    std::fprintf(stderr, "pathbench: no baseline yet for this node type: %s\n", target.c_str());
    return 2;
  }
  return 0;
}

}  // namespace pathbench::cli
