#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inventory/nvidia_smi.hpp"
#include "inventory/nvlink.hpp"
#include "inventory/topology.hpp"

namespace pathbench {

class NvmlSession;

// The GPU part of the inventory as NVML reports it. The per-GPU facts come in nvidia-smi's row
// type, in the same units (memory rounded down to MiB, as nvidia-smi prints it, so the topology
// fingerprint does not depend on which source answered), so one merge with CUDA's devices serves
// both sources.
struct NvmlGpuFacts {
  NvidiaSmiGpu row;  // index is NVML's (PCI order, as nvidia-smi's)
  std::optional<std::uint64_t> clock_event_reasons_mask;
  // Active links and rates; active_links 0 when the GPU has no NVLink (NOT_SUPPORTED).
  std::optional<GpuNvlink> nvlink;
};

struct NvmlPairFacts {
  int from = 0, to = 0;  // NVML indexes
  std::optional<std::string> common_ancestor;
  std::vector<std::pair<std::string, std::string>> p2p_status;  // capability -> status
};

struct NvmlInventory {
  std::string driver_version;
  std::vector<NvmlGpuFacts> gpus;
  // GPU labels "GPU<NVML index>" and cells as nvidia-smi topo -m prints them (nvml_topology.hpp).
  TopoMatrix topo;
  std::vector<NvmlPairFacts> pairs;  // every ordered pair of `gpus`
  std::vector<std::string> warnings;
};

// Reads every GPU NVML lists. A query the driver does not support (NOT_SUPPORTED, a missing
// symbol) leaves its field empty; a GPU whose handle or PCI bus id cannot be read is left out
// with a warning. Throws std::runtime_error when NVML cannot count its GPUs.
NvmlInventory read_nvml_inventory(const NvmlSession& session);

}  // namespace pathbench
