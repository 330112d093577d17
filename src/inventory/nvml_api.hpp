#pragma once

// The NVML function table. Only translation units built with nvml.h include this
// (PATHBENCH_HAVE_NVML_H: CMake found the header of the CUDA toolkit or of the PyPI package
// nvidia-nvml-dev-cu12); the rest of pathbench sees NvmlSession alone.

// Versioned names only: without this, nvml.h renames nvmlInit to nvmlInit_v2 and friends by
// macro, and hides the _v2 process query that drivers before the _v3 one export.
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>

#include <string>

namespace pathbench {

// X(member, symbol): every NVML function pathbench calls. Each member's type is the header's
// declaration of the symbol, so a signature cannot be copied wrong; the symbol itself is looked up
// by name at run time (dlsym), never linked.
#define PATHBENCH_NVML_FUNCTIONS(X)                                 \
  X(init, nvmlInit_v2)                                              \
  X(shutdown, nvmlShutdown)                                         \
  X(error_string, nvmlErrorString)                                  \
  X(system_driver_version, nvmlSystemGetDriverVersion)              \
  X(device_count, nvmlDeviceGetCount_v2)                            \
  X(handle_by_index, nvmlDeviceGetHandleByIndex_v2)                 \
  X(handle_by_bus_id, nvmlDeviceGetHandleByPciBusId_v2)             \
  X(name, nvmlDeviceGetName)                                        \
  X(uuid, nvmlDeviceGetUUID)                                        \
  X(pci_info, nvmlDeviceGetPciInfo_v3)                              \
  X(vbios_version, nvmlDeviceGetVbiosVersion)                       \
  X(memory_info, nvmlDeviceGetMemoryInfo)                           \
  X(pcie_gen_current, nvmlDeviceGetCurrPcieLinkGeneration)          \
  X(pcie_gen_max, nvmlDeviceGetMaxPcieLinkGeneration)               \
  X(pcie_width_current, nvmlDeviceGetCurrPcieLinkWidth)             \
  X(pcie_width_max, nvmlDeviceGetMaxPcieLinkWidth)                  \
  X(clock_info, nvmlDeviceGetClockInfo)                             \
  X(max_clock_info, nvmlDeviceGetMaxClockInfo)                      \
  X(clocks_event_reasons, nvmlDeviceGetCurrentClocksEventReasons)   \
  X(temperature, nvmlDeviceGetTemperature)                          \
  X(power_usage, nvmlDeviceGetPowerUsage)                           \
  X(enforced_power_limit, nvmlDeviceGetEnforcedPowerLimit)          \
  X(compute_processes, nvmlDeviceGetComputeRunningProcesses_v3)     \
  X(pcie_replay_counter, nvmlDeviceGetPcieReplayCounter)            \
  X(ecc_mode, nvmlDeviceGetEccMode)                                 \
  X(persistence_mode, nvmlDeviceGetPersistenceMode)                 \
  X(mig_mode, nvmlDeviceGetMigMode)                                 \
  X(nvlink_state, nvmlDeviceGetNvLinkState)                         \
  X(nvlink_version, nvmlDeviceGetNvLinkVersion)                     \
  X(nvlink_remote_pci_info, nvmlDeviceGetNvLinkRemotePciInfo_v2)    \
  X(nvlink_remote_device_type, nvmlDeviceGetNvLinkRemoteDeviceType) \
  X(field_values, nvmlDeviceGetFieldValues)                         \
  X(topology_common_ancestor, nvmlDeviceGetTopologyCommonAncestor)  \
  X(p2p_status, nvmlDeviceGetP2PStatus)

// Production code fills it from dlsym (load_nvml_api); tests fill it with fake functions. A null
// member is a function this driver lacks: its fields stay unknown. init, shutdown,
// device_count, handle_by_index and handle_by_bus_id are required (a driver without them is too
// old to use, and the nvidia-smi fallback is taken).
struct NvmlApi {
#define PATHBENCH_NVML_MEMBER(member, symbol) decltype(&::symbol) member = nullptr;
  PATHBENCH_NVML_FUNCTIONS(PATHBENCH_NVML_MEMBER)
#undef PATHBENCH_NVML_MEMBER
};

// Looks every symbol up in an open libnvidia-ml handle. Drivers before CUDA 12.2's NVML spell
// the clocks-event query "Throttle" and have the _v2 process query only; both have the same
// signature as the newer name and are taken in its place.
NvmlApi load_nvml_api(void* library);

// The required members that are null, comma-separated; empty when none is.
std::string missing_required_nvml_functions(const NvmlApi& api);

// nvmlErrorString's text, or "NVML error <code>" when the driver lacks it.
std::string nvml_error_text(const NvmlApi& api, nvmlReturn_t code);

}  // namespace pathbench
