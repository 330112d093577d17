// pathbench: microbenchmarks and a regression gate for the CPU-GPU data path.
#include <CLI/CLI.hpp>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>

#include "build_info.hpp"
#include "cli/commands.hpp"
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
  run_cmd->add_option("--node-type", run.node_type,
                      "Label for this node's type (default: derived from GPU model, PCIe link and "
                      "NUMA layout)");

  cli::ListOptions list;
  auto* list_cmd =
      app.add_subcommand("list", "Show scenarios and their expanded cases, and which would skip");
  list_cmd->add_option("scenarios", list.scenarios, "Scenario files or directories")->required();
  list_cmd->add_option("-f,--filter", list.filter, "Only cases whose id matches this regex");
  list_cmd->add_option("-d,--device", list.device, "CUDA device index")->capture_default_str();

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
  } catch (const InputError& e) {
    std::fprintf(stderr, "pathbench: error: %s\n", e.what());
    return static_cast<int>(ExitCode::kBadInput);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pathbench: error: %s\n", e.what());
    return static_cast<int>(ExitCode::kFailure);
  }
  return static_cast<int>(ExitCode::kBadInput);
}
