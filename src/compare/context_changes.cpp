#include "compare/context_changes.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "core/text.hpp"

namespace pathbench {

using ojson = nlohmann::ordered_json;

std::string ContextChange::text() const {
  std::string t = label + " " + (baseline.empty() ? "(none)" : baseline) + " → " +
                  (result.empty() ? "(none)" : result);
  if (!note.empty()) t += " (" + note + ")";
  return t;
}

namespace {

// A field as JSON, for comparing and printing any of the context's types alike; empty when the
// context never recorded it.
template <typename T>
std::optional<ojson> recorded(const Recorded<T>& f) {
  if (!f.present) return std::nullopt;
  return f.value ? ojson(*f.value) : ojson(nullptr);
}

std::string as_text(const ojson& v) {
  if (v.is_null()) return {};
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array() && !v.empty() &&
      std::all_of(v.begin(), v.end(), [](const ojson& e) { return e.is_string(); })) {
    std::string text;
    for (const auto& e : v) {
      if (!text.empty()) text += "; ";
      text += e.get<std::string>();
    }
    return text;
  }
  if (v.is_array() && v.empty()) return "none";
  return v.dump();
}

template <typename Context>
struct Field {
  const char* name;  // its path below the context ("iommu/mode") or the GPU ("vbios")
  const char* label;
  std::optional<ojson> (*read)(const Context&);
};

// Node-wide fields, most important first.
const Field<RunContext> kNodeFields[] = {
    {"driver_version", "driver", [](const RunContext& c) { return recorded(c.driver_version); }},
    {"cuda_driver_version", "CUDA driver API",
     [](const RunContext& c) { return recorded(c.cuda_driver_version); }},
    {"cuda_runtime_version", "CUDA runtime",
     [](const RunContext& c) { return recorded(c.cuda_runtime_version); }},
    {"bios_vendor", "BIOS vendor", [](const RunContext& c) { return recorded(c.bios_vendor); }},
    {"bios_version", "BIOS version", [](const RunContext& c) { return recorded(c.bios_version); }},
    {"bios_date", "BIOS date", [](const RunContext& c) { return recorded(c.bios_date); }},
    {"kernel", "kernel", [](const RunContext& c) { return recorded(c.kernel); }},
    {"iommu/mode", "IOMMU mode",
     [](const RunContext& c) { return c.iommu ? recorded(c.iommu->mode) : std::nullopt; }},
    {"iommu/cmdline", "IOMMU kernel parameters",
     [](const RunContext& c) { return c.iommu ? recorded(c.iommu->cmdline) : std::nullopt; }},
    {"thp_enabled", "THP", [](const RunContext& c) { return recorded(c.thp_enabled); }},
    {"thp_defrag", "THP defrag", [](const RunContext& c) { return recorded(c.thp_defrag); }},
    // The settings, never the amounts (free memory, page cache): those change from run to run.
    {"khugepaged_defrag", "khugepaged defrag",
     [](const RunContext& c) { return recorded(c.khugepaged_defrag); }},
    {"khugepaged_pages_to_scan", "khugepaged pages_to_scan",
     [](const RunContext& c) { return recorded(c.khugepaged_pages_to_scan); }},
    {"khugepaged_scan_sleep_millisecs", "khugepaged scan_sleep_millisecs",
     [](const RunContext& c) { return recorded(c.khugepaged_scan_sleep_millisecs); }},
    {"khugepaged_max_ptes_none", "khugepaged max_ptes_none",
     [](const RunContext& c) { return recorded(c.khugepaged_max_ptes_none); }},
    {"compaction_proactiveness", "compaction_proactiveness",
     [](const RunContext& c) { return recorded(c.compaction_proactiveness); }},
    {"extfrag_threshold", "extfrag_threshold",
     [](const RunContext& c) { return recorded(c.extfrag_threshold); }},
    {"numa_balancing", "numa_balancing",
     [](const RunContext& c) { return recorded(c.numa_balancing); }},
    {"hugepages_total", "hugetlb pages",
     [](const RunContext& c) { return recorded(c.hugepages_total); }},
    {"hugepage_bytes", "huge page size",
     [](const RunContext& c) { return recorded(c.hugepage_bytes); }},
    {"cpuset", "process cpuset", [](const RunContext& c) { return recorded(c.cpuset); }},
    {"mems_allowed", "process memory nodes",
     [](const RunContext& c) { return recorded(c.mems_allowed); }},
    {"cpuset_aligned_with_gpu", "cpuset aligned with the GPU",
     [](const RunContext& c) { return recorded(c.cpuset_aligned_with_gpu); }},
    {"memlock_limit_bytes", "locked-memory limit",
     [](const RunContext& c) { return recorded(c.memlock_limit_bytes); }},
    {"tool_version", "pathbench version",
     [](const RunContext& c) { return recorded(c.tool_version); }},
    {"git_sha", "pathbench git sha", [](const RunContext& c) { return recorded(c.git_sha); }},
};

const Field<GpuContext> kGpuFields[] = {
    {"name", "model", [](const GpuContext& g) { return recorded(g.name); }},
    {"vbios", "VBIOS", [](const GpuContext& g) { return recorded(g.vbios); }},
    {"pcie_gen_max", "PCIe max generation",
     [](const GpuContext& g) { return recorded(g.pcie_gen_max); }},
    {"pcie_width_max", "PCIe max width",
     [](const GpuContext& g) { return recorded(g.pcie_width_max); }},
    {"pcie_gen_current", "PCIe generation",
     [](const GpuContext& g) { return recorded(g.pcie_gen_current); }},
    {"pcie_width_current", "PCIe width",
     [](const GpuContext& g) { return recorded(g.pcie_width_current); }},
    {"clock_sm_max_mhz", "max SM clock MHz",
     [](const GpuContext& g) { return recorded(g.clock_sm_max_mhz); }},
    {"clock_mem_max_mhz", "max memory clock MHz",
     [](const GpuContext& g) { return recorded(g.clock_mem_max_mhz); }},
    {"ecc_mode", "ECC", [](const GpuContext& g) { return recorded(g.ecc_mode); }},
    {"pcie_path", "PCIe path", [](const GpuContext& g) { return recorded(g.pcie_path); }},
    {"pcie_neighbors", "PCIe neighbours (NICs, NVMe)",
     [](const GpuContext& g) { return recorded(g.pcie_neighbors); }},
    {"pcie_acs", "ACS on the PCIe path", [](const GpuContext& g) { return recorded(g.pcie_acs); }},
    {"persistence_mode", "persistence mode",
     [](const GpuContext& g) { return recorded(g.persistence_mode); }},
    {"mig_mode", "MIG mode", [](const GpuContext& g) { return recorded(g.mig_mode); }},
};

std::string gpu_key(const GpuContext& gpu, std::size_t position) {
  const std::string bus = gpu.pci_bus_id.value_or("");
  return bus.empty() ? concat("#", std::to_string(position)) : bus;
}

template <typename Context>
void compare_field(const Context& b, const Context& r, const Field<Context>& f,
                   const std::string& prefix, const std::string& label_prefix,
                   std::vector<ContextChange>& changes) {
  const std::optional<ojson> bv = f.read(b);
  const std::optional<ojson> rv = f.read(r);
  // A field one side never recorded (an older pathbench) is not a change of the node.
  if (!bv || !rv || *bv == *rv) return;
  changes.push_back({concat(prefix, prefix.empty() ? "" : "/", f.name), label_prefix + f.label,
                     as_text(*bv), as_text(*rv), ""});
}

}  // namespace

std::vector<ContextChange> context_changes(const RunContext& baseline, const RunContext& result) {
  std::vector<ContextChange> changes;
  for (const auto& f : kNodeFields) compare_field(baseline, result, f, "", "", changes);

  std::map<std::string, const GpuContext*> by_key;
  for (std::size_t i = 0; i < baseline.gpus.size(); ++i) {
    by_key[gpu_key(baseline.gpus[i], i)] = &baseline.gpus[i];
  }
  const std::size_t before = baseline.gpus.size();
  const std::size_t now = result.gpus.size();
  if (before != now) {
    changes.push_back({"gpus", "GPU count", std::to_string(before), std::to_string(now), ""});
  }
  for (std::size_t i = 0; i < now; ++i) {
    const GpuContext& g = result.gpus[i];
    const auto it = by_key.find(gpu_key(g, i));
    if (it == by_key.end()) continue;
    const std::string prefix = "gpus/" + std::to_string(i);
    const std::string label =
        "GPU " + (g.index.known() ? std::to_string(*g.index.value) : std::to_string(i)) + " ";
    const std::size_t first = changes.size();
    for (const auto& f : kGpuFields) compare_field(*it->second, g, f, prefix, label, changes);
    for (std::size_t c = first; c < changes.size(); ++c) {
      if (changes[c].field.ends_with("_current")) {
        changes[c].note = "GPUs lower an idle link; the floors tell whether copies reached it";
      }
    }
  }
  return changes;
}

}  // namespace pathbench
