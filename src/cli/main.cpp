// pathbench: microbenchmarks and a regression gate for the CPU-GPU data path.
#include <CLI/CLI.hpp>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>

#include "build_info.hpp"
#include "cli/commands.hpp"
#include "cli/compare_command.hpp"
#include "cli/export_command.hpp"
#include "core/errors.hpp"

namespace {

constexpr const char* kDescription =
    "pathbench measures the CPU-GPU data path of an inference node (host memory, NUMA placement, "
    "H2D/D2H/D2D copies, pinning) from JSON scenario files, verifies what it claims (pages pinned, "
    "local, huge; copies correct) and writes a pathbench.result/v1 JSON with the node's context.\n"
    "Exit codes: 0 success, 1 a case failed, 2 incomplete, 3 bad input or usage.";

}  // namespace

int main(int argc, char** argv) {
  using namespace pathbench;
  // Google Benchmark keeps global flags; give it a clean argv so ours are never mistaken for its.
  int bm_argc = 1;
  benchmark::Initialize(&bm_argc, argv);

  CLI::App app(kDescription, "pathbench");
  app.set_version_flag("--version",
                       std::string(build_info::kVersion) + " (" + build_info::kGitSha + ")");
  app.require_subcommand(1);

  cli::RunOptions run;
  auto* run_cmd = app.add_subcommand(
      "run", "Run scenario files (or every *.json in a directory) and write a result JSON");
  run_cmd->add_option("scenarios", run.scenarios, "Scenario files or directories")->required();
  run_cmd->add_option("-o,--out", run.out,
                      "Result file (default: results/<node-type>-<UTC timestamp>.json)");
  run_cmd->add_option("-f,--filter", run.filter,
                      "Only cases whose id matches this regular expression (ECMAScript, search)");
  run_cmd->add_option("-r,--repetitions", run.repetitions,
                      "Samples per case, overriding the scenario files");
  run_cmd->add_flag("-q,--quick", run.quick,
                    "At most 3 repetitions and 10 ms per sample: a smoke run, not a measurement");
  run_cmd->add_option("-d,--device", run.device, "CUDA device index for the GPU families")
      ->capture_default_str();
  run_cmd
      ->add_option("--devices", run.devices,
                   "GPUs of the multi-GPU families (peer: {\"gpu_pairs\": \"all\"} expands to "
                   "every ordered pair of them): \"all\" or a comma list of CUDA indexes, e.g. "
                   "0,1; an index this machine lacks is bad input (exit 3)")
      ->capture_default_str();
  run_cmd->add_option("--node-type", run.node_type,
                      "Label for this node's type (default: derived from GPU model, PCIe link and "
                      "NUMA layout)");

  run_cmd->add_option("--timeline", run.timeline_dir,
                      "Capture a CUPTI timeline of one extra, untimed sample of every case and "
                      "write it as a Chrome trace (Perfetto UI) into this folder; its analysis "
                      "adds checks (memory kind the driver saw, copies issued). The overlap "
                      "family always captures, into <result>.timelines/ by default");
  run_cmd->add_option("--benchmark_out", run.benchmark_out,
                      "Also write Google Benchmark's native output here (one entry per case and "
                      "repetition; google/benchmark's tools/compare.py reads the json format)");
  run_cmd
      ->add_option("--benchmark_out_format", run.benchmark_out_format,
                   "Format of --benchmark_out: json, console or csv")
      ->capture_default_str();

  cli::CompareCliOptions compare;
  auto* compare_cmd = app.add_subcommand(
      "compare",
      "Compare RESULT with BASELINE case by case (exit 0 pass, 1 regression or failed case, 2 "
      "missing cases or incomparable results, 3 bad input), or check --floors of one RESULT");
  compare_cmd->add_option("files", compare.files, "BASELINE RESULT, or RESULT with --floors")
      ->required();
  compare_cmd->add_flag("--floors", compare.floors_only,
                        "Only check the node's absolute floors (pinned copies vs the PCIe link "
                        "rate, link trained below its maximum, peer copies vs the NVLink rate); "
                        "no baseline needed");
  compare_cmd->add_flag("--across", compare.across,
                        "Compare different node types: a side-by-side ratio table, no verdicts");
  compare_cmd->add_option("--alpha", compare.alpha, "Significance level of the Mann-Whitney U test")
      ->capture_default_str();
  compare_cmd
      ->add_option("--threshold", compare.threshold_pct,
                   "Default regression threshold in percent of the median (a scenario's "
                   "gate block overrides it)")
      ->capture_default_str();
  compare_cmd
      ->add_option("--floor-fraction", compare.floor_fraction,
                   "Share of the raw PCIe rate pinned copies >= 256 MiB must reach")
      ->capture_default_str();
  compare_cmd
      ->add_option("--nvlink-floor", compare.nvlink_floor_fraction,
                   "Share of N links x the per-link NVLink rate (per direction) that peer "
                   "copies >= 256 MiB over an NVLink pair must reach")
      ->capture_default_str();
  compare_cmd->add_option("--json", compare.json_out, "Write machine-readable verdicts here");
  compare_cmd->add_option("--junit", compare.junit_out,
                          "Write JUnit XML here (one testcase per case; regressions and failures "
                          "as failures, skips as skipped)");

  cli::BaselineCliOptions baseline;
  auto* baseline_cmd = app.add_subcommand("baseline", "Manage per-node-type baselines");
  baseline_cmd->require_subcommand(1);
  auto* promote_cmd = baseline_cmd->add_subcommand(
      "promote", "Copy RESULT to <dir>/<node-type>.json after checking it has no failed case");
  promote_cmd->add_option("result", baseline.result, "A result file")->required();
  promote_cmd->add_option("--dir", baseline.dir, "Baselines folder")->capture_default_str();
  promote_cmd->add_flag("--force", baseline.force, "Replace an existing baseline");
  auto* path_cmd = baseline_cmd->add_subcommand(
      "path", "Print the baseline file RESULT's node type is compared with (exit 2 if none)");
  path_cmd->add_option("result", baseline.result, "A result file")->required();
  path_cmd->add_option("--dir", baseline.dir, "Baselines folder")->capture_default_str();

  std::string export_result;
  std::string export_prometheus;
  auto* export_cmd = app.add_subcommand(
      "export", "Convert a result file for other tools (Prometheus textfile collector)");
  export_cmd->add_option("result", export_result, "A pathbench result JSON")->required();
  export_cmd
      ->add_option("--prometheus", export_prometheus,
                   "Write the Prometheus text exposition to this file (name it *.prom in "
                   "node_exporter's --collector.textfile.directory); - for stdout")
      ->required();

  cli::ListOptions list;
  auto* list_cmd =
      app.add_subcommand("list", "Show scenarios and their expanded cases, and which would skip");
  list_cmd->add_option("scenarios", list.scenarios, "Scenario files or directories")->required();
  list_cmd->add_option("-f,--filter", list.filter, "Only cases whose id matches this regex");
  list_cmd->add_option("-d,--device", list.device, "CUDA device index")->capture_default_str();
  list_cmd
      ->add_option("--devices", list.devices,
                   "GPUs of the multi-GPU families: \"all\" or a comma list such as 0,1")
      ->capture_default_str();

  cli::InventoryOptionsCli inventory;
  auto* inventory_cmd = app.add_subcommand(
      "inventory", "Print the node's context (topology, NUMA, memory, BIOS, driver, GPUs) as JSON");
  inventory_cmd->add_option("-o,--out", inventory.out, "Write to this file instead of stdout");
  inventory_cmd->add_option("--node-type", inventory.node_type, "Label for this node's type");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ExitCode::kBadInput);
  }

  try {
    if (*run_cmd) return cli::run_command(run);
    if (*list_cmd) return cli::list_command(list);
    if (*inventory_cmd) return cli::inventory_command(inventory);
    if (*compare_cmd) return cli::compare_command(compare);
    if (*promote_cmd) return cli::baseline_promote_command(baseline);
    if (*path_cmd) return cli::baseline_path_command(baseline);
    if (*export_cmd) return cli::export_command(export_result, export_prometheus);
  } catch (const InputError& e) {
    std::fprintf(stderr, "pathbench: error: %s\n", e.what());
    return static_cast<int>(ExitCode::kBadInput);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pathbench: error: %s\n", e.what());
    return static_cast<int>(ExitCode::kFailure);
  }
  return static_cast<int>(ExitCode::kBadInput);
}
