#include <cmath>
#include <limits>
#include <type_traits>

#include "core/errors.hpp"
#include "result/run_context.hpp"

// RunContext::from_json: reading a context and checking each field it models.

namespace pathbench {
namespace {

using ojson = nlohmann::ordered_json;

// Whether a field may be null. The inventory writes null for what it could not read (a PCIe link
// without nvidia-smi, a numa_balancing a container hides); a name or a count is never unknown.
enum class Null { kAllowed, kRefused };

std::string describe_type(const ojson& v) {
  if (v.is_number_integer()) return "integer";
  if (v.is_number_float()) return "number";
  return v.type_name();
}

// Reads one context object, naming the file and the JSON pointer of whatever is wrong.
class ContextReader {
 public:
  explicit ContextReader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& at, const std::string& what) const {
    throw InputError(file_, at, what);
  }

  const ojson& object(const ojson& v, const std::string& at) const {
    if (!v.is_object()) fail(at, "expected an object, found " + describe_type(v));
    return v;
  }

  // The array under `key`, or nullptr when the key is absent.
  const ojson* array(const ojson& obj, const std::string& at, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) return nullptr;
    if (!it->is_array()) fail(at + "/" + key, "expected an array, found " + describe_type(*it));
    return &*it;
  }

  // The object under `key`, or nullptr when the key is absent or null.
  const ojson* optional_object(const ojson& obj, const std::string& at, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    if (!it->is_object()) {
      fail(at + "/" + key, "expected an object or null, found " + describe_type(*it));
    }
    return &*it;
  }

  template <typename T>
  void read(const ojson& obj, const std::string& at, const char* key, Recorded<T>& out,
            Null null = Null::kRefused) const {
    const auto it = obj.find(key);
    if (it == obj.end()) return;
    out.present = true;
    const std::string where = at + "/" + key;
    if (it->is_null()) {
      if (null == Null::kRefused) fail(where, "expected " + expected<T>() + ", found null");
      return;
    }
    out.value = convert<T>(*it, where, null);
  }

 private:
  template <typename T>
  static std::string expected() {
    if constexpr (std::is_same_v<T, std::string>) {
      return "a string";
    } else if constexpr (std::is_same_v<T, bool>) {
      return "true or false";
    } else if constexpr (std::is_same_v<T, double>) {
      return "a number";
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      return "an array of integers";
    } else if constexpr (std::is_unsigned_v<T>) {
      return "a non-negative integer";
    } else {
      return "an integer";
    }
  }

  template <typename T>
  T convert(const ojson& v, const std::string& at, Null null) const {
    // "true or false" with null allowed reads "true, false or null".
    std::string what = "expected " + expected<T>();
    if (null == Null::kAllowed) {
      what = std::is_same_v<T, bool> ? "expected true, false or null" : what + " or null";
    }
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) fail(at, what + ", found " + describe_type(v));
      return v.get<std::string>();
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) fail(at, what + ", found " + describe_type(v));
      return v.get<bool>();
    } else if constexpr (std::is_same_v<T, double>) {
      if (!v.is_number()) fail(at, what + ", found " + describe_type(v));
      const double d = v.get<double>();
      if (!std::isfinite(d)) fail(at, "expected a finite number, found " + v.dump());
      return d;
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      if (!v.is_array()) fail(at, what + ", found " + describe_type(v));
      std::vector<int> out;
      for (std::size_t i = 0; i < v.size(); ++i) {
        out.push_back(convert<int>(v[i], at + "/" + std::to_string(i), Null::kRefused));
      }
      return out;
    } else {
      // nlohmann would turn 3.7 into 3 and -1 into 18446744073709551615 without complaint.
      if (!v.is_number_integer()) {
        fail(at, what + ", found " + (v.is_number() ? v.dump() : describe_type(v)));
      }
      bool fits = false;
      if (v.is_number_unsigned()) {
        fits = v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
      } else if (const auto s = v.get<std::int64_t>(); s >= 0) {
        fits = static_cast<std::uint64_t>(s) <=
               static_cast<std::uint64_t>(std::numeric_limits<T>::max());
      } else if constexpr (std::is_signed_v<T>) {
        fits = s >= static_cast<std::int64_t>(std::numeric_limits<T>::min());
      }
      if (!fits) fail(at, what + ", found " + v.dump());
      return v.get<T>();
    }
  }

  const std::string& file_;
};

GpuContext gpu_from_json(const ContextReader& r, const ojson& v, const std::string& at) {
  GpuContext g;
  g.raw = r.object(v, at);
  r.read(v, at, "index", g.index);
  for (auto [key, field] : {std::pair{"name", &g.name},
                            {"uuid", &g.uuid},
                            {"pci_bus_id", &g.pci_bus_id},
                            {"vbios", &g.vbios},
                            {"compute_capability", &g.compute_capability}}) {
    r.read(v, at, key, *field);
  }
  for (auto [key, field] : {std::pair{"pcie_gen_current", &g.pcie_gen_current},
                            {"pcie_gen_max", &g.pcie_gen_max},
                            {"pcie_width_current", &g.pcie_width_current},
                            {"pcie_width_max", &g.pcie_width_max},
                            {"numa_node", &g.numa_node},
                            {"clock_sm_mhz", &g.clock_sm_mhz},
                            {"clock_mem_mhz", &g.clock_mem_mhz},
                            {"clock_sm_max_mhz", &g.clock_sm_max_mhz},
                            {"clock_mem_max_mhz", &g.clock_mem_max_mhz}}) {
    r.read(v, at, key, *field, Null::kAllowed);
  }
  r.read(v, at, "memory_bytes", g.memory_bytes);
  for (auto [key, field] : {std::pair{"ecc_mode", &g.ecc_mode},
                            {"persistence_mode", &g.persistence_mode},
                            {"mig_mode", &g.mig_mode}}) {
    r.read(v, at, key, *field, Null::kAllowed);
  }
  if (const ojson* n = r.optional_object(v, at, "nvlink")) {
    GpuNvlinkContext nvlink;
    r.read(*n, at + "/nvlink", "active_links", nvlink.active_links);
    r.read(*n, at + "/nvlink", "link_gb_per_s", nvlink.link_gb_per_s, Null::kAllowed);
    g.nvlink = nvlink;
  }
  return g;
}

LinkContext link_from_json(const ContextReader& r, const ojson& v, const std::string& at) {
  LinkContext l;
  l.raw = r.object(v, at);
  r.read(v, at, "from", l.from);
  r.read(v, at, "to", l.to);
  r.read(v, at, "nvlinks", l.nvlinks);
  r.read(v, at, "type", l.type);
  r.read(v, at, "param", l.param);
  return l;
}

}  // namespace

RunContext RunContext::from_json(const ojson& j, const std::string& file,
                                 const std::string& pointer) {
  const ContextReader r(file);
  const std::string& at = pointer;
  RunContext c;
  c.raw = r.object(j, at);
  for (auto [key, field] : {std::pair{"tool_version", &c.tool_version},
                            {"git_sha", &c.git_sha},
                            {"hostname", &c.hostname},
                            {"node_type", &c.node_type},
                            {"topology_fingerprint", &c.topology_fingerprint},
                            {"cpu_model", &c.cpu_model},
                            {"driver_version", &c.driver_version},
                            {"kernel", &c.kernel},
                            {"bios_vendor", &c.bios_vendor},
                            {"bios_version", &c.bios_version},
                            {"bios_date", &c.bios_date},
                            {"thp_enabled", &c.thp_enabled},
                            {"thp_defrag", &c.thp_defrag}}) {
    r.read(j, at, key, *field);
  }
  r.read(j, at, "node_type_derived", c.node_type_derived);
  r.read(j, at, "cuda_runtime_version", c.cuda_runtime_version, Null::kAllowed);
  r.read(j, at, "cuda_driver_version", c.cuda_driver_version, Null::kAllowed);
  r.read(j, at, "numa_balancing", c.numa_balancing, Null::kAllowed);
  for (auto [key, field] : {std::pair{"hugepages_total", &c.hugepages_total},
                            {"hugepages_free", &c.hugepages_free},
                            {"hugepage_bytes", &c.hugepage_bytes},
                            {"memlock_limit_bytes", &c.memlock_limit_bytes}}) {
    r.read(j, at, key, *field);
  }
  r.read(j, at, "cpuset", c.cpuset);
  r.read(j, at, "mems_allowed", c.mems_allowed);
  r.read(j, at, "cpuset_aligned_with_gpu", c.cpuset_aligned_with_gpu, Null::kAllowed);
  if (const ojson* iommu = r.optional_object(j, at, "iommu")) {
    IommuContext i;
    i.raw = *iommu;
    r.read(*iommu, at + "/iommu", "mode", i.mode);
    r.read(*iommu, at + "/iommu", "cmdline", i.cmdline);
    c.iommu = std::move(i);
  }
  if (const ojson* gpus = r.array(j, at, "gpus")) {
    for (std::size_t i = 0; i < gpus->size(); ++i) {
      c.gpus.push_back(gpu_from_json(r, (*gpus)[i], at + "/gpus/" + std::to_string(i)));
    }
  }
  if (const ojson* links = r.array(j, at, "links")) {
    for (std::size_t i = 0; i < links->size(); ++i) {
      c.links.push_back(link_from_json(r, (*links)[i], at + "/links/" + std::to_string(i)));
    }
  }
  r.read(j, at, "device", c.device);
  r.read(j, at, "devices", c.devices);
  if (const auto it = j.find("environment"); it != j.end()) c.environment = *it;
  return c;
}

}  // namespace pathbench
