#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cuda/cuda_probe.hpp"

namespace pathbench {

// The GPU-to-GPU part of `nvidia-smi topo -m`. NIC (and other non-GPU) rows and columns and the
// affinity columns are dropped; `cells[i][j]` is the entry of row gpus[i], column gpus[j] as
// printed ("X", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS", ...).
struct TopoMatrix {
  std::vector<std::string> gpus;  // "GPU0", "GPU1", ... in the order nvidia-smi lists them
  std::vector<std::vector<std::string>> cells;
};

// The fixed argument vector: {"nvidia-smi", "topo", "-m"}.
std::vector<std::string> nvidia_smi_topo_argv();

// Parses `nvidia-smi topo -m`: a header line naming the columns (GPU0.., NIC0.., then "CPU
// Affinity", "NUMA Affinity", "GPU NUMA ID"), one row per column device, then a blank line and
// the legends, which are ignored. Cells are separated by tabs and/or spaces; ANSI escape codes
// (nvidia-smi underlines the header on a terminal) are stripped. Throws std::invalid_argument
// naming the line number (1-based) for a missing header, a row of an unknown device, a GPU row
// with too few or non-topology cells, a GPU row out of header order, a self cell other than "X",
// or a header GPU without a row.
TopoMatrix parse_nvidia_smi_topo(std::string_view text);

enum class LinkType { kNvlink, kPix, kPxb, kPhb, kNode, kSys, kSelf, kUnknown };

// "NV18" -> kNvlink (with *nvlinks = 18), "PIX" -> kPix, ..., "X" -> kSelf; "SOC" (older drivers'
// name for SYS) -> kSys; anything else kUnknown. `nvlinks` (optional) gets 0 unless NV#.
LinkType link_type_from_cell(std::string_view cell, int* nvlinks = nullptr);

// "nvlink", "pix", "pxb", "phb", "node", "sys", "self", "unknown".
std::string link_type_name(LinkType type);
// Inverse of link_type_name; std::nullopt for any other text.
std::optional<LinkType> link_type_from_name(std::string_view name);

// The driver's view of each ordered GPU pair (CUDA indexes), as probe_cuda() reports it.
using P2PMatrix = std::vector<PeerInfo>;

struct GpuLink {
  int from = 0, to = 0;  // GPU indexes
  LinkType type = LinkType::kUnknown;
  int nvlinks = 0;                      // N of NV#, else 0
  std::optional<bool> peer_access;      // cudaDeviceCanAccessPeer; empty without CUDA
  std::optional<int> performance_rank;  // cudaDevP2PAttrPerformanceRank (lower is better)
  std::optional<bool> native_atomics;   // cudaDevP2PAttrNativeAtomicSupported
  std::string param;                    // link_param(type, nvlinks, peer_access)
  // Where type and nvlinks came from: "nvml" or "nvidia-smi" (empty in results written before
  // the field existed).
  std::string topology_source = {};
  // NVML only (empty from nvidia-smi): nvmlDeviceGetTopologyCommonAncestor's level ("internal",
  // "single", "multiple", "hostbridge", "node", "system") and nvmlDeviceGetP2PStatus per
  // capability ("read", "write", "nvlink", "atomics", "pci") -> "ok", "not_supported", ...
  std::optional<std::string> common_ancestor = std::nullopt;
  std::vector<std::pair<std::string, std::string>> p2p_status = {};
};

// The case parameter value for a link: NV# -> "nvlink<N>"; otherwise peer access true ->
// "pcie-p2p", false -> "host-staged"; peer access unknown: PIX/PXB -> "pcie-p2p", other types
// "host-staged".
std::string link_param(LinkType type, int nvlinks, std::optional<bool> peer_access);

// One GpuLink per ordered pair i != j of the matrix, sorted by (from, to). GPU indexes come from
// the labels ("GPU3" -> 3); the driver attributes are those of the P2P entry with the same
// (from, to), left empty when there is none. Throws std::invalid_argument for a label that is not
// "GPU<n>" or a matrix whose cells do not match its GPU list.
std::vector<GpuLink> build_link_map(const TopoMatrix& topo, const P2PMatrix& p2p);

}  // namespace pathbench
