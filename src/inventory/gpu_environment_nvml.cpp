// NvmlSession::sample: one GPU's dynamic state for the run's environment samples.
#include <cstddef>
#include <string>
#include <vector>

#include "inventory/nvml_api.hpp"
#include "inventory/nvml_library.hpp"

namespace pathbench {

void NvmlSession::sample(GpuEnvironment& gpu) const {
  const NvmlApi& nvml = *api_;
  nvmlDevice_t device = nullptr;
  if (gpu.pci_bus_id.empty()) {
    gpu.source = "unavailable: the inventory has no PCI bus id for this GPU";
    return;
  }
  if (const nvmlReturn_t rc = nvml.handle_by_bus_id(gpu.pci_bus_id.c_str(), &device);
      rc != NVML_SUCCESS) {
    gpu.source =
        "unavailable: NVML has no GPU at " + gpu.pci_bus_id + ": " + nvml_error_text(nvml, rc);
    return;
  }
  gpu.source = "nvml";

  unsigned int value = 0;
  if (nvml.clock_info != nullptr) {
    if (nvml.clock_info(device, NVML_CLOCK_SM, &value) == NVML_SUCCESS) {
      gpu.clock_sm_mhz = static_cast<int>(value);
    }
    if (nvml.clock_info(device, NVML_CLOCK_MEM, &value) == NVML_SUCCESS) {
      gpu.clock_mem_mhz = static_cast<int>(value);
    }
  }
  if (nvml.temperature != nullptr &&
      nvml.temperature(device, NVML_TEMPERATURE_GPU, &value) == NVML_SUCCESS) {
    gpu.temperature_c = static_cast<int>(value);
  }
  if (nvml.power_usage != nullptr && nvml.power_usage(device, &value) == NVML_SUCCESS) {
    gpu.power_w = value / 1000.0;  // milliwatts
  }
  if (nvml.enforced_power_limit != nullptr &&
      nvml.enforced_power_limit(device, &value) == NVML_SUCCESS) {
    gpu.power_limit_w = value / 1000.0;
  }
  unsigned long long reasons = 0;
  if (nvml.clocks_event_reasons != nullptr &&
      nvml.clocks_event_reasons(device, &reasons) == NVML_SUCCESS) {
    gpu.clock_event_reasons_mask = reasons;
    gpu.clock_event_reasons = decode_clock_event_reasons(reasons);
  }
  if (nvml.pcie_replay_counter != nullptr &&
      nvml.pcie_replay_counter(device, &value) == NVML_SUCCESS) {
    gpu.pcie_replay_counter = value;
  }

  if (nvml.compute_processes != nullptr) {
    // The list can grow between the size query and the fetch; a few rounds with headroom.
    std::vector<nvmlProcessInfo_t> infos(8);
    for (int attempt = 0; attempt < 4; ++attempt) {
      unsigned int count = static_cast<unsigned int>(infos.size());
      const nvmlReturn_t rc = nvml.compute_processes(device, &count, infos.data());
      if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
        infos.resize(static_cast<std::size_t>(count) + 8);
        continue;
      }
      if (rc != NVML_SUCCESS) break;
      std::vector<GpuProcess> processes;
      for (unsigned int i = 0; i < count && i < infos.size(); ++i) {
        GpuProcess process;
        process.pid = infos[i].pid;
        // NVML_VALUE_NOT_AVAILABLE is -1, i.e. all bits set in the unsigned field.
        if (infos[i].usedGpuMemory != static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE)) {
          process.used_memory_bytes = infos[i].usedGpuMemory;
        }
        processes.push_back(std::move(process));
      }
      gpu.processes = std::move(processes);
      break;
    }
  }
}

}  // namespace pathbench
