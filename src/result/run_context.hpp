#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace pathbench {

// A field of the context as the file holds it: absent (the writer never recorded it: an older
// pathbench), recorded as null (the inventory could not read it) or a value. "What changed" needs
// the first two apart: a field one side never recorded is no change of the node, but null
// against a value is.
template <typename T>
struct Recorded {
  bool present = false;
  std::optional<T> value;  // empty when absent or null

  bool known() const { return value.has_value(); }
  T value_or(T fallback) const { return value ? *value : std::move(fallback); }
  Recorded& operator=(T v) {
    present = true;
    value = std::move(v);
    return *this;
  }
};

struct GpuNvlinkContext {
  Recorded<int> active_links;
  Recorded<double> link_gb_per_s;  // per link and direction, as nvidia-smi prints it
};

// One element of context.gpus, as inventory/to_json writes it.
struct GpuContext {
  Recorded<int> index;  // CUDA index
  Recorded<std::string> name, uuid, pci_bus_id, vbios, compute_capability;
  Recorded<int> pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max;
  Recorded<int> numa_node;
  Recorded<int> clock_sm_mhz, clock_mem_mhz, clock_sm_max_mhz, clock_mem_max_mhz;
  Recorded<std::uint64_t> memory_bytes;
  Recorded<std::string> ecc_mode, persistence_mode, mig_mode;
  // Its PCIe path, what shares it and the ACS of its bridges (absent before pathbench 0.15).
  Recorded<std::vector<std::string>> pcie_path, pcie_neighbors, pcie_acs;
  std::optional<GpuNvlinkContext> nvlink;  // empty when absent or null
  // The element as read: fields not modelled here are written back from it unchanged.
  nlohmann::ordered_json raw = nlohmann::ordered_json::object();
};

// One element of context.links: an ordered GPU pair and its link.
struct LinkContext {
  Recorded<int> from, to, nvlinks;
  Recorded<std::string> type, param;  // param: the case parameter value ("nvlink18")
  nlohmann::ordered_json raw = nlohmann::ordered_json::object();
};

struct IommuContext {
  Recorded<std::string> mode, cmdline;
  nlohmann::ordered_json raw = nlohmann::ordered_json::object();
};

// A result's (or a baseline run's) context, typed for the readers: compare, baselines, floors
// and the exports read these fields instead of looking keys up in the JSON. The writer side
// (inventory, run) produces the JSON; every field this struct does not model stays in `raw`, so
// to_json(from_json(j)) == j, key order and number spelling included.
struct RunContext {
  // Identity of the run and the node.
  Recorded<std::string> tool_version, git_sha, hostname, node_type, topology_fingerprint, cpu_model;
  Recorded<bool> node_type_derived;  // false: given by --node-type
  // Versions and settings "what changed" reports.
  Recorded<std::string> driver_version, kernel, bios_vendor, bios_version, bios_date;
  Recorded<int> cuda_runtime_version, cuda_driver_version;
  Recorded<std::string> thp_enabled, thp_defrag;
  Recorded<int> numa_balancing;
  Recorded<std::uint64_t> hugepages_total, hugepages_free, hugepage_bytes, memlock_limit_bytes;
  Recorded<std::vector<int>> cpuset, mems_allowed;
  Recorded<bool> cpuset_aligned_with_gpu;
  // How hard a THP fault tries for a huge page before it falls back (null: hidden from the run).
  Recorded<std::int64_t> khugepaged_defrag, khugepaged_pages_to_scan,
      khugepaged_scan_sleep_millisecs, khugepaged_max_ptes_none, compaction_proactiveness,
      extfrag_threshold;
  std::optional<IommuContext> iommu;  // empty when absent or null
  std::vector<GpuContext> gpus;
  std::vector<LinkContext> links;
  // The GPU of the single-GPU families and the GPUs of the multi-GPU ones (run --device/--devices).
  Recorded<int> device;
  Recorded<std::vector<int>> devices;
  // Environment samples at the start and end of the run, as written. Judged (and its contents
  // validated, naming the field) by noise_reasons, which reads this JSON; empty when absent.
  std::optional<nlohmann::ordered_json> environment;
  // The whole object as read.
  nlohmann::ordered_json raw = nlohmann::ordered_json::object();

  // Reads and checks every modelled field: a present field of the wrong type (a number where a
  // name belongs, a string for a PCIe generation, -1 bytes) throws InputError naming `file` and
  // the JSON pointer below `pointer` ("/context", "/runs/0/context").
  static RunContext from_json(const nlohmann::ordered_json& j, const std::string& file,
                              const std::string& pointer = "/context");
  // `raw` with the modelled fields written over it; a field equal to what was read keeps its
  // exact JSON (25 stays 25, never 25.0).
  nlohmann::ordered_json to_json() const;

  // gpus[position], or nullptr when the context has no such GPU.
  const GpuContext* gpu(int position) const;
};

}  // namespace pathbench
