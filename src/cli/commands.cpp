#include "cli/commands.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <regex>

#include "cli/summary_table.hpp"
#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "inventory/environment.hpp"
#include "inventory/gpu_selection.hpp"
#include "inventory/inventory.hpp"
#include "measure/benchmark_output.hpp"
#include "measure/case_runner.hpp"
#include "measure/nvtx.hpp"
#include "result/result.hpp"
#include "scenario/duplicate_cases.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "timeline/cupti_library.hpp"

namespace pathbench::cli {

namespace {

struct Plan {
  std::vector<ScenarioFile> files;
  // Cases in file and scenario order, with the scenario each came from.
  std::vector<std::pair<const Scenario*, CaseSpec>> cases;
};

// Loads, expands and validates everything before any buffer is allocated.
Plan make_plan(const std::vector<std::string>& inputs, const std::string& filter,
               const FamilyRegistry& families, const Machine& machine, int device) {
  std::optional<std::regex> re;
  if (!filter.empty()) {
    try {
      re.emplace(filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw InputError::option("--filter",
                               "not a valid regular expression: " + std::string(e.what()));
    }
  }
  Plan plan;
  for (const auto& path : collect_scenario_paths(inputs)) {
    plan.files.push_back(
        load_scenario_file(path, families, machine.numa_nodes, machine.selected_gpus));
  }
  // A case of a later file that an earlier file already produced runs once, as defined first
  // (the shipped folder overlaps on purpose); within one file a repeated id is an error.
  DuplicateCases duplicates;
  for (std::size_t file_index = 0; file_index < plan.files.size(); ++file_index) {
    for (const auto& scenario : plan.files[file_index].scenarios) {
      const Family& family = *families.find(scenario.family);
      auto cases = expand(scenario);
      derive_case_params(cases, family, machine);  // e.g. peer's link=nvlink18, part of the id
      validate_cases(scenario, cases, family, machine, device);
      for (auto& c : cases) {
        if (re && !std::regex_search(c.id, *re)) continue;
        if (duplicates.admit(file_index, c)) plan.cases.emplace_back(&scenario, std::move(c));
      }
    }
  }
  for (const auto& note : duplicates.notes()) {
    std::fprintf(stderr, "pathbench: note: %s\n", note.c_str());
  }
  if (plan.cases.empty()) {
    throw InputError(re ? "--filter" : inputs.front(), "",
                     re ? "no case matches \"" + filter + "\"" : "no cases");
  }
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

// The machine the plan runs on, with `--devices` applied (bad input: exit 3).
Machine machine_for(const Inventory& inventory, const std::string& devices) {
  Machine machine = machine_from(inventory);
  std::vector<int> available;
  for (const auto& g : machine.gpus) available.push_back(g.index);
  if (!machine.has_gpu()) available.clear();
  machine.selected_gpus = parse_device_list(devices, available);
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

int run_command(const RunOptions& options) {
  if (options.repetitions && *options.repetitions < 1) {
    throw InputError::option("--repetitions", "must be at least 1");
  }
  if (!options.benchmark_out.empty()) {
    // Checked before measuring: an unknown format must not cost a whole run.
    write_benchmark_output(options.benchmark_out, options.benchmark_out_format, {});
  }
  const FamilyRegistry families = builtin_families();
  Inventory inventory = collect_inventory(InventoryOptions{options.node_type});
  const Machine machine = machine_for(inventory, options.devices);
  check_device_option(machine, options.device, options.device_given);
  Plan plan = make_plan(options.scenarios, options.filter, families, machine, options.device);
  print_warnings(inventory);
  const bool timelines = !options.timeline_dir.empty() ||
                         std::any_of(plan.cases.begin(), plan.cases.end(),
                                     [](const auto& c) { return c.second.family == "overlap"; });
  if (timelines && std::getenv(kNvtxInjectionVariable) == nullptr) {
    // NVTX ranges reach CUPTI (and so the timeline) only through its injection hook, read once
    // at the first NVTX call; a profiler that set its own (nsys) is left alone.
    if (const std::string cupti = cupti_library_path(); !cupti.empty()) {
      ::setenv(kNvtxInjectionVariable, cupti.c_str(), 0);
    }
  }

  // Before any case: what else loads the node's CPUs and GPUs as measuring begins. Written with
  // the first save, so a run killed half-way still says what it ran under.
  const EnvironmentSample environment_start = collect_environment_sample(inventory);

  Result result;
  result.context = to_json(inventory);
  result.context["device"] = options.device;          // which GPU the GPU families ran on
  result.context["devices"] = machine.selected_gpus;  // the GPUs the multi-GPU families used
  result.context["environment"] = run_environment_json(environment_start, std::nullopt);
  for (const auto& f : plan.files) result.scenario_files.push_back({f.path, f.sha256});
  result.start_time = iso8601_utc_now();
  const std::filesystem::path out =
      options.out.empty()
          ? std::filesystem::path("results") /
                (file_name_label(inventory.node_type) + "-" + compact_timestamp() + ".json")
          : std::filesystem::path(options.out);

  try {
    save_result(out, result);  // fails early, before any measurement, when --out is unwritable
  } catch (const std::exception& e) {
    throw InputError(out.string(), "", std::string("cannot write the result: ") + e.what());
  }

  Progress progress(plan.cases.size(), Progress::stderr_is_terminal());
  RunSettings settings;
  settings.device = options.device;
  if (!options.timeline_dir.empty()) settings.timeline_dir = options.timeline_dir;
  // Families that measure on a timeline keep their traces beside the result.
  settings.default_timeline_dir = out.parent_path() / (out.stem().string() + ".timelines");
  CaseRunner runner(machine, settings, progress);
  const Scenario* current_scenario = nullptr;
  std::optional<NvtxRange> scenario_range;
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
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
    result.cases.push_back(runner.run(spec, *families.find(spec.family)));
    // Saved after every case: a run killed half-way keeps what it measured.
    save_result(out, result);
  }
  scenario_range.reset();
  progress.finish();
  // After the last case: with the start sample, the CPU steal over the run and any GPU process or
  // throttling that appeared while it measured (compare refuses such a result as noisy).
  result.context["environment"] =
      run_environment_json(environment_start, collect_environment_sample(inventory));
  result.end_time = iso8601_utc_now();
  save_result(out, result);

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
  const Machine machine = machine_for(inventory, options.devices);
  check_device_option(machine, options.device, options.device_given);
  const Plan plan = make_plan(options.scenarios, options.filter, families, machine, options.device);
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
  const std::string text = to_json(inventory).dump(2) + "\n";
  if (options.out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    try {
      write_file_atomically(options.out, text);
    } catch (const std::exception& e) {
      throw InputError(options.out, "", std::string("cannot write the inventory: ") + e.what());
    }
    std::fprintf(stderr, "inventory written to %s\n", options.out.c_str());
  }
  return 0;
}

}  // namespace pathbench::cli
