// inventory_from_json: the context object back into an Inventory, every field type-checked.
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "inventory/inventory.hpp"

namespace pathbench {
namespace {

// Reads `key` of `object` into `out` when present; a missing key keeps the default so older
// result files still load. A present key of the wrong type is an error naming its JSON pointer.
class JsonReader {
 public:
  JsonReader(const nlohmann::json& object, std::string pointer)
      : object_(object), pointer_(std::move(pointer)) {
    if (!object_.is_object()) {
      throw std::invalid_argument("inventory JSON " + where() + ": expected an object");
    }
  }

  template <typename T>
  void get(const char* key, T& out) const {
    auto it = object_.find(key);
    if (it == object_.end()) return;
    const std::string field = pointer_ + "/" + key;
    // nlohmann converts 3.7 to 3 and -1 to 18446744073709551615 without complaint; a context
    // that says so is corrupt, not approximately right.
    if constexpr (std::is_same_v<T, bool>) {
      if (!it->is_boolean()) throw type_error(field, "a boolean", *it);
    } else if constexpr (std::is_integral_v<T>) {
      check_integer<T>(field, *it);
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      if (!it->is_array()) throw type_error(field, "an array of integers", *it);
      for (std::size_t i = 0; i < it->size(); ++i) {
        check_integer<int>(field + "/" + std::to_string(i), (*it)[i]);
      }
    }
    try {
      out = it->template get<T>();
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument("inventory JSON " + field + ": " + e.what());
    }
  }

  template <typename T>
  void get(const char* key, std::optional<T>& out) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) {
      out.reset();
      return;
    }
    T value{};
    get(key, value);
    out = value;
  }

  const nlohmann::json* child(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  std::string where() const { return pointer_.empty() ? "/" : pointer_; }

 private:
  static std::invalid_argument type_error(const std::string& field, const char* expected,
                                          const nlohmann::json& value) {
    return std::invalid_argument("inventory JSON " + field + ": expected " + expected + ", got " +
                                 value.dump());
  }

  template <typename T>
  static void check_integer(const std::string& field, const nlohmann::json& value) {
    if (!value.is_number_integer()) throw type_error(field, "an integer", value);
    if (value.is_number_unsigned()) {
      if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        throw type_error(field, "a smaller integer", value);
      }
    } else {
      auto v = value.get<std::int64_t>();
      if constexpr (std::is_unsigned_v<T>) {
        if (v < 0) throw type_error(field, "a non-negative integer", value);
      } else {
        if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
          throw type_error(field, "a smaller integer", value);
        }
      }
    }
  }

  const nlohmann::json& object_;
  std::string pointer_;
};

GpuNvlink nvlink_from_json(const nlohmann::json& json, const std::string& pointer) {
  JsonReader n(json, pointer);
  GpuNvlink value;
  n.get("active_links", value.active_links);
  n.get("link_gb_per_s", value.link_gb_per_s);
  n.get("version", value.version);
  // data_gb_per_s_per_link and raw_gbps_per_direction are derived: recomputed when written.
  if (const auto* links = n.child("links"); links != nullptr && !links->is_null()) {
    if (!links->is_array()) {
      throw std::invalid_argument("inventory JSON " + pointer + "/links: expected an array");
    }
    for (std::size_t i = 0; i < links->size(); ++i) {
      JsonReader l((*links)[i], pointer + "/links/" + std::to_string(i));
      NvlinkLinkState link;
      l.get("link", link.link);
      l.get("active", link.active);
      l.get("version", link.version);
      l.get("gb_per_s", link.gb_per_s);
      l.get("remote_pci_bus_id", link.remote_pci_bus_id);
      l.get("remote_type", link.remote_type);
      value.links.push_back(std::move(link));
    }
  }
  return value;
}

}  // namespace

Inventory inventory_from_json(const nlohmann::json& json) {
  Inventory inventory;
  JsonReader r(json, "");
  r.get("tool_version", inventory.tool_version);
  r.get("git_sha", inventory.git_sha);
  r.get("hostname", inventory.hostname);
  r.get("node_type", inventory.node_type);
  r.get("node_type_derived", inventory.node_type_derived);
  r.get("topology_fingerprint", inventory.topology_fingerprint);
  r.get("cpu_model", inventory.cpu_model);
  r.get("logical_cpus", inventory.logical_cpus);
  if (const auto* nodes = r.child("numa_nodes")) {
    if (!nodes->is_array())
      throw std::invalid_argument("inventory JSON /numa_nodes: expected an array");
    for (std::size_t i = 0; i < nodes->size(); ++i) {
      JsonReader n((*nodes)[i], "/numa_nodes/" + std::to_string(i));
      NumaNodeInventory node;
      n.get("id", node.id);
      n.get("cpus", node.cpus);
      n.get("memory_bytes", node.memory_bytes);
      inventory.numa_nodes.push_back(std::move(node));
    }
  }
  r.get("cpuset", inventory.cpuset);
  r.get("mems_allowed", inventory.mems_allowed);
  r.get("cpuset_aligned_with_gpu", inventory.cpuset_aligned_with_gpu);
  r.get("thp_enabled", inventory.thp_enabled);
  r.get("thp_defrag", inventory.thp_defrag);
  r.get("numa_balancing", inventory.numa_balancing);
  r.get("hugepages_total", inventory.hugepages_total);
  r.get("hugepages_free", inventory.hugepages_free);
  r.get("hugepage_bytes", inventory.hugepage_bytes);
  r.get("mem_total_bytes", inventory.mem_total_bytes);
  r.get("mem_available_bytes", inventory.mem_available_bytes);
  r.get("memlock_limit_bytes", inventory.memlock_limit_bytes);
  r.get("kernel", inventory.kernel);
  r.get("bios_vendor", inventory.bios_vendor);
  r.get("bios_version", inventory.bios_version);
  r.get("bios_date", inventory.bios_date);
  if (const auto* iommu = r.child("iommu"); iommu != nullptr && !iommu->is_null()) {
    JsonReader i(*iommu, "/iommu");
    i.get("mode", inventory.iommu.mode);
    i.get("groups", inventory.iommu.groups);
    i.get("cmdline", inventory.iommu.cmdline);
  }
  r.get("cuda_runtime_version", inventory.cuda_runtime_version);
  r.get("cuda_driver_version", inventory.cuda_driver_version);
  r.get("driver_version", inventory.driver_version);
  r.get("cuda_unavailable_reason", inventory.cuda_unavailable_reason);
  r.get("nvidia_smi_status", inventory.nvidia_smi_status);
  r.get("nvml_status", inventory.nvml_status);
  r.get("inventory_source", inventory.inventory_source);
  if (const auto* gpus = r.child("gpus")) {
    if (!gpus->is_array()) throw std::invalid_argument("inventory JSON /gpus: expected an array");
    for (std::size_t i = 0; i < gpus->size(); ++i) {
      JsonReader g((*gpus)[i], "/gpus/" + std::to_string(i));
      GpuInventory gpu;
      g.get("index", gpu.index);
      g.get("name", gpu.name);
      g.get("uuid", gpu.uuid);
      g.get("pci_bus_id", gpu.pci_bus_id);
      g.get("pcie_gen_current", gpu.pcie_gen_current);
      g.get("pcie_gen_max", gpu.pcie_gen_max);
      g.get("pcie_width_current", gpu.pcie_width_current);
      g.get("pcie_width_max", gpu.pcie_width_max);
      g.get("numa_node", gpu.numa_node);
      g.get("local_cpus", gpu.local_cpus);
      g.get("clock_sm_mhz", gpu.clock_sm_mhz);
      g.get("clock_mem_mhz", gpu.clock_mem_mhz);
      g.get("clock_sm_max_mhz", gpu.clock_sm_max_mhz);
      g.get("clock_mem_max_mhz", gpu.clock_mem_max_mhz);
      g.get("memory_bytes", gpu.memory_bytes);
      g.get("vbios", gpu.vbios);
      g.get("compute_capability", gpu.compute_capability);
      g.get("ecc_mode", gpu.ecc_mode);
      g.get("persistence_mode", gpu.persistence_mode);
      g.get("mig_mode", gpu.mig_mode);
      g.get("clock_event_reasons_mask", gpu.clock_event_reasons_mask);
      g.get("inventory_source", gpu.inventory_source);
      if (const auto* nvlink = g.child("nvlink"); nvlink != nullptr && !nvlink->is_null()) {
        gpu.nvlink = nvlink_from_json(*nvlink, "/gpus/" + std::to_string(i) + "/nvlink");
      }
      inventory.gpus.push_back(std::move(gpu));
    }
  }
  r.get("topo_status", inventory.topo_status);
  if (const auto* links = r.child("links")) {
    if (!links->is_array()) throw std::invalid_argument("inventory JSON /links: expected an array");
    for (std::size_t i = 0; i < links->size(); ++i) {
      const std::string pointer = "/links/" + std::to_string(i);
      JsonReader l((*links)[i], pointer);
      GpuLink link;
      l.get("from", link.from);
      l.get("to", link.to);
      std::string type = link_type_name(LinkType::kUnknown);
      l.get("type", type);
      auto parsed = link_type_from_name(type);
      if (!parsed) {
        throw std::invalid_argument("inventory JSON " + pointer + "/type: unknown link type \"" +
                                    type + "\"");
      }
      link.type = *parsed;
      l.get("nvlinks", link.nvlinks);
      l.get("peer_access", link.peer_access);
      l.get("performance_rank", link.performance_rank);
      l.get("native_atomics", link.native_atomics);
      l.get("param", link.param);
      l.get("topology_source", link.topology_source);
      l.get("common_ancestor", link.common_ancestor);
      if (const auto* p2p = l.child("p2p_status"); p2p != nullptr && !p2p->is_null()) {
        if (!p2p->is_object()) {
          throw std::invalid_argument("inventory JSON " + pointer +
                                      "/p2p_status: expected an object");
        }
        JsonReader statuses(*p2p, pointer + "/p2p_status");
        for (const auto& [capability, status] : p2p->items()) {
          std::string value;
          statuses.get(capability.c_str(), value);
          link.p2p_status.emplace_back(capability, std::move(value));
        }
      }
      inventory.links.push_back(std::move(link));
    }
  }
  r.get("nvlink_status", inventory.nvlink_status);
  r.get("warnings", inventory.warnings);
  return inventory;
}

}  // namespace pathbench
