#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pathbench {

// The nvidia-smi fallback for environment samples, used when NVML cannot be loaded. Fixed argument
// vectors only; the parsers expect exactly the fields of these queries, in this order.

struct SmiGpuState {
  int index = 0;           // nvidia-smi's own index (PCI order), not CUDA's
  std::string pci_bus_id;  // canonical; rows are matched to GPUs by it
  std::optional<int> clock_sm_mhz, clock_mem_mhz, temperature_c;
  std::optional<double> power_w, power_limit_w;
  std::optional<std::uint64_t> clock_event_reasons_mask;
};

struct SmiComputeApp {
  std::string pci_bus_id;  // canonical
  unsigned pid = 0;
  std::string name;  // as nvidia-smi prints it (often the executable's path)
  std::optional<std::uint64_t> used_memory_bytes;
};

// --query-gpu=index,pci.bus_id,clocks.sm,clocks.mem,temperature.gpu,power.draw,
// enforced.power.limit,clocks_event_reasons.active. `legacy` spells the last field
// clocks_throttle_reasons.active, the only name drivers before 535 know (newer ones take both).
const std::vector<std::string>& nvidia_smi_state_argv(bool legacy = false);
// --query-compute-apps=gpu_bus_id,pid,process_name,used_memory
const std::vector<std::string>& nvidia_smi_compute_apps_argv();

// Parse csv,noheader,nounits output; blank lines are skipped. Throw std::invalid_argument naming
// the line (1-based) and the field for a wrong field count or an unreadable value.
std::vector<SmiGpuState> parse_nvidia_smi_state(std::string_view text);
// A process name may itself contain commas: it is everything between the pid and the last field.
std::vector<SmiComputeApp> parse_nvidia_smi_compute_apps(std::string_view text);

}  // namespace pathbench
