#include "compare/context_changes.hpp"
#include "core/text.hpp"

#include <map>

namespace pathbench {

using ojson = nlohmann::ordered_json;

std::string ContextChange::text() const {
  std::string t = label + " " + (baseline.empty() ? "(none)" : baseline) + " → " +
                  (result.empty() ? "(none)" : result);
  if (!note.empty()) t += " (" + note + ")";
  return t;
}

namespace {

std::string as_text(const ojson* v) {
  if (v == nullptr || v->is_null()) return {};
  if (v->is_string()) return v->get<std::string>();
  return v->dump();
}

const ojson* at(const ojson& obj, const std::string& key) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const ojson* at_path(const ojson& obj, std::initializer_list<const char*> path) {
  const ojson* v = &obj;
  for (const char* key : path) {
    v = at(*v, key);
    if (v == nullptr) return nullptr;
  }
  return v;
}

struct Field {
  std::initializer_list<const char*> path;
  const char* label;
};

// Node-wide fields, most important first.
const Field kNodeFields[] = {
    {{"driver_version"}, "driver"},
    {{"cuda_driver_version"}, "CUDA driver API"},
    {{"cuda_runtime_version"}, "CUDA runtime"},
    {{"bios_vendor"}, "BIOS vendor"},
    {{"bios_version"}, "BIOS version"},
    {{"bios_date"}, "BIOS date"},
    {{"kernel"}, "kernel"},
    {{"iommu", "mode"}, "IOMMU mode"},
    {{"iommu", "cmdline"}, "IOMMU kernel parameters"},
    {{"thp_enabled"}, "THP"},
    {{"thp_defrag"}, "THP defrag"},
    {{"numa_balancing"}, "numa_balancing"},
    {{"hugepages_total"}, "hugetlb pages"},
    {{"hugepage_bytes"}, "huge page size"},
    {{"cpuset"}, "process cpuset"},
    {{"mems_allowed"}, "process memory nodes"},
    {{"cpuset_aligned_with_gpu"}, "cpuset aligned with the GPU"},
    {{"memlock_limit_bytes"}, "locked-memory limit"},
    {{"tool_version"}, "pathbench version"},
    {{"git_sha"}, "pathbench git sha"},
};

const Field kGpuFields[] = {
    {{"name"}, "model"},
    {{"vbios"}, "VBIOS"},
    {{"pcie_gen_max"}, "PCIe max generation"},
    {{"pcie_width_max"}, "PCIe max width"},
    {{"pcie_gen_current"}, "PCIe generation"},
    {{"pcie_width_current"}, "PCIe width"},
    {{"clock_sm_max_mhz"}, "max SM clock MHz"},
    {{"clock_mem_max_mhz"}, "max memory clock MHz"},
    {{"ecc_mode"}, "ECC"},
    {{"persistence_mode"}, "persistence mode"},
    {{"mig_mode"}, "MIG mode"},
};

std::string gpu_key(const ojson& gpu, std::size_t position) {
  const std::string bus = as_text(at(gpu, "pci_bus_id"));
  return bus.empty() ? concat("#", std::to_string(position)) : bus;
}

}  // namespace

std::vector<ContextChange> context_changes(const ojson& baseline, const ojson& result) {
  std::vector<ContextChange> changes;
  const auto compare_field = [&](const ojson& b, const ojson& r, const Field& f,
                                 const std::string& prefix, const std::string& label_prefix) {
    const ojson* bv = at_path(b, f.path);
    const ojson* rv = at_path(r, f.path);
    // A field one side never recorded (an older pathbench) is not a change of the node.
    if (bv == nullptr || rv == nullptr) return;
    if (*bv == *rv) return;
    std::string field = prefix;
    for (const char* key : f.path) field += concat(field.empty() ? "" : "/", key);
    changes.push_back({field, label_prefix + f.label, as_text(bv), as_text(rv), ""});
  };
  for (const auto& f : kNodeFields) compare_field(baseline, result, f, "", "");

  const ojson* bgpus = at(baseline, "gpus");
  const ojson* rgpus = at(result, "gpus");
  std::map<std::string, std::pair<const ojson*, int>> by_key;
  if (bgpus != nullptr && bgpus->is_array()) {
    for (std::size_t i = 0; i < bgpus->size(); ++i) {
      by_key[gpu_key((*bgpus)[i], i)] = {&(*bgpus)[i], static_cast<int>(i)};
    }
  }
  const std::size_t before = bgpus != nullptr && bgpus->is_array() ? bgpus->size() : 0;
  const std::size_t now = rgpus != nullptr && rgpus->is_array() ? rgpus->size() : 0;
  if (before != now) {
    changes.push_back({"gpus", "GPU count", std::to_string(before), std::to_string(now), ""});
  }
  for (std::size_t i = 0; i < now; ++i) {
    const ojson& g = (*rgpus)[i];
    const auto it = by_key.find(gpu_key(g, i));
    if (it == by_key.end()) continue;
    const std::string index = as_text(at(g, "index"));
    const std::string prefix = "gpus/" + std::to_string(i);
    const std::string label = "GPU " + (index.empty() ? std::to_string(i) : index) + " ";
    const std::size_t first = changes.size();
    for (const auto& f : kGpuFields) compare_field(*it->second.first, g, f, prefix, label);
    for (std::size_t c = first; c < changes.size(); ++c) {
      if (changes[c].field.ends_with("_current")) {
        changes[c].note = "GPUs lower an idle link; the floors tell whether copies reached it";
      }
    }
  }
  return changes;
}

}  // namespace pathbench
