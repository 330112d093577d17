#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/link_rates.hpp"
#include "result/result.hpp"
#include "result/run_context.hpp"

namespace pathbench {

// pcie_raw_gb_per_s (raw PCIe rate per direction) is the inventory's: inventory/link_rates.hpp.

// kNvlinkAtPcieSpeed: the topology says the pair is NVLink-connected but the copy ran no faster
// than the GPUs' PCIe links carry (peer access off, NVLink down, the copy went through the host).
enum class FloorVerdict { kPass, kBelowFloor, kLinkDegraded, kUnknownLink, kNvlinkAtPcieSpeed };
std::string_view to_string(FloorVerdict v);
// Whether the verdict fails the gate: below_floor, link_degraded, nvlink_at_pcie_speed.
bool is_failure(FloorVerdict v);

struct FloorCheck {
  // The case id; "<case id>#<metric>" when a case has several metrics held to floors (a
  // bidirectional peer case's two directions, an all-GPU copy's GPUs); "gpu0/pcie_link" for the
  // link check itself.
  std::string id;
  int gpu = 0;         // the GPU whose link is judged (a peer copy's source)
  std::string metric;  // the metric held to the floor; empty for the link check
  FloorVerdict verdict = FloorVerdict::kPass;
  double measured_gb_per_s = 0;  // median bandwidth of the case (0 for the link check)
  double floor_gb_per_s = 0;     // fraction x raw
  // PCIe: from current gen x current width; NVLink: links x data rate per link per direction
  double link_raw_gb_per_s = 0;
  double fraction = 0;  // measured / raw
  std::string detail;   // human sentence
};

struct FloorOptions {
  double fraction = 0.80;                // pinned copies must reach this share of the raw rate
  double nvlink_fraction = 0.80;         // NVLink peer copies: this share of links x link rate
  std::uint64_t min_bytes = 256u << 20;  // only copies at least this large are held to the floor
};

// Absolute expectations derived from the node itself (no baseline needed):
//  - each GPU whose current PCIe gen or width is below its maximum: kLinkDegraded (one entry per
//    GPU, id "gpu<N>/pcie_link"), and its raw rate is taken from the current link state;
//  - every ok copy case with measure=bandwidth, direction h2d or d2h, host_memory "pinned" or
//    "registered-*", bytes >= min_bytes: its median bandwidth against fraction x raw rate of the
//    GPU it ran on (context gpus[device]; the device is GPU 0 unless the case params say
//    otherwise) -> kPass or kBelowFloor;
//    An all-GPU copy case (params gpus=all) holds each GPU's own metric bandwidth_gpu<N> to GPU
//    N's link (id "<case id>#bandwidth_gpu<N>"), never the sum over GPUs;
//  - a GPU without gen/width in the context: kUnknownLink (never silently passes);
//  - every ok peer case (family "peer") with measure=bandwidth, method peer_access or sm_read,
//    direction uni or bi (absent measure and direction mean bandwidth and uni, as in the peer
//    family), bytes >= min_bytes and link "nvlink<N>" (the case's param, else the
//    context's links entry of the pair): each direction's median (uni: "bandwidth"; bi:
//    "bandwidth_fwd" and "bandwidth_rev", ids "<case id>#bandwidth_fwd"/"#bandwidth_rev") against
//    nvlink_fraction x N x the data rate per link and direction (inventory/nvlink.hpp: the
//    driver's rate from gpus[].nvlink through the generation's coding, else the table rate of
//    gpus[].compute_capability; the lower of the pair's two GPUs) -> kPass or kBelowFloor, or
//    kNvlinkAtPcieSpeed when the median is at or below the PCIe raw rate of the pair's faster
//    link (maximum gen x width); kUnknownLink when no per-link rate is known.
// Cases that were skipped or failed are not floor-checked.
std::vector<FloorCheck> check_floors(const RunContext& context,
                                     const std::vector<CaseResult>& cases,
                                     const FloorOptions& options);
// The same for a result built in code (tests): its context is read as the file "result".
std::vector<FloorCheck> check_floors(const Result& result, const FloorOptions& options);

nlohmann::ordered_json to_json(const FloorCheck& f);

}  // namespace pathbench
