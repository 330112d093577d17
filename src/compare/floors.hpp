#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "result/result.hpp"

namespace pathbench {

// Raw PCIe rate per direction in GB/s (1e9 bytes/s) for a generation and lane count:
// GT/s x lanes x encoding / 8. Gen1/2: 8b/10b; Gen3-5: 128b/130b; Gen6+: FLIT (1.0). Empty for
// an unknown generation.
std::optional<double> pcie_raw_gb_per_s(int generation, int width);

enum class FloorVerdict { kPass, kBelowFloor, kLinkDegraded, kUnknownLink };
std::string_view to_string(FloorVerdict v);

struct FloorCheck {
  std::string id;  // case id, or "gpu0/pcie_link" for the link check itself
  int gpu = 0;
  FloorVerdict verdict = FloorVerdict::kPass;
  double measured_gb_per_s = 0;  // median bandwidth of the case (0 for the link check)
  double floor_gb_per_s = 0;     // fraction x raw
  double link_raw_gb_per_s = 0;  // from current gen x current width
  double fraction = 0;           // measured / raw
  std::string detail;            // human sentence
};

struct FloorOptions {
  double fraction = 0.80;                // pinned copies must reach this share of the raw rate
  std::uint64_t min_bytes = 256u << 20;  // only copies at least this large are held to the floor
};

// Absolute expectations derived from the node itself (no baseline needed):
//  - each GPU whose current PCIe gen or width is below its maximum: kLinkDegraded (one entry per
//    GPU, id "gpu<N>/pcie_link"), and its raw rate is taken from the current link state;
//  - every ok copy case with measure=bandwidth, direction h2d or d2h, host_memory "pinned" or
//    "registered-*", bytes >= min_bytes: its median bandwidth against fraction x raw rate of the
//    GPU it ran on (context gpus[device]; the device is GPU 0 unless the case params say
//    otherwise) -> kPass or kBelowFloor;
//  - a GPU without gen/width in the context: kUnknownLink (never silently passes).
// Cases that were skipped or failed are not floor-checked.
std::vector<FloorCheck> check_floors(const Result& result, const FloorOptions& options);

nlohmann::ordered_json to_json(const FloorCheck& f);

}  // namespace pathbench
