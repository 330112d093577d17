#include "cli/compare_command.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "compare/baseline.hpp"
#include "compare/compare.hpp"
#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/sha256.hpp"
#include "core/subprocess.hpp"
#include "core/text.hpp"
#include "export/compare_report.hpp"
#include "result/gate_block.hpp"
#include "result/result.hpp"
#include "result/run_context.hpp"
#include "scenario/case_filter.hpp"
#include "scenario/scenario_file.hpp"

namespace pathbench::cli {

namespace {

void write_output(const std::string& path, const std::string& text, const char* what) {
  if (path.empty()) return;
  write_output_file(path, text, std::string("the ") + what);
  std::fprintf(stderr, "%s written to %s\n", what, path.c_str());
}

std::string node_type_of(const Result& result, const std::string& file) {
  return RunContext::from_json(result.context, file).node_type.value_or("");
}

std::filesystem::path baseline_file_for(const std::string& node_type, const std::string& dir) {
  return std::filesystem::path(dir) / (file_name_label(node_type) + ".json");
}

CompareOptions compare_options(const JudgeCliOptions& options) {
  if (!(options.alpha > 0 && options.alpha < 1)) {
    throw InputError::option("--alpha", "must be in (0, 1)");
  }
  // The range of a gate block's thresholds (result/gate_block.hpp): inf or 1e400 would gate nothing.
  if (!std::isfinite(options.threshold_pct) || !(options.threshold_pct > 0) ||
      options.threshold_pct > kMaxGatePercent) {
    char found[64];
    std::snprintf(found, sizeof found, "%g", options.threshold_pct);
    throw InputError::option("--threshold",
                             std::string("expected a percentage in (0, 1000], as a gate block's "
                                         "threshold_pct, found ") +
                                 found);
  }
  if (!(options.k >= 0 && options.k <= 100)) {
    throw InputError::option("--spread-k", "must be in [0, 100]");
  }
  if (!(options.floor_fraction > 0 && options.floor_fraction <= 1)) {
    throw InputError::option("--floor-fraction", "must be in (0, 1]");
  }
  if (!(options.nvlink_floor_fraction > 0 && options.nvlink_floor_fraction <= 1)) {
    throw InputError::option("--nvlink-floor", "must be in (0, 1]");
  }
  CompareOptions compare;
  compare.alpha = options.alpha;
  compare.default_threshold_pct = options.threshold_pct;
  compare.k = options.k;
  compare.allow_noisy = options.allow_noisy;
  compare.allow_few_samples = options.allow_few_samples;
  compare.floors.fraction = options.floor_fraction;
  compare.floors.nvlink_fraction = options.nvlink_floor_fraction;
  return compare;
}

int report(const Comparison& comparison, const JudgeCliOptions& options) {
  print_comparison(comparison, stdout, ::isatty(STDOUT_FILENO) == 1);
  std::fflush(stdout);
  // Built only when asked for, one at a time (a large comparison's text is hundreds of MB).
  if (!options.json_out.empty()) {
    write_output(options.json_out, to_json_text(comparison), "comparison JSON");
  }
  if (!options.junit_out.empty()) {
    write_output(options.junit_out, junit_xml(comparison), "JUnit XML");
  }
  return comparison.exit_code;
}

// A --filter pattern (RE2) matching exactly these case ids.
std::string exact_ids_pattern(const std::vector<std::string>& ids) {
  return CaseFilter::exact_ids_pattern(ids);
}

std::string file_sha256(const std::string& path) {
  try {
    return sha256_hex(read_text_file(path, kMaxScenarioFileBytes));
  } catch (const std::exception&) {
    return "";  // gone or unreadable: the caller says the suspects cannot be re-run
  }
}

// Why the suspects cannot be re-run as they ran (a scenario file gone or edited); "" when they can.
std::string rerun_obstacle(const Result& result) {
  if (result.scenario_files.empty()) return "the result names no scenario file";
  for (const auto& f : result.scenario_files) {
    const std::string sha = file_sha256(f.path);
    if (sha.empty()) return "scenario file " + f.path + " is not readable from here";
    if (sha != f.sha256) return "scenario file " + f.path + " changed since the run (sha256)";
  }
  return "";
}

std::vector<std::string> rerun_argv(const Result& result, const RunContext& ctx,
                                    const std::vector<std::string>& ids,
                                    const std::filesystem::path& out) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> argv{ec ? std::string("pathbench") : self.string(), "run"};
  for (const auto& f : result.scenario_files) argv.push_back(f.path);
  argv.insert(argv.end(), {"--filter", exact_ids_pattern(ids), "--out", out.string()});
  // The GPU options only where the run had GPUs: on a CPU-only node --device names nothing.
  const bool had_gpus = !ctx.gpus.empty();
  if (had_gpus && ctx.device.known()) {
    argv.insert(argv.end(), {"--device", std::to_string(*ctx.device.value)});
  }
  if (had_gpus && ctx.devices.known() && !ctx.devices.value->empty()) {
    std::string list;
    for (const int g : *ctx.devices.value) {
      list += concat(list.empty() ? "" : ",", std::to_string(g));
    }
    argv.insert(argv.end(), {"--devices", list});
  }
  if (!ctx.node_type_derived.value_or(true)) {
    argv.insert(argv.end(), {"--node-type", ctx.node_type.value_or("")});
  }
  return argv;
}

}  // namespace

int compare_command(const CompareCliOptions& options) {
  CompareOptions compare = compare_options(options);
  compare.across = options.across;
  const std::size_t wanted = options.floors_only ? 1 : 2;
  if (options.files.size() != wanted) {
    throw InputError("compare", "",
                     options.floors_only ? "--floors takes exactly one RESULT"
                                         : "expected BASELINE and RESULT (or --floors RESULT)");
  }
  Comparison comparison;
  if (options.floors_only) {
    const Result result = load_result(options.files[0]);
    comparison = check_result_floors(result, options.files[0], compare);
  } else {
    const Baseline baseline = load_baseline(options.files[0]);
    const Result result = load_result(options.files[1]);
    comparison = compare_results(baseline, options.files[0], result, options.files[1], compare);
  }
  return report(comparison, options);
}

int gate_command(const GateCliOptions& options) {
  const CompareOptions compare = compare_options(options);
  if (options.confirm < 0 || options.confirm > 20) {
    throw InputError::option("--confirm", "must be in [0, 20]");
  }
  const Result result = load_result(options.result);
  const RunContext context = RunContext::from_json(result.context, options.result);
  const std::string node_type = context.node_type.value_or("");
  const auto baseline_path = baseline_file_for(node_type, options.baselines);
  std::error_code exists_error;  // a link loop on the way reads as no baseline there
  if (!std::filesystem::exists(baseline_path, exists_error)) {
    std::fprintf(stderr,
                 "pathbench gate: no baseline for node type \"%s\" (%s); checking the floors "
                 "only.\npathbench gate: promote good runs with: pathbench baseline promote "
                 "RESULT... --dir %s\n",
                 node_type.c_str(), baseline_path.c_str(), options.baselines.c_str());
    const Comparison floors = check_result_floors(result, options.result, compare);
    const int code = report(floors, options);
    return code == 0 ? static_cast<int>(ExitCode::kIncomplete) : code;
  }
  const Baseline baseline = load_baseline(baseline_path);
  Comparison comparison =
      compare_results(baseline, baseline_path.string(), result, options.result, compare);
  const auto suspects = suspect_case_ids(comparison);
  const bool judged =
      comparison.incomparable.empty() && (comparison.noise.empty() || comparison.allow_noisy);
  if (!suspects.empty() && options.confirm > 0 && judged) {
    if (const std::string obstacle = rerun_obstacle(result); !obstacle.empty()) {
      std::fprintf(stderr,
                   "pathbench gate: cannot confirm %zu suspect case%s: %s; they stay "
                   "unconfirmed regressions\n",
                   suspects.size(), suspects.size() == 1 ? "" : "s", obstacle.c_str());
    } else {
      const std::filesystem::path result_path(options.result);
      const std::filesystem::path dir =
          options.rerun_dir.empty()
              ? result_path.parent_path() / (result_path.stem().string() + ".reruns")
              : std::filesystem::path(options.rerun_dir);
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec)
        throw InputError(dir.string(), "", "cannot create the re-run folder: " + ec.message());
      std::vector<Result> reruns;
      for (int i = 1; i <= options.confirm; ++i) {
        const auto out = dir / ("rerun-" + std::to_string(i) + ".json");
        std::fprintf(stderr,
                     "pathbench gate: re-run %d of %d: %zu suspect case%s in a fresh process\n", i,
                     options.confirm, suspects.size(), suspects.size() == 1 ? "" : "s");
        SubprocessOptions sub;
        sub.timeout = std::chrono::seconds(options.rerun_timeout_s);
        const auto started = std::chrono::steady_clock::now();
        const SubprocessResult run =
            run_subprocess(rerun_argv(result, context, suspects, out), sub);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        // Exit 1 (a case failed) still wrote a result; the confirmation counts the failure.
        const bool wrote = run.outcome == SubprocessOutcome::kExited &&
                           (run.exit_status == 0 || run.exit_status == 1);
        if (!wrote) {
          std::fprintf(stderr, "pathbench gate: re-run %d did not finish (%s)\n%s", i,
                       run.error.c_str(), run.stderr_text.c_str());
          reruns.push_back(Result{});  // no case: every suspect counts as reproduced
          continue;
        }
        std::fprintf(stderr, "pathbench gate: re-run %d done in %.1f s: %s\n", i, seconds,
                     out.c_str());
        reruns.push_back(load_result(out));
      }
      apply_confirmation(comparison, baseline, reruns, compare);
    }
  }
  return report(comparison, options);
}

int baseline_promote_command(const BaselineCliOptions& options) {
  std::vector<Result> results;
  for (const auto& f : options.results) results.push_back(load_result(f));
  PromoteOptions promote;
  promote.allow_noisy = options.allow_noisy;
  Baseline baseline;
  try {
    baseline = build_baseline(results, options.results, promote);
  } catch (const PromoteError& e) {
    std::fprintf(stderr, "pathbench: error: %s\n", e.what());
    return e.exit_code();
  }
  const auto target = baseline_file_for(baseline.node_type, options.dir);
  try {
    check_output_target(target);  // a --dir that is a link loop, a device, a FIFO: refused
  } catch (const std::exception& e) {
    throw InputError(target.string(), "", std::string("cannot write the baseline: ") + e.what());
  }
  std::error_code ec;
  if (std::filesystem::exists(target, ec) && !options.force) {
    throw InputError(target.string(), "",
                     "a baseline for this node type exists; pass --force to replace it");
  }
  std::filesystem::create_directories(target.parent_path(), ec);
  try {
    save_baseline(target, baseline);
  } catch (const DiskFull&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(target.string(), "", std::string("cannot write the baseline: ") + e.what());
  }
  std::size_t ok = 0, metrics = 0;
  for (const auto& c : baseline.cases) {
    if (c.status != CaseStatus::kOk) continue;
    ++ok;
    metrics += c.metrics.size();
  }
  std::printf("baseline for \"%s\": %s (%zu run%s, %zu ok cases, %zu metrics)\n",
              printable_text(baseline.node_type).c_str(), target.c_str(), baseline.runs.size(),
              baseline.runs.size() == 1 ? "" : "s", ok, metrics);
  if (baseline.runs.size() < kMinRunsForSpread) {
    std::printf(
        "note: with %zu run%s the between-run spread is unknown; the gate uses conservative "
        "per-class defaults. Promote at least %zu runs (several back-to-back runs of one node, or "
        "runs of several nodes of this type) to gate on measured spread.\n",
        baseline.runs.size(), baseline.runs.size() == 1 ? "" : "s", kMinRunsForSpread);
  } else {
    // The widest spreads decide what can be gated: show them now, not at the first failure.
    std::vector<std::pair<double, std::string>> widest;
    for (const auto& c : baseline.cases) {
      for (const auto& m : c.metrics) {
        widest.emplace_back(m.between.spread_pct, printable_text(m.name + " " + c.id));
      }
    }
    std::sort(widest.rbegin(), widest.rend());
    std::printf("widest between-run spreads (relative spread of the run medians):\n");
    for (std::size_t i = 0; i < widest.size() && i < 5; ++i) {
      std::printf("  %6.2f %%  %s\n", widest[i].first, widest[i].second.c_str());
    }
  }
  return 0;
}

int baseline_path_command(const BaselineCliOptions& options) {
  if (options.results.size() != 1) {
    throw InputError("baseline path", "", "expected exactly one RESULT");
  }
  const Result result = load_result(options.results.front());
  const auto target = baseline_file_for(node_type_of(result, options.results.front()), options.dir);
  std::printf("%s\n", target.c_str());
  std::error_code ec;
  if (!std::filesystem::exists(target, ec)) {
    std::fprintf(stderr, "pathbench: no baseline yet for this node type: %s\n", target.c_str());
    return 2;
  }
  return 0;
}

}  // namespace pathbench::cli
