#include "inventory/nvml_library.hpp"

#include <dlfcn.h>

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

namespace pathbench {
namespace {

// The few declarations of nvml.h this file needs (checked against nvml.h of
// nvidia-nvml-dev-cu12 12.9). The header is not vendored: these are stable ABI, and a symbol a
// driver lacks is looked up by name and treated as "not supported".
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr int NVML_CLOCK_SM = 1;
constexpr int NVML_CLOCK_MEM = 2;
constexpr int NVML_TEMPERATURE_GPU = 0;
// usedGpuMemory when the driver cannot say (NVML_VALUE_NOT_AVAILABLE, -1 as unsigned).
constexpr unsigned long long kNvmlValueNotAvailable = ULLONG_MAX;

// nvmlProcessInfo_v2_t (= nvmlProcessInfo_t), the element type of the _v2 and _v3 process queries.
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(sizeof(NvmlProcessInfo) == 24, "layout of nvmlProcessInfo_v2_t");

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using HandleByBusIdFn = nvmlReturn_t (*)(const char*, nvmlDevice_t*);
using ClockInfoFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
using TemperatureFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
using UIntFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using ULongLongFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
using ProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, NvmlProcessInfo*);

template <typename Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

struct NvmlSession::Api {
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  ErrorStringFn error_string = nullptr;
  HandleByBusIdFn handle_by_bus_id = nullptr;
  ClockInfoFn clock_info = nullptr;
  TemperatureFn temperature = nullptr;
  UIntFn power_usage = nullptr;           // milliwatts
  UIntFn enforced_power_limit = nullptr;  // milliwatts
  ULongLongFn clocks_event_reasons = nullptr;
  ProcessesFn compute_processes = nullptr;
  UIntFn pcie_replay_counter = nullptr;

  std::string error(nvmlReturn_t code) const {
    const char* text = error_string != nullptr ? error_string(code) : nullptr;
    return text != nullptr ? std::string(text) : "NVML error " + std::to_string(code);
  }
};

void NvmlSession::LibraryCloser::operator()(void* handle) const {
  if (handle != nullptr) dlclose(handle);
}

NvmlSession::NvmlSession() : api_(std::make_unique<Api>()) {
  // The versioned name: the unversioned .so is a development link that runtime nodes lack.
  library_.reset(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL));
  if (!library_) {
    const char* why = dlerror();
    throw std::runtime_error(std::string("libnvidia-ml.so.1 cannot be loaded") +
                             (why != nullptr ? std::string(": ") + why : std::string()));
  }
  void* lib = library_.get();
  api_->init = symbol<InitFn>(lib, "nvmlInit_v2");
  api_->shutdown = symbol<ShutdownFn>(lib, "nvmlShutdown");
  api_->handle_by_bus_id = symbol<HandleByBusIdFn>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  if (api_->init == nullptr || api_->shutdown == nullptr || api_->handle_by_bus_id == nullptr) {
    throw std::runtime_error(
        "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlShutdown or nvmlDeviceGetHandleByPciBusId_v2 "
        "(driver too old)");
  }
  api_->error_string = symbol<ErrorStringFn>(lib, "nvmlErrorString");
  api_->clock_info = symbol<ClockInfoFn>(lib, "nvmlDeviceGetClockInfo");
  api_->temperature = symbol<TemperatureFn>(lib, "nvmlDeviceGetTemperature");
  api_->power_usage = symbol<UIntFn>(lib, "nvmlDeviceGetPowerUsage");
  api_->enforced_power_limit = symbol<UIntFn>(lib, "nvmlDeviceGetEnforcedPowerLimit");
  // Renamed in CUDA 12.2's NVML; drivers before it only have the "throttle" spelling.
  api_->clocks_event_reasons = symbol<ULongLongFn>(lib, "nvmlDeviceGetCurrentClocksEventReasons");
  if (api_->clocks_event_reasons == nullptr) {
    api_->clocks_event_reasons =
        symbol<ULongLongFn>(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  // _v3 and _v2 take the same element type; _v1's is shorter and not used.
  api_->compute_processes = symbol<ProcessesFn>(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (api_->compute_processes == nullptr) {
    api_->compute_processes = symbol<ProcessesFn>(lib, "nvmlDeviceGetComputeRunningProcesses_v2");
  }
  api_->pcie_replay_counter = symbol<UIntFn>(lib, "nvmlDeviceGetPcieReplayCounter");

  if (const nvmlReturn_t rc = api_->init(); rc != NVML_SUCCESS) {
    throw std::runtime_error("nvmlInit_v2 failed: " + api_->error(rc));
  }
}

NvmlSession::~NvmlSession() {
  // Only a constructed session exists, and construction ends with a successful init.
  if (api_ && api_->shutdown != nullptr) api_->shutdown();
}

void NvmlSession::sample(GpuEnvironment& gpu) const {
  nvmlDevice_t device = nullptr;
  if (gpu.pci_bus_id.empty()) {
    gpu.source = "unavailable: the inventory has no PCI bus id for this GPU";
    return;
  }
  if (const nvmlReturn_t rc = api_->handle_by_bus_id(gpu.pci_bus_id.c_str(), &device);
      rc != NVML_SUCCESS) {
    gpu.source = "unavailable: NVML has no GPU at " + gpu.pci_bus_id + ": " + api_->error(rc);
    return;
  }
  gpu.source = "nvml";

  unsigned int value = 0;
  if (api_->clock_info != nullptr) {
    if (api_->clock_info(device, NVML_CLOCK_SM, &value) == NVML_SUCCESS) {
      gpu.clock_sm_mhz = static_cast<int>(value);
    }
    if (api_->clock_info(device, NVML_CLOCK_MEM, &value) == NVML_SUCCESS) {
      gpu.clock_mem_mhz = static_cast<int>(value);
    }
  }
  if (api_->temperature != nullptr &&
      api_->temperature(device, NVML_TEMPERATURE_GPU, &value) == NVML_SUCCESS) {
    gpu.temperature_c = static_cast<int>(value);
  }
  if (api_->power_usage != nullptr && api_->power_usage(device, &value) == NVML_SUCCESS) {
    gpu.power_w = value / 1000.0;
  }
  if (api_->enforced_power_limit != nullptr &&
      api_->enforced_power_limit(device, &value) == NVML_SUCCESS) {
    gpu.power_limit_w = value / 1000.0;
  }
  unsigned long long reasons = 0;
  if (api_->clocks_event_reasons != nullptr &&
      api_->clocks_event_reasons(device, &reasons) == NVML_SUCCESS) {
    gpu.clock_event_reasons_mask = reasons;
    gpu.clock_event_reasons = decode_clock_event_reasons(reasons);
  }
  if (api_->pcie_replay_counter != nullptr &&
      api_->pcie_replay_counter(device, &value) == NVML_SUCCESS) {
    gpu.pcie_replay_counter = value;
  }

  if (api_->compute_processes != nullptr) {
    // The list can grow between the size query and the fetch; a few rounds with headroom.
    std::vector<NvmlProcessInfo> infos(8);
    for (int attempt = 0; attempt < 4; ++attempt) {
      unsigned int count = static_cast<unsigned int>(infos.size());
      const nvmlReturn_t rc = api_->compute_processes(device, &count, infos.data());
      if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
        infos.resize(static_cast<std::size_t>(count) + 8);
        continue;
      }
      if (rc != NVML_SUCCESS) break;
      std::vector<GpuProcess> processes;
      for (unsigned int i = 0; i < count && i < infos.size(); ++i) {
        GpuProcess process;
        process.pid = infos[i].pid;
        if (infos[i].usedGpuMemory != kNvmlValueNotAvailable) {
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
