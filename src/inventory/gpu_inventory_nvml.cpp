#include "inventory/gpu_inventory_nvml.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "inventory/nvml_api.hpp"
#include "inventory/nvml_library.hpp"
#include "inventory/nvml_nvlink.hpp"
#include "inventory/nvml_topology.hpp"

namespace pathbench {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Calls an NVML getter of one unsigned value; empty unless it succeeded.
template <typename Fn, typename... Args>
std::optional<int> unsigned_value(Fn fn, nvmlDevice_t device, Args... args) {
  if (fn == nullptr) return std::nullopt;
  unsigned int value = 0;
  if (fn(device, args..., &value) != NVML_SUCCESS) return std::nullopt;
  return static_cast<int>(value);
}

template <typename Fn>
std::string text_value(Fn fn, nvmlDevice_t device, unsigned int size) {
  if (fn == nullptr) return {};
  std::string buffer(size, '\0');
  if (fn(device, buffer.data(), size) != NVML_SUCCESS) return {};
  buffer.resize(buffer.find('\0') == std::string::npos ? size : buffer.find('\0'));
  return buffer;
}

std::optional<std::string> enable_state(nvmlEnableState_t state) {
  if (state == NVML_FEATURE_ENABLED) return "enabled";
  if (state == NVML_FEATURE_DISABLED) return "disabled";
  return std::nullopt;
}

std::optional<NvmlGpuFacts> read_gpu(const NvmlApi& nvml, unsigned index, nvmlDevice_t device,
                                     std::vector<std::string>& warnings) {
  NvmlGpuFacts facts;
  NvidiaSmiGpu& row = facts.row;
  row.index = static_cast<int>(index);
  nvmlPciInfo_t pci{};
  if (nvml.pci_info == nullptr || nvml.pci_info(device, &pci) != NVML_SUCCESS) {
    warnings.push_back("NVML GPU " + std::to_string(index) +
                       ": no PCI bus id (nvmlDeviceGetPciInfo_v3); left out");
    return std::nullopt;
  }
  pci.busId[sizeof pci.busId - 1] = '\0';
  row.pci_bus_id = canonical_nvml_bus_id(pci.busId);
  if (row.pci_bus_id.empty()) {
    warnings.push_back("NVML GPU " + std::to_string(index) + ": PCI bus id \"" +
                       std::string(pci.busId) + "\" not understood; left out");
    return std::nullopt;
  }
  row.name = text_value(nvml.name, device, NVML_DEVICE_NAME_V2_BUFFER_SIZE);
  row.uuid = text_value(nvml.uuid, device, NVML_DEVICE_UUID_V2_BUFFER_SIZE);
  row.vbios = text_value(nvml.vbios_version, device, NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE);
  row.pcie_gen_current = unsigned_value(nvml.pcie_gen_current, device);
  // The most the GPU and its slot can do together: nvidia-smi's pcie.link.gen.max.
  row.pcie_gen_max = unsigned_value(nvml.pcie_gen_max, device);
  row.pcie_width_current = unsigned_value(nvml.pcie_width_current, device);
  row.pcie_width_max = unsigned_value(nvml.pcie_width_max, device);
  row.clock_sm_mhz = unsigned_value(nvml.clock_info, device, NVML_CLOCK_SM);
  row.clock_mem_mhz = unsigned_value(nvml.clock_info, device, NVML_CLOCK_MEM);
  row.clock_sm_max_mhz = unsigned_value(nvml.max_clock_info, device, NVML_CLOCK_SM);
  row.clock_mem_max_mhz = unsigned_value(nvml.max_clock_info, device, NVML_CLOCK_MEM);
  nvmlMemory_t memory{};
  if (nvml.memory_info != nullptr && nvml.memory_info(device, &memory) == NVML_SUCCESS) {
    row.memory_bytes = memory.total / kMiB * kMiB;
  }
  nvmlEnableState_t current = NVML_FEATURE_DISABLED;
  nvmlEnableState_t pending = NVML_FEATURE_DISABLED;
  if (nvml.ecc_mode != nullptr && nvml.ecc_mode(device, &current, &pending) == NVML_SUCCESS) {
    row.ecc_mode = enable_state(current);
  }
  if (nvml.persistence_mode != nullptr && nvml.persistence_mode(device, &current) == NVML_SUCCESS) {
    row.persistence_mode = enable_state(current);
  }
  unsigned int mig_current = 0;
  unsigned int mig_pending = 0;
  if (nvml.mig_mode != nullptr &&
      nvml.mig_mode(device, &mig_current, &mig_pending) == NVML_SUCCESS) {
    if (mig_current == NVML_DEVICE_MIG_ENABLE) row.mig_mode = "enabled";
    if (mig_current == NVML_DEVICE_MIG_DISABLE) row.mig_mode = "disabled";
  }
  unsigned long long reasons = 0;
  if (nvml.clocks_event_reasons != nullptr &&
      nvml.clocks_event_reasons(device, &reasons) == NVML_SUCCESS) {
    facts.clock_event_reasons_mask = reasons;
  }
  facts.nvlink = read_nvml_nvlink(nvml, device);
  return facts;
}

std::optional<std::string> ancestor_name(nvmlGpuTopologyLevel_t level) {
  switch (level) {
    case NVML_TOPOLOGY_INTERNAL:
      return "internal";
    case NVML_TOPOLOGY_SINGLE:
      return "single";
    case NVML_TOPOLOGY_MULTIPLE:
      return "multiple";
    case NVML_TOPOLOGY_HOSTBRIDGE:
      return "hostbridge";
    case NVML_TOPOLOGY_NODE:
      return "node";
    case NVML_TOPOLOGY_SYSTEM:
      return "system";
  }
  return std::nullopt;
}

std::string p2p_status_name(nvmlGpuP2PStatus_t status) {
  switch (status) {
    case NVML_P2P_STATUS_OK:
      return "ok";
    case NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED:
      return "chipset_not_supported";
    case NVML_P2P_STATUS_GPU_NOT_SUPPORTED:
      return "gpu_not_supported";
    case NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED:
      return "ioh_topology_not_supported";
    case NVML_P2P_STATUS_DISABLED_BY_REGKEY:
      return "disabled_by_regkey";
    case NVML_P2P_STATUS_NOT_SUPPORTED:
      return "not_supported";
    case NVML_P2P_STATUS_UNKNOWN:
      break;
  }
  return "unknown";
}

NvmlPairFacts read_pair(const NvmlApi& nvml, const NvmlGpuFacts& a, nvmlDevice_t da,
                        const NvmlGpuFacts& b, nvmlDevice_t db) {
  NvmlPairFacts pair;
  pair.from = a.row.index;
  pair.to = b.row.index;
  nvmlGpuTopologyLevel_t level = NVML_TOPOLOGY_SYSTEM;
  if (nvml.topology_common_ancestor != nullptr &&
      nvml.topology_common_ancestor(da, db, &level) == NVML_SUCCESS) {
    pair.common_ancestor = ancestor_name(level);
  }
  if (nvml.p2p_status != nullptr) {
    static constexpr std::array<std::pair<nvmlGpuP2PCapsIndex_t, const char*>, 5> kCaps = {{
        {NVML_P2P_CAPS_INDEX_READ, "read"},
        {NVML_P2P_CAPS_INDEX_WRITE, "write"},
        {NVML_P2P_CAPS_INDEX_NVLINK, "nvlink"},
        {NVML_P2P_CAPS_INDEX_ATOMICS, "atomics"},
        {NVML_P2P_CAPS_INDEX_PCI, "pci"},
    }};
    for (const auto& [index, name] : kCaps) {
      nvmlGpuP2PStatus_t status = NVML_P2P_STATUS_UNKNOWN;
      if (nvml.p2p_status(da, db, index, &status) == NVML_SUCCESS) {
        pair.p2p_status.emplace_back(name, p2p_status_name(status));
      }
    }
  }
  return pair;
}

bool p2p_nvlink_ok(const NvmlPairFacts& pair) {
  return std::any_of(pair.p2p_status.begin(), pair.p2p_status.end(),
                     [](const auto& s) { return s.first == "nvlink" && s.second == "ok"; });
}

}  // namespace

NvmlInventory read_nvml_inventory(const NvmlSession& session) {
  const NvmlApi& nvml = session.api();
  NvmlInventory out;
  unsigned int count = 0;
  if (const nvmlReturn_t rc = nvml.device_count(&count); rc != NVML_SUCCESS) {
    throw std::runtime_error("nvmlDeviceGetCount_v2 failed: " + nvml_error_text(nvml, rc));
  }
  if (nvml.system_driver_version != nullptr) {
    std::string version(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, '\0');
    if (nvml.system_driver_version(version.data(), NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE) ==
        NVML_SUCCESS) {
      version.resize(version.find('\0') == std::string::npos ? version.size() : version.find('\0'));
      out.driver_version = version;
    }
  }
  std::vector<nvmlDevice_t> devices;
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (const nvmlReturn_t rc = nvml.handle_by_index(i, &device); rc != NVML_SUCCESS) {
      // A GPU the process may not use (cgroups) or one that fell off the bus.
      out.warnings.push_back("NVML GPU " + std::to_string(i) +
                             ": no handle: " + nvml_error_text(nvml, rc) + "; left out");
      continue;
    }
    if (auto facts = read_gpu(nvml, i, device, out.warnings)) {
      facts->row.driver_version = out.driver_version;
      out.gpus.push_back(std::move(*facts));
      devices.push_back(device);
    }
  }

  const std::size_t n = out.gpus.size();
  for (std::size_t i = 0; i < n; ++i) {
    out.topo.gpus.push_back("GPU" + std::to_string(out.gpus[i].row.index));
    std::vector<std::string> cells;
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) {
        cells.emplace_back("X");
        continue;
      }
      NvmlPairFacts pair = read_pair(nvml, out.gpus[i], devices[i], out.gpus[j], devices[j]);
      const int links = out.gpus[i].nvlink
                            ? nvlinks_between(*out.gpus[i].nvlink, out.gpus[j].row.pci_bus_id,
                                              p2p_nvlink_ok(pair))
                            : 0;
      cells.push_back(topology_cell(links, pair.common_ancestor));
      out.pairs.push_back(std::move(pair));
    }
    out.topo.cells.push_back(std::move(cells));
  }
  return out;
}

}  // namespace pathbench
