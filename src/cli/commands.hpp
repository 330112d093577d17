#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inventory/machine.hpp"

namespace pathbench::cli {

// Writes a report (comparison or fleet JSON, JUnit XML) to PATH atomically and says so on stderr;
// nothing when PATH is empty (the option was not given). WHAT names it ("comparison JSON").
void write_report_file(const std::string& path, const std::string& text, const char* what);

struct RunOptions {
  std::vector<std::string> scenarios;
  std::string out;  // empty: results/<node-type>-<timestamp>.json
  std::string filter;
  std::optional<int> repetitions;
  bool quick = false;
  int device = 0;
  bool device_given = false;    // --device was on the command line: it must name a usable GPU
  std::string devices = "all";  // --devices: the GPUs of multi-GPU families (peer pairs)
  int max_pinned_pct = kDefaultPinCapPct;    // --max-pinned-pct: cap of pinning-pressure cases
  bool allow_numa_balancing_change = false;  // --allow-numa-balancing-change
  std::string node_type;
  std::string storage_dir;    // --storage-dir DIR: where the storage family writes its files
  std::string timeline_dir;   // --timeline DIR: a Chrome trace of one extra sample per case
  std::string benchmark_out;  // Google Benchmark's native output, passed through
  std::string benchmark_out_format = "json";
  bool resume = false;  // --resume: continue the incomplete result at --out
  // The command line as given: a run whose CUDA context a case poisoned continues in a fresh
  // process with the same arguments (plus --resume).
  std::vector<std::string> argv;
};

struct ListOptions {
  std::vector<std::string> scenarios;
  std::string filter;
  int device = 0;
  bool device_given = false;
  std::string devices = "all";
  int max_pinned_pct = kDefaultPinCapPct;
  bool allow_numa_balancing_change = false;  // --allow-numa-balancing-change
};

struct InventoryOptionsCli {
  std::string out;
  std::string node_type;
  std::string tp_group;  // --tp-group: GPUs that must share one NVLink domain
};

// Each returns the process exit code (DESIGN.md: 0 ok, 1 a case failed, 2 incomplete (a stop
// signal, a full disk), 3 bad input).
int run_command(const RunOptions& options);
int list_command(const ListOptions& options);
int inventory_command(const InventoryOptionsCli& options);

// "NVIDIA H200 x1 / PCIe Gen5 x16 / 1 NUMA" -> "NVIDIA_H200_x1_PCIe_Gen5_x16_1_NUMA"
std::string file_name_label(const std::string& text);

}  // namespace pathbench::cli
