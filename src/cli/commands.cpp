#include "cli/commands.hpp"
#include "bench/families.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <unordered_set>

#include <unistd.h>

#include "cli/summary_table.hpp"
#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/stop_signals.hpp"
#include "core/units.hpp"
#include "cuda/cuda_probe.hpp"
#include "inventory/environment.hpp"
#include "inventory/gpu_selection.hpp"
#include "inventory/inventory.hpp"
#include "inventory/nvlink_domains.hpp"
#include "measure/benchmark_output.hpp"
#include "measure/case_runner.hpp"
#include "measure/nvtx.hpp"
#include "result/result.hpp"
#include "result/run_record.hpp"
#include "scenario/run_plan.hpp"
#include "timeline/cupti_library.hpp"

namespace pathbench::cli {

void write_report_file(const std::string& path, const std::string& text, const char* what) {
  if (path.empty()) return;
  write_output_file(path, text, std::string("the ") + what);
  std::fprintf(stderr, "%s written to %s\n", what, path.c_str());
}

namespace {

// The plan, its warnings and notes printed (before the inventory's).
RunPlan make_plan(const std::vector<std::string>& inputs, const std::string& filter,
                  const FamilyRegistry& families, const Machine& machine, int device) {
  RunPlan plan = make_run_plan(inputs, filter, families, machine, device);
  for (const auto& warning : plan.warnings) {
    std::fprintf(stderr, "pathbench: warning: %s\n", warning.c_str());
  }
  for (const auto& note : plan.notes) std::fprintf(stderr, "pathbench: note: %s\n", note.c_str());
  return plan;
}

std::string compact_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// An explicit --device must name a GPU this machine can use, on every machine: otherwise a
// typo (or a CPU-only node) would pass as a run whose GPU cases all skipped.
void check_device_option(const Machine& machine, int device, bool given) {
  if (!given) return;
  if (const auto why = machine.gpu_unavailable_reason(device)) {
    throw InputError::option("--device", *why);
  }
}

// The machine the plan runs on, with `--devices` and the pinning cap applied (bad input: exit 3).
Machine machine_for(const Inventory& inventory, const std::string& devices, int pin_cap_pct) {
  Machine machine = machine_from(inventory);
  std::vector<int> available;
  for (const auto& g : machine.gpus) available.push_back(g.index);
  if (!machine.has_gpu()) available.clear();
  machine.selected_gpus = parse_device_list(devices, available);
  machine.pin_cap_pct = pin_cap_pct;
  return machine;
}

void print_warnings(const Inventory& inventory) {
  for (const auto& w : inventory.warnings)
    std::fprintf(stderr, "pathbench: warning: %s\n", w.c_str());
}

}  // namespace

std::string file_name_label(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
    if (keep) {
      out += c;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "node" : out;
}

namespace {

// The incomplete result at `out`, checked to be this run's to continue: same node, same scenario
// files, same GPUs. Cases a stop signal interrupted run again; every other finished case stays.
Result resumable_result(const std::filesystem::path& out, const RunPlan& plan,
                        const Inventory& inventory, const RunOptions& options,
                        const Machine& machine) {
  Result r = load_result(out);  // with the cases a killed run left in its journal
  const std::string file = out.string();
  if (r.complete) {
    throw InputError(file, "/complete", "the run finished; there is nothing to resume");
  }
  std::vector<ScenarioFileRef> files;
  for (const auto& f : plan.files) files.push_back({f.path, f.sha256});
  const auto same = [](const ScenarioFileRef& a, const ScenarioFileRef& b) {
    return a.path == b.path && a.sha256 == b.sha256;
  };
  if (!std::equal(files.begin(), files.end(), r.scenario_files.begin(), r.scenario_files.end(),
                  same)) {
    throw InputError(file, "/context/scenario_files",
                     "the run began with other scenario files (or they changed since); resume "
                     "with the same files, or start a new run");
  }
  const auto text = [&](const char* key) {
    const auto it = r.context.find(key);
    return it != r.context.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (text("hostname") != inventory.hostname) {
    throw InputError(file, "/context/hostname",
                     "the run began on " + text("hostname") + "; a result mixes no nodes");
  }
  if (r.context.value("device", -1) != options.device ||
      r.context.value("devices", std::vector<int>{}) != machine.selected_gpus) {
    throw InputError(file, "/context/device",
                     "the run began with other --device/--devices; resume with the same");
  }
  if (r.context.value("max_pinned_pct", kDefaultPinCapPct) != machine.pin_cap_pct) {
    throw InputError(file, "/context/max_pinned_pct",
                     "the run began with --max-pinned-pct " +
                         std::to_string(r.context.value("max_pinned_pct", kDefaultPinCapPct)) +
                         "; resume with the same");
  }
  std::erase_if(r.cases, [](const CaseResult& c) {
    return c.status == CaseStatus::kFailed && c.reason.starts_with(kInterruptedReason);
  });
  return r;
}

// Replaces this process with a fresh one running the same command line with --resume (and the
// --out it wrote), after a case left the CUDA context unusable. Returns only when exec fails.
void continue_in_fresh_process(const RunOptions& options, const std::filesystem::path& out) {
  std::vector<std::string> args = options.argv;
  if (!options.resume) args.emplace_back("--resume");
  if (options.out.empty()) {
    args.emplace_back("--out");
    args.push_back(out.string());
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  release_kept_between_cases();  // exec runs no destructors
  ::execv("/proc/self/exe", argv.data());
  std::fprintf(stderr, "pathbench: error: cannot start a fresh process: %s\n",
               std::strerror(errno));
}

}  // namespace

int run_command(const RunOptions& options) {
  // From the start: a stop while the inventory is read must not leave half a run. A second
  // stop exits at once (exit 2), the result keeping what was saved.
  StopSignals stop({SIGINT, SIGTERM, SIGHUP}, static_cast<int>(ExitCode::kIncomplete));
  if (options.repetitions && *options.repetitions < 1) {
    throw InputError::option("--repetitions", "must be at least 1");
  }
  if (options.resume && options.out.empty()) {
    throw InputError::option("--resume", "needs --out, the incomplete result to continue");
  }
  if (!options.benchmark_out.empty()) {
    // Checked before measuring: an unknown format must not cost a whole run.
    write_benchmark_output(options.benchmark_out, options.benchmark_out_format, {});
  }
  const FamilyRegistry families = builtin_families();
  Inventory inventory = collect_inventory(InventoryOptions{options.node_type});
  Machine machine = machine_for(inventory, options.devices, options.max_pinned_pct);
  machine.numa_balancing_change_allowed = options.allow_numa_balancing_change;
  machine.storage_dir = options.storage_dir;
  check_device_option(machine, options.device, options.device_given);
  RunPlan plan = make_plan(options.scenarios, options.filter, families, machine, options.device);
  print_warnings(inventory);
  const bool timelines = !options.timeline_dir.empty() ||
                         std::any_of(plan.cases.begin(), plan.cases.end(), [&](const auto& c) {
                           return families.find(c.second.family)->measures_on_timeline();
                         });
  if (timelines && std::getenv(kNvtxInjectionVariable) == nullptr) {
    // NVTX ranges reach CUPTI (and so the timeline) only through its injection hook, read once
    // at the first NVTX call; a profiler that set its own (nsys) is left alone.
    if (const std::string cupti = cupti_library_path(); !cupti.empty()) {
      ::setenv(kNvtxInjectionVariable, cupti.c_str(), 0);
    }
  }
  const std::filesystem::path out =
      options.out.empty()
          ? std::filesystem::path("results") /
                (file_name_label(inventory.node_type) + "-" + compact_timestamp() + ".json")
          : std::filesystem::path(options.out);

  // Before any case: what else loads the node's CPUs and GPUs as measuring begins. Written with
  // the first save, so a run killed half-way still says what it ran under.
  const EnvironmentSample environment_start = collect_environment_sample(inventory);
  Result header;
  if (options.resume) {
    header = resumable_result(out, plan, inventory, options, machine);
  } else {
    header.context = to_json(inventory);
    header.context["device"] = options.device;               // which GPU the GPU families ran on
    header.context["devices"] = machine.selected_gpus;       // the GPUs the multi-GPU families used
    header.context["max_pinned_pct"] = machine.pin_cap_pct;  // the cap pinning pressure ran under
    header.context["environment"] = run_environment_json(environment_start, std::nullopt);
    for (const auto& f : plan.files) header.scenario_files.push_back({f.path, f.sha256});
    header.start_time = iso8601_utc_now();
  }
  RunRecord record(out, std::move(header));
  // Cases a resumed run already has are not run again.
  std::unordered_set<std::string> done;
  for (const auto& c : record.result().cases) done.insert(c.id);
  std::erase_if(plan.cases, [&](const auto& c) { return done.contains(c.second.id); });
  if (options.resume) {
    std::fprintf(stderr, "pathbench: resuming %s: %zu cases done, %zu to run\n",
                 out.string().c_str(), done.size(), plan.cases.size());
  }

  Progress progress(plan.cases.size(), Progress::stderr_is_terminal());
  RunSettings settings;
  settings.device = options.device;
  if (!options.timeline_dir.empty()) settings.timeline_dir = options.timeline_dir;
  // Families that measure on a timeline keep their traces beside the result.
  settings.default_timeline_dir = out.parent_path() / (out.stem().string() + ".timelines");
  std::vector<int> gpus = machine.selected_gpus;
  if (machine.has_gpu()) gpus.push_back(options.device);
  CaseRunner runner(machine, settings, progress);
  const Scenario* current_scenario = nullptr;
  std::optional<NvtxRange> scenario_range;
  std::size_t finished = 0;
  for (std::size_t i = 0; i < plan.cases.size() && !stop.received(); ++i) {
    auto& [scenario, spec] = plan.cases[i];
    if (scenario != current_scenario) {
      scenario_range.reset();
      scenario_range.emplace(scenario->name, scenario->family);
      current_scenario = scenario;
    }
    if (options.quick) {
      spec.repetitions = std::min(spec.repetitions, 3);
      spec.min_time = std::min(spec.min_time, 0.01);
    }
    if (options.repetitions) spec.repetitions = *options.repetitions;
    progress.case_started(i, spec.id);
    CaseResult c = runner.run(spec, *families.find(spec.family));
    // A sticky CUDA error fails every later call of this process: the case that caused it fails
    // alone, and the rest of the run continues in a fresh process.
    std::optional<std::string> fault;
    if (c.status == CaseStatus::kFailed && machine.has_gpu()) fault = cuda_context_fault(gpus);
    if (fault) {
      c.reason += "; the case left the CUDA context unusable (" + *fault + ")";
    }
    const std::string status(to_string(c.status));
    const double seconds = c.elapsed_seconds;
    record.add(std::move(c));  // journaled at once: a run killed now keeps this case
    progress.case_finished(spec.id, status, seconds);
    ++finished;
    if (fault && i + 1 < plan.cases.size() && !stop.received()) {
      std::fprintf(stderr,
                   "pathbench: %s left the CUDA context unusable (%s); the remaining %zu cases "
                   "continue in a fresh process\n",
                   spec.id.c_str(), fault->c_str(), plan.cases.size() - i - 1);
      record.finish(false, "continued in a fresh process after a CUDA fault in " + spec.id);
      continue_in_fresh_process(options, out);
      return static_cast<int>(ExitCode::kIncomplete);
    }
  }
  scenario_range.reset();
  release_kept_between_cases();
  progress.finish();
  Result& result = record.result();
  // After the last case: with the start sample, the CPU steal over the run and any GPU process or
  // throttling that appeared while it measured (compare refuses such a result as noisy).
  result.context["environment"] =
      run_environment_json(environment_start, collect_environment_sample(inventory));
  if (const auto sig = stop.received()) {
    const std::string reason = std::string(kInterruptedReason) + " " + signal_name(*sig);
    record.finish(false, reason);
    std::fprintf(stderr,
                 "pathbench: %s after %zu of %zu cases; the partial result (\"complete\": false) "
                 "is %s\n  continue it with the same arguments and --resume%s\n",
                 reason.c_str(), finished, plan.cases.size(), out.string().c_str(),
                 options.out.empty() ? (" --out " + out.string()).c_str() : "");
    return static_cast<int>(ExitCode::kIncomplete);
  }
  record.finish(true);

  print_summary_table(result, stdout);
  std::printf("result: %s\n", out.string().c_str());
  if (!options.benchmark_out.empty()) {
    write_benchmark_output(options.benchmark_out, options.benchmark_out_format,
                           runner.benchmark_runs());
    std::printf("Google Benchmark output (%s): %s\n", options.benchmark_out_format.c_str(),
                options.benchmark_out.c_str());
  }
  const bool any_failed = std::any_of(result.cases.begin(), result.cases.end(), [](const auto& c) {
    return c.status == CaseStatus::kFailed;
  });
  return static_cast<int>(any_failed ? ExitCode::kFailure : ExitCode::kOk);
}

int list_command(const ListOptions& options) {
  const FamilyRegistry families = builtin_families();
  const Inventory inventory = collect_inventory(InventoryOptions{});
  Machine machine = machine_for(inventory, options.devices, options.max_pinned_pct);
  machine.numa_balancing_change_allowed = options.allow_numa_balancing_change;
  check_device_option(machine, options.device, options.device_given);
  const RunPlan plan =
      make_plan(options.scenarios, options.filter, families, machine, options.device);
  const Scenario* current = nullptr;
  std::size_t skipped = 0;
  for (const auto& [scenario, spec] : plan.cases) {
    if (scenario != current) {
      current = scenario;
      std::printf("%s  %s  [family %s, %d repetitions, min_time %g s]\n", scenario->file.c_str(),
                  scenario->name.c_str(), scenario->family.c_str(), scenario->repetitions,
                  scenario->min_time);
      if (!scenario->description.empty()) std::printf("  %s\n", scenario->description.c_str());
    }
    const auto why = families.find(spec.family)->skip_reason(spec, machine, options.device);
    if (why) ++skipped;
    std::printf("    %s%s\n", spec.id.c_str(),
                why ? ("   (skipped here: " + *why + ")").c_str() : "");
  }
  std::printf("%zu cases, %zu would be skipped on this machine\n", plan.cases.size(), skipped);
  return 0;
}

int inventory_command(const InventoryOptionsCli& options) {
  const Inventory inventory = collect_inventory(InventoryOptions{options.node_type});
  print_warnings(inventory);
  if (!options.tp_group.empty()) {
    std::vector<int> available;
    for (const auto& g : inventory.gpus) available.push_back(g.index);
    const std::vector<int> group = parse_device_list(options.tp_group, available, "--tp-group");
    if (group.size() < 2) {
      std::fprintf(stderr,
                   "pathbench: tensor-parallel group %s has %zu GPU(s): no pair, nothing to "
                   "check\n",
                   options.tp_group.c_str(), group.size());
      return 0;
    }
    if (const auto problem = tp_group_problem(group, inventory.links)) {
      std::fprintf(stderr, "pathbench: tensor-parallel group %s is not one NVLink domain: %s\n",
                   options.tp_group.c_str(), problem->c_str());
      return static_cast<int>(ExitCode::kFailure);
    }
    std::fprintf(stderr, "pathbench: tensor-parallel group %s: every pair on NVLink\n",
                 options.tp_group.c_str());
    return 0;
  }
  const std::string text = to_json(inventory).dump(2) + "\n";
  if (options.out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    write_output_file(options.out, text, "the inventory");
    std::fprintf(stderr, "inventory written to %s\n", options.out.c_str());
  }
  return 0;
}

}  // namespace pathbench::cli
