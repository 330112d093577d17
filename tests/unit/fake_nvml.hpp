#pragma once

// A fake NVML: an NvmlApi whose functions answer from a FakeNvml object, so the NVML inventory
// runs on CPU-only CI. Only with nvml.h (PATHBENCH_HAVE_NVML_H), like the code it tests.

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "inventory/nvml_api.hpp"

namespace pathbench::testing {

struct FakeNvlink {
  bool active = true;
  unsigned version = 6;  // nvmlNvlinkVersion_t: 4.0
  unsigned speed_mbps = 26562;
  std::string remote_bus;  // NVML's spelling, e.g. "00000000:1A:00.0"
  nvmlIntNvLinkDeviceType_t remote_type = NVML_NVLINK_DEVICE_TYPE_GPU;
};

struct FakeGpu {
  std::string bus = "00000000:19:00.0";
  std::string name = "NVIDIA H200";
  std::string uuid = "GPU-fake-0";
  std::string vbios = "96.00.A5.00.1A";
  unsigned gen_current = 5, gen_max = 5, width_current = 16, width_max = 16;
  nvmlReturn_t pcie_rc = NVML_SUCCESS;
  unsigned sm = 1980, mem = 3201, sm_max = 1980, mem_max = 3201;
  unsigned long long memory_total = (143771ull << 20) + 12345;  // not a whole MiB
  nvmlEnableState_t ecc = NVML_FEATURE_ENABLED, persistence = NVML_FEATURE_ENABLED;
  nvmlReturn_t ecc_rc = NVML_SUCCESS;
  unsigned mig = NVML_DEVICE_MIG_DISABLE;
  nvmlReturn_t mig_rc = NVML_SUCCESS;
  unsigned long long reasons = 0x1;  // gpu_idle
  // NOT_SUPPORTED from nvmlDeviceGetNvLinkState: a PCIe card without NVLink.
  nvmlReturn_t nvlink_rc = NVML_SUCCESS;
  std::vector<FakeNvlink> links;
  bool per_link_speed_field = true;  // false: a driver with only the common-speed field
};

struct FakeNvml {
  nvmlReturn_t init_rc = NVML_SUCCESS;
  nvmlReturn_t count_rc = NVML_SUCCESS;
  std::string driver = "580.159.04";
  std::vector<FakeGpu> gpus;
  std::map<std::pair<std::size_t, std::size_t>, nvmlGpuTopologyLevel_t> ancestors;
  nvmlGpuP2PStatus_t p2p = NVML_P2P_STATUS_OK;
  nvmlGpuP2PStatus_t p2p_nvlink = NVML_P2P_STATUS_OK;
  int init_calls = 0, shutdown_calls = 0;

  static FakeNvml*& current() {
    static FakeNvml* fake = nullptr;
    return fake;
  }
  FakeNvml() { current() = this; }
  ~FakeNvml() { current() = nullptr; }
  FakeNvml(const FakeNvml&) = delete;
  FakeNvml& operator=(const FakeNvml&) = delete;

  static FakeNvml& get() { return *current(); }
  static nvmlDevice_t handle(std::size_t i) {
    return reinterpret_cast<nvmlDevice_t>(static_cast<std::uintptr_t>(i + 1));
  }
  static std::size_t index(nvmlDevice_t device) {
    return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(device)) - 1;
  }
  static FakeGpu& gpu(nvmlDevice_t device) { return get().gpus.at(index(device)); }
  static nvmlReturn_t copy(const std::string& text, char* out, unsigned int length) {
    if (text.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    std::memcpy(out, text.c_str(), text.size() + 1);
    return NVML_SUCCESS;
  }

  NvmlApi api() const {
    NvmlApi a;
    a.init = [] {
      ++get().init_calls;
      return get().init_rc;
    };
    a.shutdown = [] {
      ++get().shutdown_calls;
      return NVML_SUCCESS;
    };
    a.error_string = [](nvmlReturn_t rc) -> const char* {
      return rc == NVML_ERROR_DRIVER_NOT_LOADED ? "Driver Not Loaded" : "Unknown Error";
    };
    a.system_driver_version = [](char* out, unsigned int length) {
      return copy(get().driver, out, length);
    };
    a.device_count = [](unsigned int* count) {
      *count = static_cast<unsigned>(get().gpus.size());
      return get().count_rc;
    };
    a.handle_by_index = [](unsigned int i, nvmlDevice_t* device) {
      if (i >= get().gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
      *device = handle(i);
      return NVML_SUCCESS;
    };
    a.handle_by_bus_id = [](const char*, nvmlDevice_t*) { return NVML_ERROR_NOT_FOUND; };
    a.name = [](nvmlDevice_t d, char* out, unsigned int n) { return copy(gpu(d).name, out, n); };
    a.uuid = [](nvmlDevice_t d, char* out, unsigned int n) { return copy(gpu(d).uuid, out, n); };
    a.vbios_version = [](nvmlDevice_t d, char* out, unsigned int n) {
      return copy(gpu(d).vbios, out, n);
    };
    a.pci_info = [](nvmlDevice_t d, nvmlPciInfo_t* pci) {
      *pci = nvmlPciInfo_t{};
      return copy(gpu(d).bus, pci->busId, sizeof pci->busId);
    };
    a.memory_info = [](nvmlDevice_t d, nvmlMemory_t* memory) {
      *memory = nvmlMemory_t{gpu(d).memory_total, gpu(d).memory_total / 2, 0};
      return NVML_SUCCESS;
    };
    a.pcie_gen_current = [](nvmlDevice_t d, unsigned int* v) {
      *v = gpu(d).gen_current;
      return gpu(d).pcie_rc;
    };
    a.pcie_gen_max = [](nvmlDevice_t d, unsigned int* v) {
      *v = gpu(d).gen_max;
      return gpu(d).pcie_rc;
    };
    a.pcie_width_current = [](nvmlDevice_t d, unsigned int* v) {
      *v = gpu(d).width_current;
      return gpu(d).pcie_rc;
    };
    a.pcie_width_max = [](nvmlDevice_t d, unsigned int* v) {
      *v = gpu(d).width_max;
      return gpu(d).pcie_rc;
    };
    a.clock_info = [](nvmlDevice_t d, nvmlClockType_t type, unsigned int* v) {
      *v = type == NVML_CLOCK_SM ? gpu(d).sm : gpu(d).mem;
      return NVML_SUCCESS;
    };
    a.max_clock_info = [](nvmlDevice_t d, nvmlClockType_t type, unsigned int* v) {
      *v = type == NVML_CLOCK_SM ? gpu(d).sm_max : gpu(d).mem_max;
      return NVML_SUCCESS;
    };
    a.clocks_event_reasons = [](nvmlDevice_t d, unsigned long long* v) {
      *v = gpu(d).reasons;
      return NVML_SUCCESS;
    };
    a.ecc_mode = [](nvmlDevice_t d, nvmlEnableState_t* current, nvmlEnableState_t* pending) {
      *current = *pending = gpu(d).ecc;
      return gpu(d).ecc_rc;
    };
    a.persistence_mode = [](nvmlDevice_t d, nvmlEnableState_t* mode) {
      *mode = gpu(d).persistence;
      return NVML_SUCCESS;
    };
    a.mig_mode = [](nvmlDevice_t d, unsigned int* current, unsigned int* pending) {
      *current = *pending = gpu(d).mig;
      return gpu(d).mig_rc;
    };
    a.nvlink_state = [](nvmlDevice_t d, unsigned int link, nvmlEnableState_t* active) {
      if (gpu(d).nvlink_rc != NVML_SUCCESS) return gpu(d).nvlink_rc;
      if (link >= gpu(d).links.size()) return NVML_ERROR_INVALID_ARGUMENT;
      *active = gpu(d).links[link].active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
      return NVML_SUCCESS;
    };
    a.nvlink_version = [](nvmlDevice_t d, unsigned int link, unsigned int* version) {
      *version = gpu(d).links.at(link).version;
      return NVML_SUCCESS;
    };
    a.nvlink_remote_pci_info = [](nvmlDevice_t d, unsigned int link, nvmlPciInfo_t* pci) {
      *pci = nvmlPciInfo_t{};
      return copy(gpu(d).links.at(link).remote_bus, pci->busId, sizeof pci->busId);
    };
    a.nvlink_remote_device_type = [](nvmlDevice_t d, unsigned int link,
                                     nvmlIntNvLinkDeviceType_t* type) {
      *type = gpu(d).links.at(link).remote_type;
      return NVML_SUCCESS;
    };
    a.field_values = [](nvmlDevice_t d, int count, nvmlFieldValue_t* values) {
      const FakeGpu& g = gpu(d);
      for (int i = 0; i < count; ++i) {
        nvmlFieldValue_t& v = values[i];
        v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
        v.nvmlReturn = NVML_SUCCESS;
        if (v.fieldId == NVML_FI_DEV_NVLINK_LINK_COUNT && g.nvlink_rc == NVML_SUCCESS) {
          v.value.uiVal = static_cast<unsigned>(g.links.size());
        } else if (v.fieldId == NVML_FI_DEV_NVLINK_GET_SPEED && g.per_link_speed_field &&
                   v.scopeId < g.links.size()) {
          v.value.uiVal = g.links[v.scopeId].active ? g.links[v.scopeId].speed_mbps : 0;
        } else if (v.fieldId == NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON && !g.links.empty()) {
          v.value.uiVal = g.links.front().speed_mbps;
        } else {
          v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        }
      }
      return NVML_SUCCESS;
    };
    a.topology_common_ancestor = [](nvmlDevice_t a1, nvmlDevice_t a2,
                                    nvmlGpuTopologyLevel_t* level) {
      const auto& map = get().ancestors;
      const auto it = map.find({index(a1), index(a2)});
      if (it == map.end()) return NVML_ERROR_NOT_SUPPORTED;
      *level = it->second;
      return NVML_SUCCESS;
    };
    a.p2p_status = [](nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t caps,
                      nvmlGpuP2PStatus_t* status) {
      *status = caps == NVML_P2P_CAPS_INDEX_NVLINK ? get().p2p_nvlink : get().p2p;
      return NVML_SUCCESS;
    };
    return a;
  }
};

}  // namespace pathbench::testing
