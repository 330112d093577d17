#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pathbench {

// NVLink facts: what the driver says about each GPU's links (`nvidia-smi nvlink -s`), the
// per-link rate of each NVLink generation, and the rate a peer copy over N links is held to.
//
// What `nvidia-smi nvlink -s` reports: one line per link, "Link <n>: <rate> GB/s" or
// "Link <n>: <inactive>". The rate is per link and per direction, and it is the link's line
// (signalling) rate, before the line coding is taken off: V100 and A100 print 25.781 GB/s
// (8 or 4 lanes of 25.78/51.56 Gbit/s NRZ with 64b/66b coding; 25 GB/s of data), H100/H200
// print 26.562 GB/s (2 lanes of 106.25 Gbit/s PAM4 with 16/17 FEC coding; 25 GB/s of data) and
// GB200 prints 53.125 GB/s (50 GB/s of data). NVIDIA's nominal figures are the data rates: an
// H200 NV18 pair is 18 x 25 = 450 GB/s per direction (900 GB/s "bidirectional"), while
// 18 x 26.562 = 478 GB/s. Healthy H100 NV18 pairs measure about 370-380 GB/s one way with
// cudaMemcpyPeer, which is 83 % of 450 but only 79 % of 478: a floor computed from the printed
// rate would fail healthy hardware. So the floor takes the driver's rate through the
// generation's coding (data = printed x data/line), and falls back to the generation's data
// rate when the driver prints none.

// One GPU's block of `nvidia-smi nvlink -s`.
struct NvlinkGpuStatus {
  int index = 0;     // nvidia-smi's index (PCI order), not necessarily CUDA's
  std::string name;  // "NVIDIA H200"
  std::string uuid;  // "GPU-..." or empty when the header has none
  int links = 0;     // links listed (active or not)
  int active_links = 0;
  // The lowest rate among the active links (they all run at the same rate unless one trained
  // down, and then the slowest is what a copy striped over all of them sees); empty when no link
  // is active.
  std::optional<double> link_gb_per_s;
  // Text nvidia-smi printed under the GPU instead of links ("NVML: Unable to retrieve NVLink
  // information as all links are inActive"), if any.
  std::string note;
};

// {"nvidia-smi", "nvlink", "-s"}.
std::vector<std::string> nvidia_smi_nvlink_argv();

// Parses `nvidia-smi nvlink -s`: "GPU <n>: <name> (UUID: <uuid>)" headers, each followed by
// indented "Link <n>: <rate> GB/s" / "Link <n>: <inactive>" lines or by a message (a GPU without
// NVLink prints nothing or one message line). Blank lines are skipped. Throws
// std::invalid_argument naming the line number (1-based) for text before the first header, a
// link line whose value is neither a rate in GB/s nor a bracketed state, or a repeated link.
std::vector<NvlinkGpuStatus> parse_nvidia_smi_nvlink(std::string_view text);

// What the inventory keeps per GPU (context: gpus[i].nvlink); the GPU's entry has none when the
// driver was not asked or said nothing about it.
// One link as NVML reports it.
struct NvlinkLinkState {
  int link = 0;
  bool active = false;
  std::optional<int> version;      // NVLink generation, 1..5 (see nvlink_version_major)
  std::optional<double> gb_per_s;  // line rate per direction, as nvidia-smi prints it
  std::string remote_pci_bus_id;   // canonical; the peer GPU or the NVSwitch
  std::string remote_type;         // "gpu", "switch", "ibmnpu", "unknown"; empty if unread
};

struct GpuNvlink {
  int active_links = 0;
  std::optional<double> link_gb_per_s;  // per link per direction as nvidia-smi prints it
  // From NVML only (empty from nvidia-smi): the generation of the active links and each link.
  std::optional<int> version = std::nullopt;
  std::vector<NvlinkLinkState> links = {};
};

// NVML's nvmlNvlinkVersion_t as a generation: 1 -> 1 (1.0), 2 and 3 -> 2 (2.0, 2.2), 4 and 5 ->
// 3 (3.0, 3.1), 6 -> 4, 7 -> 5. The value is an enum, not the generation (an A100 reports 5):
// hwloc read it as the generation until 2024. Empty for 0 (invalid) and values this table
// does not know.
std::optional<int> nvlink_version_major(unsigned int nvml_version);

struct NvlinkGeneration {
  int version = 0;           // NVLink 2 .. 5
  double data_gb_per_s = 0;  // payload per link per direction (NVIDIA's nominal figure)
  double line_gb_per_s = 0;  // what nvidia-smi nvlink -s prints for a link at full speed
};

// The NVLink generation of a compute capability: 7.0 (Volta) NVLink2, 8.0 (Ampere) NVLink3, 9.0
// (Hopper) NVLink4, 10.x (Blackwell) NVLink5; anything else (consumer parts, no NVLink or a
// generation this table does not know) is empty. Accepts "9.0"-style text; empty for malformed
// text.
std::optional<NvlinkGeneration> nvlink_generation(int major, int minor);
std::optional<NvlinkGeneration> nvlink_generation(std::string_view compute_capability);

// The data rate per link and per direction a floor uses, and a sentence saying where it came
// from: the driver's rate through the generation's coding; the driver's rate as printed when the
// generation is unknown (then 3-6 % strict, and the sentence says so); the generation's nominal
// rate when the driver printed none. Empty when neither is known.
struct NvlinkRate {
  double gb_per_s = 0;
  std::string source;
};
// `nvlink_version` (the generation NVML reported, GpuNvlink::version) stands in for the compute
// capability's generation when that is unknown (a node where CUDA does not see the GPU).
std::optional<NvlinkRate> nvlink_link_rate(std::optional<double> driver_gb_per_s,
                                           std::string_view compute_capability,
                                           std::optional<int> nvlink_version = std::nullopt);

// The table entry of an NVLink generation (2 .. 5); empty for another.
std::optional<NvlinkGeneration> nvlink_generation_of_version(int version);

// The link count of a peer case's link label: "nvlink18" -> 18; any other label ("pcie-p2p",
// "host-staged", "nvlink", "nvlink0", "nvlinkx") -> empty.
std::optional<int> nvlink_count(std::string_view link_param);

}  // namespace pathbench
