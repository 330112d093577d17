// The GPU inventory by source: NVML first, nvidia-smi when NVML gives nothing, and the one link
// map both feed (apply_topology).
#include "inventory/gpu_inventory.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "inventory/gpu_inventory_nvml.hpp"
#include "inventory/nvml_library.hpp"

namespace pathbench {
namespace {

std::unique_ptr<NvmlSession> open_nvml(const InventoryOptions& options) {
  return options.open_nvml ? options.open_nvml() : std::make_unique<NvmlSession>();
}

const GpuInventory* gpu_by_index(const Inventory& inventory, int index) {
  auto it = std::find_if(inventory.gpus.begin(), inventory.gpus.end(),
                         [&](const GpuInventory& g) { return g.index == index; });
  return it == inventory.gpus.end() ? nullptr : &*it;
}

// NVML's per-pair facts onto the links, matched by the PCI bus ids of both ends (links are in
// CUDA indexes, NVML's pairs in NVML's).
void attach_pair_facts(Inventory& inventory, const NvmlInventory& nvml) {
  auto bus_of_nvml = [&](int index) -> std::string {
    for (const auto& gpu : nvml.gpus) {
      if (gpu.row.index == index) return gpu.row.pci_bus_id;
    }
    return {};
  };
  for (auto& link : inventory.links) {
    link.topology_source = "nvml";
    const GpuInventory* from = gpu_by_index(inventory, link.from);
    const GpuInventory* to = gpu_by_index(inventory, link.to);
    if (from == nullptr || to == nullptr) continue;
    for (const auto& pair : nvml.pairs) {
      if (bus_of_nvml(pair.from) == from->pci_bus_id && bus_of_nvml(pair.to) == to->pci_bus_id) {
        link.common_ancestor = pair.common_ancestor;
        link.p2p_status = pair.p2p_status;
      }
    }
  }
}

// The NVML path; false (with nvml_status saying why) when NVML gave nothing to build on.
bool collect_gpus_nvml(Inventory& inventory, const CudaProbe& probe,
                       const InventoryOptions& options) {
  NvmlInventory nvml;
  try {
    const auto session = open_nvml(options);
    nvml = read_nvml_inventory(*session);
  } catch (const std::exception& e) {
    inventory.nvml_status = e.what();
    return false;
  }
  if (nvml.gpus.empty()) {
    inventory.nvml_status = "NVML lists no GPUs";
    inventory.warnings.insert(inventory.warnings.end(), nvml.warnings.begin(), nvml.warnings.end());
    return false;
  }
  inventory.nvml_status = "ok";
  inventory.nvidia_smi_status = "not run: NVML described the GPUs";
  inventory.inventory_source = "nvml";
  inventory.driver_version = nvml.driver_version;
  inventory.warnings.insert(inventory.warnings.end(), nvml.warnings.begin(), nvml.warnings.end());

  std::vector<NvidiaSmiGpu> rows;
  for (const auto& gpu : nvml.gpus) rows.push_back(gpu.row);
  inventory.gpus = merge_gpu_sources(probe.devices, rows, inventory.warnings, "nvml");
  for (auto& gpu : inventory.gpus) {
    auto facts = std::find_if(nvml.gpus.begin(), nvml.gpus.end(), [&](const NvmlGpuFacts& f) {
      return !gpu.pci_bus_id.empty() && f.row.pci_bus_id == gpu.pci_bus_id;
    });
    if (facts == nvml.gpus.end()) continue;
    gpu.clock_event_reasons_mask = facts->clock_event_reasons_mask;
    gpu.nvlink = facts->nvlink;
  }
  inventory.nvlink_status = "ok";
  apply_topology(inventory, probe, rows, std::move(nvml.topo), "NVML");
  attach_pair_facts(inventory, nvml);
  return true;
}

}  // namespace

void apply_topology(Inventory& inventory, const CudaProbe& probe,
                    const std::vector<NvidiaSmiGpu>& rows, TopoMatrix topo, std::string_view what) {
  const std::string source(what);
  if (inventory.gpus.size() < 2) {
    inventory.topo_status =
        inventory.gpus.empty() ? "no GPU: no GPU pairs" : "one GPU: no GPU pairs";
    return;
  }
  if (!probe.devices.empty()) {
    // The driver's index (PCI order) -> CUDA index (what the benchmarks pass to cudaSetDevice),
    // through the bus id; GPUs CUDA does not see (CUDA_VISIBLE_DEVICES) are dropped, since no
    // case can use them.
    auto cuda_index_of = [&](std::size_t position) -> std::optional<int> {
      const std::string label = topo.gpus[position];
      auto row = std::find_if(rows.begin(), rows.end(), [&](const NvidiaSmiGpu& r) {
        return "GPU" + std::to_string(r.index) == label;
      });
      if (row == rows.end() || row->pci_bus_id.empty()) return std::nullopt;
      for (const auto& device : probe.devices) {
        try {
          if (normalize_pci_bus_id(device.pci_bus_id) == row->pci_bus_id) return device.index;
        } catch (const std::invalid_argument&) {
        }
      }
      return std::nullopt;
    };
    TopoMatrix visible;
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < topo.gpus.size(); ++i) {
      if (auto cuda = cuda_index_of(i)) {
        kept.push_back(i);
        visible.gpus.push_back("GPU" + std::to_string(*cuda));
      }
    }
    for (std::size_t i : kept) {
      std::vector<std::string> cells;
      for (std::size_t j : kept) cells.push_back(topo.cells[i][j]);
      visible.cells.push_back(std::move(cells));
    }
    if (visible.gpus.size() < probe.devices.size()) {
      inventory.warnings.push_back(
          source + ": " + std::to_string(probe.devices.size() - visible.gpus.size()) +
          " CUDA device(s) not matched by PCI bus id; their links are not recorded");
    }
    if (visible.gpus.size() < 2) {
      inventory.topo_status =
          "fewer than two GPUs of the topology are visible to CUDA: no GPU pairs";
      return;
    }
    topo = std::move(visible);
  }
  try {
    inventory.links = build_link_map(topo, probe.peers);
  } catch (const std::invalid_argument& e) {
    inventory.topo_status = source + " output not understood: " + e.what();
    return;
  }
  inventory.topo_status = "ok";
}

void collect_gpu_inventory(Inventory& inventory, const CudaProbe& probe,
                           const InventoryOptions& options) {
  if (collect_gpus_nvml(inventory, probe, options)) return;
  collect_gpus_smi(inventory, probe);
}

}  // namespace pathbench
