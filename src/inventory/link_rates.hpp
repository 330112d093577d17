#pragma once

#include <iterator>
#include <optional>
#include <string_view>

namespace pathbench {

// Link physics, in one place: what a PCIe link of a generation and width can carry. The floors
// (compare/floors.cpp), the inventory's context fields (gpus[].pcie.raw_gbps_per_direction) and,
// through the context, the report plots all take their raw rates from here, so they cannot
// disagree about a generation's encoding.
//
// Raw rate per direction = GT/s x lanes x encoding / 8, in GB/s with GB = 1e9 bytes. The encoding
// is the share of transferred bits that carry data: 8b/10b for Gen1/2, 128b/130b for Gen3-5, and
// for Gen6/7 (PAM4, FLIT mode) the share of a 256-byte flit that is not FEC or CRC: 242/256
// (236 bytes of TLP and 6 of DLLP, against 8 of CRC and 6 of FEC). Packet headers are not taken
// off at any generation: they depend on the payload size of each transfer.
struct PcieGeneration {
  int generation = 0;
  double gt_per_s = 0;             // transfers per second per lane, in 1e9
  double encoding = 0;             // data bits per transferred bit
  std::string_view encoding_name;  // "8b/10b", "128b/130b", "flit 242/256"
};

namespace link_rates_detail {
inline constexpr double k8b10b = 8.0 / 10.0;
inline constexpr double k128b130b = 128.0 / 130.0;
inline constexpr double kFlit = 242.0 / 256.0;
inline constexpr PcieGeneration kGenerations[] = {
    {1, 2.5, k8b10b, "8b/10b"},        {2, 5.0, k8b10b, "8b/10b"},
    {3, 8.0, k128b130b, "128b/130b"},  {4, 16.0, k128b130b, "128b/130b"},
    {5, 32.0, k128b130b, "128b/130b"}, {6, 64.0, kFlit, "flit 242/256"},
    {7, 128.0, kFlit, "flit 242/256"},
};
inline constexpr int kMaxWidth = 32;  // the widest link PCIe defines
}  // namespace link_rates_detail

// Generations 1..7; empty for any other number.
constexpr std::optional<PcieGeneration> pcie_generation(int generation) {
  constexpr int kKnown = static_cast<int>(std::size(link_rates_detail::kGenerations));
  if (generation < 1 || generation > kKnown) return std::nullopt;
  return link_rates_detail::kGenerations[generation - 1];
}

// Raw PCIe rate per direction in GB/s for a generation and lane count; empty for an unknown
// generation or a width outside 1..32. Written without an optional inside: GCC 12 warns
// maybe-uninitialized (falsely) where the floors compare two of its results otherwise.
constexpr std::optional<double> pcie_raw_gb_per_s(int generation, int width) {
  constexpr int kKnown = static_cast<int>(std::size(link_rates_detail::kGenerations));
  if (generation < 1 || generation > kKnown || width <= 0 || width > link_rates_detail::kMaxWidth) {
    return std::nullopt;
  }
  const PcieGeneration& g = link_rates_detail::kGenerations[generation - 1];
  return g.gt_per_s * width * g.encoding / 8.0;
}

static_assert(*pcie_raw_gb_per_s(6, 16) == 121.0);
static_assert(*pcie_raw_gb_per_s(2, 16) == 8.0);

}  // namespace pathbench
