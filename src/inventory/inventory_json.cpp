// The inventory as the result's context object (the writer; inventory_from_json.cpp reads it).
#include <algorithm>
#include <optional>
#include <utility>

#include "core/json_text.hpp"
#include "inventory/environment.hpp"
#include "inventory/inventory.hpp"
#include "inventory/inventory_fields.hpp"
#include "inventory/link_rates.hpp"
#include "inventory/nvlink_domains.hpp"

namespace pathbench {
namespace {

template <typename T>
nlohmann::ordered_json value_json(const T& v) {
  return nlohmann::ordered_json(v);
}
template <typename T>
nlohmann::ordered_json value_json(const std::optional<T>& v) {
  return optional_json(v);
}

// Writes every field of a part's table into `j`.
auto writer(nlohmann::ordered_json& j) {
  return [&j](const char* key, const auto& field) { j[key] = value_json(field); };
}

nlohmann::ordered_json raw_pcie(std::optional<int> generation, std::optional<int> width) {
  if (!generation || !width) return nullptr;
  return optional_json(pcie_raw_gb_per_s(*generation, *width));
}

// Derived from the link state, never read back: link_rates.hpp is the one place that knows a
// generation's rate, and the field is here so that readers without that table (the report
// scripts, a fleet's dashboards) need none.
nlohmann::ordered_json pcie_json(const GpuInventory& gpu) {
  nlohmann::ordered_json rate;
  rate["current"] = raw_pcie(gpu.pcie_gen_current, gpu.pcie_width_current);
  rate["max"] = raw_pcie(gpu.pcie_gen_max, gpu.pcie_width_max);
  nlohmann::ordered_json j;
  j["raw_gbps_per_direction"] = std::move(rate);
  return j;
}

nlohmann::ordered_json nvlink_json(const GpuNvlink& nvlink, const std::string& compute_capability) {
  nlohmann::ordered_json n;
  inventory_fields::nvlink(nvlink, writer(n));
  // The data rate the NVLink floors hold a pair to (inventory/nvlink.hpp), derived like the PCIe
  // rate: per link and direction, and over all active links.
  const auto rate = nvlink.active_links > 0
                        ? nvlink_link_rate(nvlink.link_gb_per_s, compute_capability, nvlink.version)
                        : std::nullopt;
  n["data_gb_per_s_per_link"] = rate ? nlohmann::ordered_json(rate->gb_per_s) : nullptr;
  n["raw_gbps_per_direction"] =
      rate ? nlohmann::ordered_json(rate->gb_per_s * nvlink.active_links) : nullptr;
  auto& links = n["links"] = nlohmann::ordered_json::array();
  for (const auto& link : nvlink.links) {
    nlohmann::ordered_json l;
    inventory_fields::nvlink_link(link, writer(l));
    links.push_back(std::move(l));
  }
  return n;
}

nlohmann::ordered_json gpu_json(const GpuInventory& gpu) {
  nlohmann::ordered_json j;
  inventory_fields::gpu(gpu, writer(j));
  j["nvlink"] = gpu.nvlink ? nvlink_json(*gpu.nvlink, gpu.compute_capability) : nullptr;
  j["pcie"] = pcie_json(gpu);
  j["clock_event_reasons"] =
      gpu.clock_event_reasons_mask
          ? nlohmann::ordered_json(decode_clock_event_reasons(*gpu.clock_event_reasons_mask))
          : nullptr;
  return j;
}

nlohmann::ordered_json link_json(const GpuLink& link) {
  nlohmann::ordered_json j;
  inventory_fields::link(link, writer(j));
  j["type"] = link_type_name(link.type);
  if (link.p2p_status.empty()) {
    j["p2p_status"] = nullptr;
  } else {
    // By name: the reader's objects are sorted, and a context must survive its own round trip.
    auto statuses = link.p2p_status;
    std::sort(statuses.begin(), statuses.end());
    auto& p2p = j["p2p_status"] = nlohmann::ordered_json::object();
    for (const auto& [capability, status] : statuses) p2p[capability] = status;
  }
  return j;
}

}  // namespace

nlohmann::ordered_json to_json(const Inventory& inventory) {
  nlohmann::ordered_json j;
  inventory_fields::inventory(inventory, writer(j));
  auto& nodes = j["numa_nodes"] = nlohmann::ordered_json::array();
  for (const auto& node : inventory.numa_nodes) {
    nodes.push_back(nlohmann::ordered_json::object());
    inventory_fields::numa_node(node, writer(nodes.back()));
  }
  auto& free_memory = j["free_memory"] = nlohmann::ordered_json::array();
  for (const auto& node : inventory.free_memory) {
    free_memory.push_back(nlohmann::ordered_json::object());
    inventory_fields::free_memory(node, writer(free_memory.back()));
  }
  inventory_fields::iommu(inventory.iommu, writer(j["iommu"] = nlohmann::ordered_json::object()));
  inventory_fields::gds(inventory.gds, writer(j["gds"] = nlohmann::ordered_json::object()));
  auto& gpus = j["gpus"] = nlohmann::ordered_json::array();
  for (const auto& gpu : inventory.gpus) gpus.push_back(gpu_json(gpu));
  auto& links = j["links"] = nlohmann::ordered_json::array();
  for (const auto& link : inventory.links) links.push_back(link_json(link));
  // The GPUs a tensor-parallel group can span without crossing the host.
  std::vector<int> indexes;
  for (const auto& gpu : inventory.gpus) indexes.push_back(gpu.index);
  j["nvlink_domains"] = nvlink_domains(indexes, inventory.links);
  return j;
}

}  // namespace pathbench
