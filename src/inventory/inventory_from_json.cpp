// inventory_from_json: the context object back into an Inventory, every field type-checked.
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "inventory/inventory.hpp"
#include "inventory/inventory_fields.hpp"

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

  // get() of every field of a part's table.
  auto reader() const {
    return [this](const char* key, auto& field) { get(key, field); };
  }

  // The array under `key` (absent, or null where `null_allowed`: none), each element read by
  // `read(element, pointer)`.
  template <typename Read>
  void each(const char* key, Read&& read, bool null_allowed = false) const {
    const auto* array = child(key);
    if (array == nullptr || (null_allowed && array->is_null())) return;
    const std::string at = pointer_ + "/" + key;
    if (!array->is_array()) {
      throw std::invalid_argument("inventory JSON " + at + ": expected an array");
    }
    for (std::size_t i = 0; i < array->size(); ++i) read((*array)[i], at + "/" + std::to_string(i));
  }

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
  inventory_fields::nvlink(value, n.reader());
  // data_gb_per_s_per_link and raw_gbps_per_direction are derived: recomputed when written.
  n.each(
      "links",
      [&](const nlohmann::json& element, const std::string& at) {
        NvlinkLinkState link;
        inventory_fields::nvlink_link(link, JsonReader(element, at).reader());
        value.links.push_back(std::move(link));
      },
      /*null_allowed=*/true);
  return value;
}

GpuLink link_from_json(const nlohmann::json& json, const std::string& pointer) {
  JsonReader l(json, pointer);
  GpuLink link;
  inventory_fields::link(link, l.reader());
  std::string type = link_type_name(LinkType::kUnknown);
  l.get("type", type);
  const auto parsed = link_type_from_name(type);
  if (!parsed) {
    throw std::invalid_argument("inventory JSON " + pointer + "/type: unknown link type \"" + type +
                                "\"");
  }
  link.type = *parsed;
  if (const auto* p2p = l.child("p2p_status"); p2p != nullptr && !p2p->is_null()) {
    if (!p2p->is_object()) {
      throw std::invalid_argument("inventory JSON " + pointer + "/p2p_status: expected an object");
    }
    JsonReader statuses(*p2p, pointer + "/p2p_status");
    for (const auto& [capability, status] : p2p->items()) {
      std::string value;
      statuses.get(capability.c_str(), value);
      link.p2p_status.emplace_back(capability, std::move(value));
    }
  }
  return link;
}

}  // namespace

Inventory inventory_from_json(const nlohmann::json& json) {
  Inventory inventory;
  JsonReader r(json, "");
  inventory_fields::inventory(inventory, r.reader());
  r.each("numa_nodes", [&](const nlohmann::json& element, const std::string& at) {
    NumaNodeInventory node;
    inventory_fields::numa_node(node, JsonReader(element, at).reader());
    inventory.numa_nodes.push_back(std::move(node));
  });
  r.each("free_memory", [&](const nlohmann::json& element, const std::string& at) {
    NodeFreeMemory node;
    inventory_fields::free_memory(node, JsonReader(element, at).reader());
    inventory.free_memory.push_back(node);
  });
  if (const auto* iommu = r.child("iommu"); iommu != nullptr && !iommu->is_null()) {
    inventory_fields::iommu(inventory.iommu, JsonReader(*iommu, "/iommu").reader());
  }
  if (const auto* gds = r.child("gds"); gds != nullptr && !gds->is_null()) {
    inventory_fields::gds(inventory.gds, JsonReader(*gds, "/gds").reader());
  }
  r.each("gpus", [&](const nlohmann::json& element, const std::string& at) {
    JsonReader g(element, at);
    GpuInventory gpu;
    inventory_fields::gpu(gpu, g.reader());
    if (const auto* nvlink = g.child("nvlink"); nvlink != nullptr && !nvlink->is_null()) {
      gpu.nvlink = nvlink_from_json(*nvlink, at + "/nvlink");
    }
    inventory.gpus.push_back(std::move(gpu));
  });
  r.each("links", [&](const nlohmann::json& element, const std::string& at) {
    inventory.links.push_back(link_from_json(element, at));
  });
  return inventory;
}

}  // namespace pathbench
