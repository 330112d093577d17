// pathbench: microbenchmarks and a regression gate for the CPU-GPU data path.
#include <CLI/CLI.hpp>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "bench/ipc.hpp"
#include "build_info.hpp"
#include "cli/commands.hpp"
#include "cli/compare_command.hpp"
#include "cli/export_command.hpp"
#include "cli/fleet_command.hpp"
#include "cli/stress_command.hpp"
#include "core/errors.hpp"
#include "core/option_values.hpp"
#include "scenario/scenario_file.hpp"

namespace {

constexpr const char* kDescription =
    "pathbench measures the CPU-GPU data path of an inference node (host memory, NUMA placement, "
    "H2D/D2H/D2D copies, pinning) from JSON scenario files, verifies what it claims (pages pinned, "
    "local, huge; copies correct) and writes a pathbench.result/v1 JSON with the node's context.\n"
    "Exit codes: 0 success, 1 a case failed, 2 incomplete (stopped by SIGINT/SIGTERM/SIGHUP, "
    "disk full, too few samples to judge), 3 bad input or usage.";

}  // namespace

int main(int argc, char** argv) {
  using namespace pathbench;
  // The ipc family's helper (`pathbench ipc-child --fd N`): started by pathbench itself with the
  // child's end of a socket pair, never by a user, so it is not a listed subcommand.
  if (argc >= 2 && std::string_view(argv[1]) == "ipc-child")
    return run_ipc_child(argc - 2, argv + 2);
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
                      "Only cases whose id matches this regular expression (RE2 syntax, search)");
  std::optional<std::string> repetitions_text;  // parsed strictly below (option_values.hpp)
  run_cmd
      ->add_option("-r,--repetitions", repetitions_text,
                   "Samples per case, overriding the scenario files: an integer in [1, 100000], "
                   "as a scenario's repetitions")
      ->type_name("N");
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
  std::optional<std::string> run_pin_cap_text;
  run_cmd
      ->add_option("--max-pinned-pct", run_pin_cap_text,
                   "The most of the node's RAM (MemTotal) a pinning-pressure case (host_memory "
                   "pinned_pct) may lock, in percent: an integer in [0, 90], default 50. A case "
                   "asking for more is skipped, saying so")
      ->type_name("P");
  run_cmd->add_flag("--allow-numa-balancing-change", run.allow_numa_balancing_change,
                    "Let host_memory cases with a numa_balancing axis set "
                    "/proc/sys/kernel/numa_balancing (system-wide, as root) for their duration "
                    "and restore it after; without it they are skipped, saying so");
  run_cmd->add_flag("--resume", run.resume,
                    "Continue the incomplete result at --out (a run stopped by a signal, a full "
                    "disk or a kill): the cases it finished stay, the rest run; the same scenario "
                    "files, node and --device/--devices are required");
  run_cmd->add_option("--node-type", run.node_type,
                      "Label for this node's type (default: derived from GPU model, PCIe link and "
                      "NUMA layout)");

  run_cmd->add_option("--storage-dir", run.storage_dir,
                      "Folder where the storage family writes (and removes) its test files, on "
                      "the file system to measure (default: ./.pathbench-storage; tmpfs cannot "
                      "be read cold or with O_DIRECT)");
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

  // Options compare and gate share (the decision rule, floors, outputs).
  const auto add_judge_options = [](CLI::App* cmd, cli::JudgeCliOptions& o) {
    cmd->add_option("--alpha", o.alpha,
                    "Significance level of both tests: the result's median against the "
                    "baseline's run-to-run spread, and the samples (Mann-Whitney U)")
        ->capture_default_str();
    cmd->add_option("--threshold", o.threshold_pct,
                    "Ceiling in percent for metrics whose gate block sets none: thresholds are "
                    "derived from the baseline's between-run spread, and a metric that would need "
                    "a wider one is reported not gateable (0: the class ceilings, 15 % for "
                    "device-timed and 100 % for host-timed metrics)")
        ->capture_default_str();
    cmd->add_option("--min-runs-host", o.min_runs_host,
                    "Baseline runs a host-timed metric (page faults, pinning, pageable copies: "
                    "heavy-tailed between runs) needs before it is gated; with fewer it is "
                    "reported not gated, never guessed")
        ->capture_default_str();
    cmd->add_option("--min-machines-host", o.min_machines_host,
                    "Machines (host name and GPU UUIDs) a host-timed metric's baseline runs must "
                    "come from before it is gated: such costs move between machines of a type "
                    "more than between runs of one (1: gate a single node against its own runs)")
        ->capture_default_str();
    cmd->add_option("--spread-k", o.k,
                    "A move must also exceed this many times the baseline's between-run spread")
        ->capture_default_str();
    cmd->add_flag("--allow-noisy", o.allow_noisy,
                  "Judge a result or baseline taken under noise (CPU steal, another GPU process, "
                  "throttling) instead of refusing it (exit 2)");
    cmd->add_flag("--allow-few-samples", o.allow_few_samples,
                  "Judge metrics with fewer than 5 samples (a --quick run) on the threshold alone "
                  "instead of answering insufficient_samples, which fails the gate (exit 2)");
    cmd->add_option("--floor-fraction", o.floor_fraction,
                    "Share of the raw PCIe rate pinned copies >= 256 MiB must reach")
        ->capture_default_str();
    cmd->add_option("--nvlink-floor", o.nvlink_floor_fraction,
                    "Share of N links x the per-link NVLink rate (per direction) that peer "
                    "copies >= 256 MiB over an NVLink pair must reach")
        ->capture_default_str();
    cmd->add_option("--json", o.json_out, "Write machine-readable verdicts here");
    cmd->add_option("--junit", o.junit_out,
                    "Write JUnit XML here (what changed as properties; one testcase per case: "
                    "regressions and failures as failures, unstable metrics and skips as skipped)");
  };

  cli::CompareCliOptions compare;
  auto* compare_cmd = app.add_subcommand(
      "compare",
      "Compare RESULT with BASELINE (a pathbench.baseline/v1 of several runs, or one result) "
      "case by case (exit 0 pass, 1 regression or failed case, 2 missing cases, too few samples, "
      "incomparable or noisy results, 3 bad input), or check --floors of one RESULT");
  compare_cmd->add_option("files", compare.files, "BASELINE RESULT, or RESULT with --floors")
      ->required();
  compare_cmd->add_flag("--floors", compare.floors_only,
                        "Only check the node's absolute floors (pinned copies vs the PCIe link "
                        "rate, link trained below its maximum, peer copies vs the NVLink rate); "
                        "no baseline needed");
  compare_cmd->add_flag("--across", compare.across,
                        "Compare different node types: a side-by-side ratio table, no verdicts");
  add_judge_options(compare_cmd, compare);

  cli::FleetCliOptions fleet;
  auto* fleet_cmd = app.add_subcommand(
      "fleet",
      "Compare many nodes' results: group them by node type and topology, give every gated "
      "metric the group median, a robust spread (scaled MAD) and each node's robust z-score, and "
      "flag outlier nodes with what their context says differently (exit 0 no outlier, 1 an "
      "outlier, 2 no group of --min-nodes nodes to judge, 3 bad input)");
  fleet_cmd
      ->add_option("results", fleet.inputs,
                   "Result files, or directories whose *.json results are read (other JSON "
                   "there is passed over)")
      ->required();
  fleet_cmd
      ->add_option("--z-limit", fleet.z_limit,
                   "Robust z-score on the bad side beyond which a node may be an outlier; it "
                   "also has to be worse than the median by more than the metric's gate "
                   "threshold")
      ->capture_default_str();
  fleet_cmd
      ->add_option("--alpha", fleet.alpha,
                   "False-alarm probability per metric and group: the z limit applied is "
                   "at least the prediction limit an ordinary node exceeds with probability "
                   "alpha / nodes (small groups need a larger z)")
      ->capture_default_str();
  fleet_cmd
      ->add_option("--threshold", fleet.threshold_pct,
                   "Threshold in percent for metrics whose case has no gate block")
      ->capture_default_str();
  fleet_cmd
      ->add_option("--min-nodes", fleet.min_nodes,
                   "Smallest group that is judged; smaller groups are listed only")
      ->capture_default_str();
  fleet_cmd
      ->add_option("--min-metrics", fleet.min_metrics,
                   "Outlier metrics that make a node an outlier (fewer: a suspect, listed "
                   "but not failing); a failed case always does")
      ->capture_default_str();
  fleet_cmd->add_option("--json", fleet.json_out, "Write pathbench.fleet/v1 JSON here");
  fleet_cmd->add_option("--junit", fleet.junit_out,
                        "Write JUnit XML here (a testsuite per group, a testcase per node)");
  fleet_cmd->add_option("--html", fleet.html_out,
                        "Write an HTML page here: nodes x metrics heatmap by robust z, outliers "
                        "first, their findings and differences, the node-type table");

  cli::GateCliOptions gate;
  auto* gate_cmd = app.add_subcommand(
      "gate",
      "The hardware-CI gate: compare RESULT with the baseline of its node type, re-run the "
      "suspect cases in fresh processes (as often as --false-alarm needs, or --confirm times), "
      "and fail only on regressions that reproduce in the majority of all runs (others are "
      "reported as flaky). Exit codes as "
      "compare; 2 also when the node type has no baseline yet (the floors are still checked)");
  gate_cmd->add_option("result", gate.result, "A result file")->required();
  gate_cmd->add_option("--baselines", gate.baselines, "Baselines folder")->capture_default_str();
  gate_cmd
      ->add_option("--confirm", gate.confirm,
                   "Re-runs of the suspect cases (0: none; -1: as many as --false-alarm needs, "
                   "1 to 6, from each suspect's chance to show up on an unchanged run)")
      ->capture_default_str();
  gate_cmd
      ->add_option("--false-alarm", gate.false_alarm,
                   "Chance an unchanged node may fail the gate, shared out over the gated "
                   "metrics; sizes the re-runs when --confirm is -1")
      ->capture_default_str();
  gate_cmd->add_option("--rerun-dir", gate.rerun_dir,
                       "Where the re-runs' results go (default: <result>.reruns/ beside it)");
  gate_cmd->add_option("--rerun-timeout", gate.rerun_timeout_s, "Seconds one re-run may take")
      ->capture_default_str();
  add_judge_options(gate_cmd, gate);

  cli::BaselineCliOptions baseline;
  auto* baseline_cmd = app.add_subcommand("baseline", "Manage per-node-type baselines");
  baseline_cmd->require_subcommand(1);
  auto* promote_cmd = baseline_cmd->add_subcommand(
      "promote",
      "Write <dir>/<node-type>.json (pathbench.baseline/v1) from one or more finished results of "
      "one node type: every run's medians and samples and the between-run spread per metric. "
      "Promote several runs (back-to-back runs of one node, or runs of several nodes of the "
      "type): with fewer than 3 the spread is unknown and the gate uses conservative defaults");
  promote_cmd->add_option("results", baseline.results, "Result files")->required();
  promote_cmd->add_option("--dir", baseline.dir, "Baselines folder")->capture_default_str();
  promote_cmd->add_flag("--force", baseline.force, "Replace an existing baseline");
  promote_cmd->add_flag("--allow-noisy", baseline.allow_noisy,
                        "Accept runs taken under noise (refused by default, exit 2)");
  cli::BaselineUpdateCliOptions update;
  auto* update_cmd = baseline_cmd->add_subcommand(
      "update",
      "Add finished results to an existing baseline file (pathbench.baseline/v1) and keep only "
      "its newest --keep runs by start time, recomputing the between-run spread from them; the "
      "file is rewritten atomically. Every run, the baseline's own included, is checked as "
      "promote checks it, and what promote refuses is refused (writing nothing) with its exit "
      "codes: a failed case, an unfinished run, too few samples, other cases, a run the baseline "
      "already holds (3); another node type or topology, a run taken under noise (2). Prints a "
      "line per run added and per run dropped, then promote's summary");
  update_cmd->add_option("baseline", update.baseline, "The baseline file to update")->required();
  update_cmd->add_option("results", update.results, "Result files to add")->required();
  update_cmd
      ->add_option("--keep", update.keep,
                   "Keep the newest N runs (at least 1); older ones are dropped from the baseline")
      ->type_name("N")
      ->capture_default_str();
  update_cmd->add_flag("--allow-noisy", update.allow_noisy,
                       "Accept runs taken under noise (refused by default, exit 2)");
  auto* path_cmd = baseline_cmd->add_subcommand(
      "path", "Print the baseline file RESULT's node type is compared with (exit 2 if none)");
  path_cmd->add_option("result", baseline.results, "A result file")->required()->expected(1);
  path_cmd->add_option("--dir", baseline.dir, "Baselines folder")->capture_default_str();

  std::vector<std::string> export_files;
  std::string export_prometheus;
  bool export_json_lines = false;
  cli::JsonLinesOptions json_lines;
  auto* export_cmd = app.add_subcommand(
      "export",
      "Convert a result file for other tools: --prometheus (the textfile collector), or "
      "--json-lines (pathbench's files as read by pathbench itself, for the report scripts)");
  export_cmd
      ->add_option("files", export_files,
                   "--prometheus: one pathbench result JSON; --json-lines: one or more result, "
                   "baseline or (with --as json) other JSON files")
      ->required();
  auto* prometheus_opt =
      export_cmd->add_option("--prometheus", export_prometheus,
                             "Write the Prometheus text exposition of one result to this file "
                             "(name it *.prom in node_exporter's --collector.textfile.directory); "
                             "- for stdout. Excludes --json-lines");
  auto* json_lines_flag = export_cmd->add_flag(
      "--json-lines", export_json_lines,
      "Read every file with pathbench's own reader (refused as pathbench refuses it: exit 3, "
      "nothing on stdout, the error also as one JSON line on stderr) and write one JSON line per "
      "file: {\"path\", \"schema\", \"document\": the document as read, and derived values}. "
      "Excludes --prometheus");
  json_lines_flag->excludes(prometheus_opt);
  export_cmd
      ->add_option("--as", json_lines.as,
                   "--json-lines: auto (a result or a baseline, by its schema), result, baseline "
                   "(a result is refused), or json (any JSON document, by the strict JSON reader "
                   "alone: a compare file, a Chrome trace)")
      ->check(CLI::IsMember({"auto", "result", "baseline", "json"}))
      ->needs(json_lines_flag)
      ->capture_default_str();
  export_cmd
      ->add_option("--max-bytes", json_lines.max_bytes,
                   "--json-lines: refuse a file larger than this before reading it")
      ->check(CLI::PositiveNumber)
      ->needs(json_lines_flag);

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
  std::optional<std::string> list_pin_cap_text;
  list_cmd
      ->add_option("--max-pinned-pct", list_pin_cap_text,
                   "As for run: the pinning cap that decides which cases would skip")
      ->type_name("P");

  list_cmd->add_flag("--allow-numa-balancing-change", list.allow_numa_balancing_change,
                     "As for run: whether numa_balancing cases would run or skip");

  cli::InventoryOptionsCli inventory;
  auto* inventory_cmd = app.add_subcommand(
      "inventory", "Print the node's context (topology, NUMA, memory, BIOS, driver, GPUs) as JSON");
  inventory_cmd->add_option("-o,--out", inventory.out, "Write to this file instead of stdout");
  inventory_cmd->add_option("--node-type", inventory.node_type, "Label for this node's type");
  inventory_cmd
      ->add_option("--tp-group", inventory.tp_group,
                   "Check instead of printing: do these GPUs (\"all\" or a comma list of CUDA "
                   "indexes) form one NVLink domain, every pair on NVLink, so a tensor-parallel "
                   "all-reduce over them never crosses the host? Exit 0 yes, 1 no (naming the "
                   "first pair that is not and what joins it), 3 for an index this machine lacks")
      ->type_name("LIST");

  StressOptions stress;
  auto* stress_cmd = app.add_subcommand(
      "stress",
      "Load the data path in the background (GPU copies, host memory bandwidth) to rehearse the "
      "gate under contention: run it beside `pathbench run` and the affected cases must move");
  stress_cmd
      ->add_option("--gpu-copies", stress.gpu_copies,
                   "h2d, d2h or both: copies between GPU --device and pinned host memory "
                   "(cudaMallocHost, on --host-node) on a stream of their own; both runs H2D and "
                   "D2H at once, one stream each")
      ->type_name("h2d|d2h|both");
  stress_cmd
      ->add_option("-d,--device", stress.device,
                   "GPU of --gpu-copies; its NUMA node is the default --host-node")
      ->capture_default_str();
  stress_cmd
      ->add_option("--copy-bytes", stress.copy_bytes,
                   "Bytes per copy, with binary units as in scenario files (default 64MiB)")
      ->type_name("SIZE");
  stress_cmd
      ->add_option("--duty", stress.duty,
                   "Share of every period spent copying, 0 < F <= 1 (default 1): copies are "
                   "issued back to back, each waited for, for the first F x P ms of every period, "
                   "then the stream is idle until the next one. Duty 0.1-0.2 costs a measured "
                   "pinned H2D copy a few percent, duty 1 up to half")
      ->type_name("F");
  stress_cmd->add_option("--period-ms", stress.period_ms, "Period of the duty cycle (default 100)")
      ->type_name("P");
  stress_cmd
      ->add_option("--host-membw-threads", stress.host_threads,
                   "Threads that memcpy between two --host-bytes buffers each, buffers bound to "
                   "--host-node and threads run on its CPUs (at most as many threads as it has "
                   "CPUs); every memcpy of N bytes counts N bytes")
      ->type_name("N");
  stress_cmd
      ->add_option("--host-bytes", stress.host_bytes,
                   "Size of each of a host thread's two buffers (default 256MiB: beyond any "
                   "last-level cache, so the copies reach DRAM; threads x 2 x SIZE must fit in "
                   "the available memory)")
      ->type_name("SIZE");
  stress_cmd
      ->add_option("--host-node", stress.host_node,
                   "NUMA node of all host buffers (the host threads' and the pinned copy buffers) "
                   "and of the host threads' CPUs (default: the node of --device's GPU, else the "
                   "first node this process may use)")
      ->type_name("K");
  stress_cmd
      ->add_option("--duration", stress.duration_s,
                   "Stop after S seconds; 0 (default): run until SIGINT or SIGTERM. Either way it "
                   "stops cleanly, frees every buffer and exits 0")
      ->type_name("S")
      ->capture_default_str();
  stress_cmd->footer(
      "At least one of --gpu-copies and --host-membw-threads is required; without a usable GPU "
      "--gpu-copies is refused with the CUDA probe's reason (exit 3).\n"
      "Output: one line at start saying what runs where (stdout), every load's background GB/s "
      "once a second (stderr), and a summary line at the end (stdout): total bytes and average "
      "GB/s per load, and for GPU copies the rate while copying.\n"
      "With --gpu-copies this process is another GPU process to a run beside it: compare and gate "
      "refuse such a result as taken under noise (exit 2) unless --allow-noisy.\n"
      "Example, checking that the gate notices a busy copy engine:\n"
      "  pathbench stress --gpu-copies h2d --duty 0.2 --duration 300 &\n"
      "  pathbench run scenarios/default.json --filter copy/ --out contended.json\n"
      "  pathbench compare BASELINE contended.json                 # exit 2: noise\n"
      "  pathbench compare BASELINE contended.json --allow-noisy   # pinned H2D cases regress");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ExitCode::kBadInput);
  }

  run.device_given = run_cmd->count("--device") > 0;
  run.argv.assign(argv, argv + argc);
  list.device_given = list_cmd->count("--device") > 0;
  try {
    if (repetitions_text) {
      run.repetitions = static_cast<int>(
          parse_integer_option("--repetitions", *repetitions_text, 1, kMaxRepetitions));
    }
    const auto pin_cap = [](const std::optional<std::string>& text) {
      return text ? static_cast<int>(
                        parse_integer_option("--max-pinned-pct", *text, 0, kMaxPinCapPct))
                  : kDefaultPinCapPct;
    };
    run.max_pinned_pct = pin_cap(run_pin_cap_text);
    list.max_pinned_pct = pin_cap(list_pin_cap_text);
    if (*run_cmd) return cli::run_command(run);
    if (*list_cmd) return cli::list_command(list);
    if (*inventory_cmd) return cli::inventory_command(inventory);
    if (*compare_cmd) return cli::compare_command(compare);
    if (*gate_cmd) return cli::gate_command(gate);
    if (*fleet_cmd) return cli::fleet_command(fleet);
    if (*promote_cmd) return cli::baseline_promote_command(baseline);
    if (*update_cmd) return cli::baseline_update_command(update);
    if (*path_cmd) return cli::baseline_path_command(baseline);
    if (*export_cmd) {
      if (export_json_lines) return cli::export_json_lines_command(export_files, json_lines);
      if (export_cmd->count("--prometheus") == 0) {
        throw InputError::option("export", "give --prometheus FILE or --json-lines");
      }
      if (export_files.size() != 1) {
        throw InputError::option(
            "--prometheus", "exports one result file, not " + std::to_string(export_files.size()));
      }
      return cli::export_command(export_files.front(), export_prometheus);
    }
    if (*stress_cmd) return cli::stress_command(stress);
  } catch (const InputError& e) {
    std::fprintf(stderr, "pathbench: error: %s\n", e.what());  // printable already
    return static_cast<int>(ExitCode::kBadInput);
  } catch (const DiskFull& e) {
    // Not bad input and not a failed case: the output could not be completed.
    std::fprintf(stderr, "pathbench: error: %s; the output is incomplete\n",
                 printable_text(shortened_text(e.what())).c_str());
    return static_cast<int>(ExitCode::kIncomplete);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pathbench: error: %s\n",
                 printable_text(shortened_text(e.what())).c_str());
    return static_cast<int>(ExitCode::kFailure);
  }
  return static_cast<int>(ExitCode::kBadInput);
}
