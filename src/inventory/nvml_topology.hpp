#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "inventory/nvlink.hpp"

namespace pathbench {

// How NVML's per-link and per-pair answers become the cells of the topology matrix that
// nvidia-smi topo -m prints, so that one link map (inventory/topology.hpp) serves both sources.

// The active links of `from` that end at the GPU with PCI bus id `to_bus`. When none does and
// NVML says the pair reaches each other over NVLink (`p2p_nvlink_ok`), the active links that end
// at an NVSwitch: every GPU behind the switches is reached over all of them, which is how
// nvidia-smi topo -m prints NV18 for each pair of an HGX H100 board.
int nvlinks_between(const GpuNvlink& from, std::string_view to_bus, bool p2p_nvlink_ok);

// The cell for a pair: "NV<n>" when n > 0; else from the common ancestor: "internal" and
// "single" -> "PIX", "multiple" -> "PXB", "hostbridge" -> "PHB", "node" -> "NODE", "system" ->
// "SYS"; "UNKNOWN" (LinkType::kUnknown) without an ancestor or for another one.
std::string topology_cell(int nvlinks, const std::optional<std::string>& common_ancestor);

}  // namespace pathbench
