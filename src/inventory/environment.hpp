#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/inventory.hpp"
#include "inventory/vmstat.hpp"

namespace pathbench {

// The node's state at one moment of a run: what else used the CPUs and the GPUs, how warm and
// how throttled the GPUs were, and the error counters of their links. A run records one sample
// before its first case and one after its last, so that a result taken under noise (steal,
// throttling, another GPU process) can be refused instead of judged (DESIGN.md, Conventions).
// Every field is optional: containers and VMs hide much of this, and a missing value is recorded
// as null, never as an error.

struct GpuProcess {
  unsigned pid = 0;
  std::string name;  // /proc/<pid>/comm, else what nvidia-smi says; "" when neither is known
  std::optional<std::uint64_t> used_memory_bytes;
  bool self = false;  // this pathbench process (pid == getpid())
};

struct GpuEnvironment {
  int index = 0;           // CUDA index, as in the inventory
  std::string pci_bus_id;  // canonical, as in the inventory
  std::string source;      // "nvml", "nvidia-smi", or "unavailable: <why>"
  std::optional<int> clock_sm_mhz, clock_mem_mhz, temperature_c;
  std::optional<double> power_w, power_limit_w;  // draw and enforced limit
  std::vector<std::string> clock_event_reasons;  // decoded, see decode_clock_event_reasons
  std::optional<std::uint64_t> clock_event_reasons_mask;
  // Compute processes on the GPU; empty optional when they could not be listed (no process is an
  // empty list).
  std::optional<std::vector<GpuProcess>> processes;
  std::optional<std::uint64_t> pcie_replay_counter;
  // /sys/bus/pci/devices/<bdf>/aer_dev_{correctable,nonfatal,fatal}: TOTAL_ERR_* lines.
  std::optional<std::uint64_t> aer_correctable, aer_nonfatal, aer_fatal;
};

// /proc/stat "cpu " line, in jiffies (USER_HZ). guest time is part of user and not repeated.
struct CpuTimes {
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                steal = 0;
};

struct EnvironmentSample {
  std::string time;  // ISO 8601 UTC
  std::optional<CpuTimes> cpu;
  std::optional<std::array<double, 3>> loadavg;  // 1, 5, 15 minutes
  std::vector<std::string> cpu_governors;        // distinct scaling_governor values, sorted
  // Compaction and THP fault counters since boot; their difference over the run says whether
  // huge page faults stalled in compaction or fell back to 4 KiB pages while it measured.
  std::optional<VmCounters> vmstat;
  std::vector<GpuEnvironment> gpus;  // one per inventory GPU, in inventory order
};

// Share of all CPU time between two samples, in percent. busy excludes idle, iowait and steal:
// it is the time this node's own work got.
struct CpuShare {
  double steal_pct = 0, iowait_pct = 0, busy_pct = 0;
};

// ---- pure parsers (unit-tested on fixture text); none throws ----------------------------------

// The aggregate "cpu " line of /proc/stat; empty when absent or malformed. Fields an old kernel
// does not print (iowait, irq, softirq, steal) are 0; fewer than four values is malformed.
std::optional<CpuTimes> parse_proc_stat_cpu(std::string_view text);
// The three load averages of /proc/loadavg; empty when malformed.
std::optional<std::array<double, 3>> parse_loadavg(std::string_view text);
// The value of the `key` line ("TOTAL_ERR_COR 3") of an aer_dev_* file; empty when absent.
std::optional<std::uint64_t> parse_aer_total(std::string_view text, std::string_view key);
// NVML's clocks-event-reason bits by name, lowest bit first ("gpu_idle", "sw_power_cap", ...);
// an unknown bit becomes "unknown_0x<hex>" so that it is seen, not dropped.
std::vector<std::string> decode_clock_event_reasons(std::uint64_t mask);
// Between two samples; empty when no time passed or the counters went backwards as a whole.
std::optional<CpuShare> cpu_share(const CpuTimes& start, const CpuTimes& end);

// ---- collection ---------------------------------------------------------------------------------

// Reads <root>/proc/stat, proc/loadavg, proc/vmstat,
// sys/devices/system/cpu/cpu*/cpufreq/scaling_governor and, for each GPU of the inventory, its
// AER counters and /proc/<pid>/comm of its processes. GPU state comes from NVML (dlopen), else
// from nvidia-smi (fixed argv), else the GPU's source says why there is none. Never throws.
EnvironmentSample collect_environment_sample(const Inventory& inventory,
                                             const std::filesystem::path& root = "/");

// ---- JSON ---------------------------------------------------------------------------------------

// snake_case keys as in the structs; absent values are null.
nlohmann::ordered_json to_json(const EnvironmentSample& sample);
// Inverse of to_json. Missing keys keep their defaults; a value of the wrong type throws
// std::invalid_argument naming its JSON pointer below `pointer`.
EnvironmentSample environment_sample_from_json(const nlohmann::json& json,
                                               const std::string& pointer = "");

// The result's context.environment: {"start", "end" (null while the run is in progress),
// "cpu_share": {"steal_pct", "iowait_pct", "busy_pct"} (null values without both CPU samples),
// "other_gpu_processes": true when any sample saw a GPU process that is not this one, false when
// every sample listed every GPU's processes and saw none, else null, "vmstat_over_run": each
// vmstat counter's increase from start to end (null without both values)}.
nlohmann::ordered_json run_environment_json(const EnvironmentSample& start,
                                            const std::optional<EnvironmentSample>& end);

// ---- noise --------------------------------------------------------------------------------------

struct NoiseThresholds {
  double max_steal_pct = 5.0;
};

// Clock-event reasons that mean the GPU ran slower than it was asked to. sw_power_cap and gpu_idle
// are not among them: an idle GPU reports them normally.
bool is_throttle_noise(std::string_view reason);

// Why a result was taken under noise; empty when it was not (or when it has no environment: older
// results are not refused). Reasons: CPU steal over the run above max_steal_pct; a GPU compute
// process other than this pathbench at the start or the end; a GPU throttled (is_throttle_noise)
// at the start or the end. `context` is the result's context object. Throws
// std::invalid_argument naming the JSON pointer when context.environment is malformed.
std::vector<std::string> noise_reasons(const nlohmann::json& context,
                                       const NoiseThresholds& thresholds = {});

}  // namespace pathbench
