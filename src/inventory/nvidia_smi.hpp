#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/cuda_probe.hpp"
#include "inventory/inventory.hpp"

namespace pathbench {

// One row of the query below. Fields nvidia-smi reports as "[N/A]", "[Not Supported]" or "N/A"
// are empty optionals (or empty strings).
struct NvidiaSmiGpu {
  int index = 0;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;  // canonical, see normalize_pci_bus_id; empty when not reported
  std::optional<int> pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max;
  std::optional<int> clock_sm_mhz, clock_mem_mhz, clock_sm_max_mhz, clock_mem_max_mhz;
  std::optional<std::uint64_t> memory_bytes;  // memory.total, reported in MiB
  std::string driver_version;
  std::string vbios;
  // "enabled" / "disabled"; empty when the GPU does not report the mode (not supported, N/A).
  std::optional<std::string> ecc_mode, persistence_mode, mig_mode;
};

// True for a trimmed csv field that carries no value: empty, "N/A" or any bracketed marker
// ("[N/A]", "[Not Supported]", "[Unknown Error]").
bool nvidia_smi_value_missing(std::string_view field);

// Refuses line LINE_NUMBER of the output of COMMAND ("nvidia-smi", "nvidia-smi nvlink -s"):
// std::invalid_argument naming the command, the line and why, with the line quoted.
[[noreturn]] void reject_nvidia_smi_line(std::string_view command, std::size_t line_number,
                                         std::string_view line, const std::string& why);

// The fixed argument vector of the query; the parser below expects exactly these fields in this
// order.
const std::vector<std::string>& nvidia_smi_query_argv();

// Parses the query's csv,noheader,nounits output. Blank lines are skipped. Throws
// std::invalid_argument naming the line number (1-based) for a wrong field count or a field that
// is neither a number nor a not-available marker.
std::vector<NvidiaSmiGpu> parse_nvidia_smi_query(std::string_view text);

// Canonical PCI address "dddd:bb:dd.f", lower-case, domain at least 4 hex digits (wider only when
// the domain needs it, as Linux prints it). Accepts nvidia-smi's 8-digit domain
// ("00000000:65:00.0"), CUDA's ("0000:65:00.0"), upper case, and a missing domain ("65:00.0").
// Throws std::invalid_argument quoting the text otherwise.
std::string normalize_pci_bus_id(std::string_view text);

// One GpuInventory per CUDA device (CUDA index, name, memory, compute capability), completed from
// the driver's row with the same PCI bus id (PCIe link, clocks, UUID, VBIOS); the index is the
// key only where a bus id is missing. Without CUDA devices the rows alone describe the GPUs. The
// rows are nvidia-smi's or NVML's (same type, same units); `source` ("nvidia-smi" or "nvml")
// becomes each matched GPU's inventory_source ("none" for a CUDA device without a row). A CUDA
// device without a row adds a sentence to `warnings` (when there are rows at all).
std::vector<GpuInventory> merge_gpu_sources(const std::vector<CudaDeviceInfo>& cuda_devices,
                                            const std::vector<NvidiaSmiGpu>& rows,
                                            std::vector<std::string>& warnings,
                                            std::string_view source = "nvidia-smi");

// Sets gpus[i].nvlink from the blocks of `nvidia-smi nvlink -s` (see inventory/nvlink.hpp). A
// block belongs to the GPU with its UUID, else (no UUID on either side) to the GPU whose bus id is
// that of the query row with the block's nvidia-smi index; GPUs without a block keep no nvlink
// entry. Returns how many GPUs got one.
std::size_t apply_nvlink_status(std::vector<GpuInventory>& gpus,
                                const std::vector<NvlinkGpuStatus>& blocks,
                                const std::vector<NvidiaSmiGpu>& rows);

}  // namespace pathbench
