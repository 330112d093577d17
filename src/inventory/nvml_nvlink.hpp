#pragma once

// NVLink and PCI helpers of the NVML inventory; needs nvml.h (inventory/nvml_api.hpp).

#include <optional>
#include <string>

#include "inventory/nvlink.hpp"
#include "inventory/nvml_api.hpp"

namespace pathbench {

// The GPU's NVLinks: each link's state, generation, rate and remote end. active_links 0 when
// the GPU has none (its first link is NOT_SUPPORTED); empty when the driver lacks the query.
std::optional<GpuNvlink> read_nvml_nvlink(const NvmlApi& nvml, nvmlDevice_t device);

// normalize_pci_bus_id of NVML's text; empty when it is not a bus id.
std::string canonical_nvml_bus_id(const char* bus_id);

}  // namespace pathbench
