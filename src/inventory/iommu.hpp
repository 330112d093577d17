#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pathbench {

// Whether DMA from the GPU to host memory goes through an IOMMU translation: with it on (and not
// in passthrough), every host page a copy touches needs an IOTLB entry, which costs bandwidth on
// scattered pageable buffers. State of the node, not its layout: not in the topology fingerprint.
struct IommuState {
  std::string mode = "unknown";  // "off", "on", "passthrough" or "unknown"
  int groups = 0;                // entries of /sys/kernel/iommu_groups; 0 when absent
  std::string cmdline;           // the IOMMU tokens of /proc/cmdline, space-separated
};

// The tokens of a kernel command line that configure the IOMMU (iommu=, intel_iommu=, amd_iommu=,
// iommu.*), in their order, joined by single spaces; "" when there are none.
std::string iommu_cmdline_tokens(std::string_view cmdline);

// The mode from those tokens and the group count (empty when /sys/kernel/iommu_groups cannot be
// read): iommu=pt or iommu.passthrough=1 -> passthrough; groups -> on; a readable, empty
// directory -> off; otherwise unknown.
std::string classify_iommu(std::string_view cmdline_tokens, std::optional<int> groups);

// Reads <root>/proc/cmdline and <root>/sys/kernel/iommu_groups; never throws.
IommuState read_iommu(const std::filesystem::path& root = "/");

}  // namespace pathbench
