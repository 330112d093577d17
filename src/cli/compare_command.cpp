#include "cli/compare_command.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "compare/baseline.hpp"
#include "compare/baseline_update.hpp"
#include "compare/compare.hpp"
#include "compare/gate_capability.hpp"
#include "compare/gate_rule.hpp"
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
  // The range of a gate block's thresholds (result/gate_block.hpp): inf or 1e400 would gate
  // nothing. 0 (the default): the class ceilings.
  if (!std::isfinite(options.threshold_pct) || options.threshold_pct < 0 ||
      options.threshold_pct > kMaxGatePercent) {
    char found[64];
    std::snprintf(found, sizeof found, "%g", options.threshold_pct);
    throw InputError::option("--threshold",
                             std::string("expected a percentage in (0, 1000], as a gate block's "
                                         "threshold_pct (0: the class ceilings), found ") +
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
  if (options.min_runs_host < 1 || options.min_runs_host > 1000) {
    throw InputError::option("--min-runs-host", "must be in [1, 1000]");
  }
  compare.min_runs_heavy = static_cast<std::size_t>(options.min_runs_host);
  if (options.min_machines_host < 1 || options.min_machines_host > 1000) {
    throw InputError::option("--min-machines-host", "must be in [1, 1000]");
  }
  compare.min_machines_heavy = static_cast<std::size_t>(options.min_machines_host);
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
    write_report_file(options.json_out, to_json_text(comparison), "comparison JSON");
  }
  if (!options.junit_out.empty()) {
    write_report_file(options.junit_out, junit_xml(comparison), "JUnit XML");
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

// The re-runs that keep an unchanged node's chance to fail the whole gate under `target`: the
// target is shared out over the gated metrics, and each suspect's own chance to show up on one
// unchanged run (its false_alarm_per_run) says how many re-runs its confirmation needs
// (compare/gate_rule.hpp, README "Confirmation").
int confirmation_reruns(const Comparison& comparison, double target) {
  constexpr int kMaxAutoReruns = 6;
  std::size_t gated = 0;
  for (const auto& k : comparison.cases) {
    for (const auto& m : k.metrics) {
      gated += m.verdict != Verdict::kUnstable && m.verdict != Verdict::kMissing &&
               m.verdict != Verdict::kInsufficient && m.verdict != Verdict::kAcross;
    }
  }
  const double per_metric = target / static_cast<double>(std::max<std::size_t>(gated, 1));
  int reruns = 1;
  double worst_p = 0;
  for (const auto& k : comparison.cases) {
    for (const auto& m : k.metrics) {
      if (m.verdict != Verdict::kRegression) continue;
      worst_p = std::max(worst_p, m.false_alarm_per_run);
      reruns =
          std::max(reruns, reruns_for_target(m.false_alarm_per_run, per_metric, kMaxAutoReruns));
    }
  }
  std::fprintf(stderr,
               "pathbench gate: %d re-run%s: keeps an unchanged node's chance to fail under %.2g "
               "(--false-alarm) over %zu gated metrics (%.2g each; a suspect shows on one "
               "unchanged run with p <= %.3g, and must show in the majority of the runs)%s\n",
               reruns, reruns == 1 ? "" : "s", target, gated, per_metric, worst_p,
               confirmed_false_alarm(worst_p, reruns) > per_metric
                   ? "; the target is out of reach within 6 re-runs: grow the baseline"
                   : "");
  return reruns;
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
  if (options.confirm < -1 || options.confirm > 20) {
    throw InputError::option("--confirm", "must be in [0, 20], or -1 (sized to --false-alarm)");
  }
  if (!(options.false_alarm > 0 && options.false_alarm < 1)) {
    throw InputError::option("--false-alarm", "must be in (0, 1)");
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
  const int confirm = options.confirm >= 0 || suspects.empty()
                          ? std::max(options.confirm, 0)
                          : confirmation_reruns(comparison, options.false_alarm);
  if (!suspects.empty() && confirm > 0 && judged) {
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
      for (int i = 1; i <= confirm; ++i) {
        const auto out = dir / ("rerun-" + std::to_string(i) + ".json");
        std::fprintf(stderr,
                     "pathbench gate: re-run %d of %d: %zu suspect case%s in a fresh process\n", i,
                     confirm, suspects.size(), suspects.size() == 1 ? "" : "s");
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

namespace {

// Atomically (save_baseline): an error names the file, a full disk stays DiskFull (exit 2).
void write_baseline(const std::filesystem::path& target, const Baseline& baseline) {
  try {
    save_baseline(target, baseline);
  } catch (const DiskFull&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(target.string(), "", std::string("cannot write the baseline: ") + e.what());
  }
}

// What `baseline promote` and `baseline update` print once the baseline is written.
void print_baseline_summary(const Baseline& baseline, const std::filesystem::path& target) {
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
  }
  // What the gate will detect on this node type: shown now, not at the first failure.
  const std::string table = gate_capability_text(gate_capability(baseline, CompareOptions{}));
  std::fputs(printable_lines(table, {}).c_str(), stdout);
}

}  // namespace

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
  write_baseline(target, baseline);
  print_baseline_summary(baseline, target);
  return 0;
}

int baseline_update_command(const BaselineUpdateCliOptions& options) {
  if (options.keep < 1) {
    throw InputError::option("--keep", "must be at least 1 (the newest runs to keep)");
  }
  const std::filesystem::path target(options.baseline);
  // Read as a baseline only: a result would be read as a one-run baseline (load_baseline) and
  // replaced by one without a word.
  const Baseline current = baseline_from_json(load_json_document(target), target.string());
  std::vector<Result> results;
  for (const auto& f : options.results) results.push_back(load_result(f));
  PromoteOptions promote;
  promote.allow_noisy = options.allow_noisy;
  BaselineUpdate update;
  try {
    update = update_baseline(current, target.string(), std::move(results), options.results,
                             static_cast<std::size_t>(options.keep), promote);
  } catch (const PromoteError& e) {
    std::fprintf(stderr, "pathbench: error: %s\n", e.what());
    return e.exit_code();
  }
  write_baseline(target, update.baseline);
  const auto say = [](const char* what, const BaselineRunRef& run, const char* why) {
    std::printf("%s %s (host %s, started %s)%s\n", what, printable_text(run.file).c_str(),
                printable_text(run.hostname).c_str(), printable_text(run.start_time).c_str(), why);
  };
  const std::string older = ": older than the newest " + std::to_string(options.keep) + " runs";
  for (const auto& run : update.added) say("added", run, "");
  for (const auto& run : update.too_old) say("not added", run, older.c_str());
  for (const auto& run : update.dropped) say("dropped", run, older.c_str());
  print_baseline_summary(update.baseline, target);
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
