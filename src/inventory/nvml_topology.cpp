#include "inventory/nvml_topology.hpp"

namespace pathbench {

int nvlinks_between(const GpuNvlink& from, std::string_view to_bus, bool p2p_nvlink_ok) {
  int direct = 0;
  int to_switch = 0;
  for (const auto& link : from.links) {
    if (!link.active) continue;
    if (!to_bus.empty() && link.remote_pci_bus_id == to_bus) ++direct;
    if (link.remote_type == "switch") ++to_switch;
  }
  if (direct > 0) return direct;
  return p2p_nvlink_ok ? to_switch : 0;
}

std::string topology_cell(int nvlinks, const std::optional<std::string>& common_ancestor) {
  if (nvlinks > 0) return "NV" + std::to_string(nvlinks);
  if (!common_ancestor) return "UNKNOWN";
  const std::string& a = *common_ancestor;
  if (a == "internal" || a == "single") return "PIX";
  if (a == "multiple") return "PXB";
  if (a == "hostbridge") return "PHB";
  if (a == "node") return "NODE";
  if (a == "system") return "SYS";
  return "UNKNOWN";
}

}  // namespace pathbench
