#pragma once

// The GPU half of collect_inventory: each GPU's facts, the link map and the NVLink state, from
// NVML when it answers, else from nvidia-smi's text. Internal to the inventory (inventory.cpp and
// the gpu_inventory_*.cpp files); tests reach it through collect_inventory.

#include <string>
#include <string_view>
#include <vector>

#include "cuda/cuda_probe.hpp"
#include "inventory/inventory.hpp"
#include "inventory/nvidia_smi.hpp"
#include "inventory/topology.hpp"

namespace pathbench {

// Fills gpus, driver_version, links, topo_status, nvlink_status, nvml_status,
// nvidia_smi_status and inventory_source (top level and per GPU): NVML first, nvidia-smi when
// NVML cannot be opened, cannot count its GPUs or lists none.
void collect_gpu_inventory(Inventory& inventory, const CudaProbe& probe,
                           const InventoryOptions& options);

// The nvidia-smi fallback: the query, `topo -m` and `nvlink -s`. Returns the query's rows.
std::vector<NvidiaSmiGpu> collect_gpus_smi(Inventory& inventory, const CudaProbe& probe);

// Turns a topology matrix labelled by the driver's indexes ("GPU<rows[i].index>") into
// inventory.links, by CUDA index when CUDA sees devices (matched through the rows' PCI bus
// ids; GPUs CUDA does not see are dropped). `what` names the source in messages
// ("nvidia-smi topo -m", "NVML"). Sets topo_status to "ok" or why there are no links.
void apply_topology(Inventory& inventory, const CudaProbe& probe,
                    const std::vector<NvidiaSmiGpu>& rows, TopoMatrix topo, std::string_view what);

}  // namespace pathbench
