#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gds_state.hpp"
#include "inventory/buddyinfo.hpp"
#include "inventory/iommu.hpp"
#include "inventory/machine.hpp"
#include "inventory/nvlink.hpp"
#include "inventory/sysfs.hpp"
#include "inventory/topology.hpp"

namespace pathbench {

struct GpuInventory {
  int index = 0;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;  // canonical lower-case "0000:65:00.0"
  std::optional<int> pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max;
  std::optional<int> numa_node;
  std::vector<int> local_cpus;
  // From sysfs (inventory/pcie_paths.hpp): the functions from the root port down to the GPU,
  // the NICs and NVMe drives that share its switch, root port or host bridge, and the ACS
  // control of each bridge on the path.
  std::vector<std::string> pcie_path, pcie_neighbors, pcie_acs;
  std::optional<int> clock_sm_mhz, clock_mem_mhz, clock_sm_max_mhz, clock_mem_max_mhz;
  std::uint64_t memory_bytes = 0;
  std::string vbios;
  std::string compute_capability;  // "9.0" from CUDA; empty when CUDA does not see the GPU
  // Active NVLinks and their per-link rate from `nvidia-smi nvlink -s`; empty when the driver was
  // not asked or said nothing about this GPU (no NVLink is active_links 0).
  std::optional<GpuNvlink> nvlink;
  // Settings, not layout (kept out of the fingerprint): "enabled" / "disabled", empty when the
  // driver does not say. ECC costs memory bandwidth; without persistence mode the driver is torn
  // down between clients; MIG splits the GPU.
  std::optional<std::string> ecc_mode, persistence_mode, mig_mode;
  // NVML's clocks-event (throttle) reasons when the inventory was read; empty from nvidia-smi.
  std::optional<std::uint64_t> clock_event_reasons_mask = std::nullopt;
  // Which driver interface described this GPU: "nvml", "nvidia-smi", or "none" (CUDA sees it,
  // the driver's tools do not); empty in results written before the field existed.
  std::string inventory_source = {};
};

struct NumaNodeInventory {
  int id = 0;
  std::vector<int> cpus;
  std::uint64_t memory_bytes = 0;
};

// Everything DESIGN.md lists under the result's `context`.
struct Inventory {
  std::string tool_version;
  std::string git_sha;
  std::string hostname;
  std::string node_type;  // --node-type, or derived (GPU model / PCIe gen x width / NUMA)
  bool node_type_derived = true;
  std::string topology_fingerprint;  // sha256 over topology-relevant fields only
  std::string cpu_model;
  int logical_cpus = 0;
  std::vector<NumaNodeInventory> numa_nodes;
  std::vector<int> cpuset;                      // process affinity (Cpus_allowed_list)
  std::vector<int> mems_allowed;                // Mems_allowed_list
  std::optional<bool> cpuset_aligned_with_gpu;  // empty when there is no GPU
  std::string thp_enabled, thp_defrag;
  std::optional<int> numa_balancing;
  std::uint64_t hugepages_total = 0, hugepages_free = 0, hugepage_bytes = 0;
  std::uint64_t mem_total_bytes = 0, mem_available_bytes = 0;
  std::uint64_t memlock_limit_bytes = 0;
  // What a THP fault's cost depends on besides thp_defrag: the khugepaged and compaction
  // settings, and, as the run starts, the page cache, the memory free outright, and per NUMA
  // node the free memory in blocks a THP fits in (/proc/buddyinfo).
  VmSettings vm_settings;
  std::uint64_t mem_free_bytes = 0, page_cache_bytes = 0;
  std::vector<NodeFreeMemory> free_memory;
  std::string kernel;
  std::string bios_vendor, bios_version, bios_date;
  IommuState iommu;
  GdsState gds;  // GPUDirect Storage: libcufile, nvidia-fs, compatibility mode
  std::optional<int> cuda_runtime_version, cuda_driver_version;
  std::string driver_version;
  std::string cuda_unavailable_reason;
  std::string nvidia_smi_status;  // "ok", or why its data is absent (or why it was not run)
  // "ok" when NVML described the GPUs, else why not (then nvidia-smi is the fallback).
  std::string nvml_status;
  // The source of the GPU facts: "nvml", "nvidia-smi", or "none" when neither answered.
  std::string inventory_source;
  std::vector<GpuInventory> gpus;
  // Every ordered GPU pair (CUDA indexes): link type from `nvidia-smi topo -m`, peer attributes
  // from the driver. Empty with fewer than two GPUs or without the topology; topo_status is "ok"
  // or says why.
  std::string topo_status;
  std::vector<GpuLink> links;
  // "ok" when `nvidia-smi nvlink -s` was read (gpus[].nvlink), else why not.
  std::string nvlink_status;
  std::vector<std::string> warnings;
};

class NvmlSession;

struct InventoryOptions {
  std::string node_type_override;
  // Opens the NVML session the GPU facts come from; empty: dlopen libnvidia-ml.so.1. Tests give
  // a session over fake functions. A throw means "no NVML": nvidia-smi is the fallback. (Given a
  // default like every member added since: callers brace-initialize the older members, and
  // -Wmissing-field-initializers spares members that have one.)
  std::function<std::unique_ptr<NvmlSession>()> open_nvml = {};
};

Inventory collect_inventory(const InventoryOptions& options);
Machine machine_from(const Inventory& inventory);
nlohmann::ordered_json to_json(const Inventory& inventory);
Inventory inventory_from_json(const nlohmann::json& json);

}  // namespace pathbench
