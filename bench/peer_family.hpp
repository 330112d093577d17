#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "measure/family.hpp"

namespace pathbench {

// What a peer case's axes ask for, decoded once.
struct PeerRequest {
  enum class Method { kPeerAccess, kNoPeerAccess, kTwoHop, kSmRead };
  enum class Measure { kBandwidth, kLatency };
  std::string pair;                         // the axis value: "S-D" or "none"
  std::optional<std::pair<int, int>> gpus;  // {S, D}; empty for "none" (or a malformed value)
  Method method = Method::kPeerAccess;
  bool bidirectional = false;  // direction=bi: S->D and D->S at once
  Measure measure = Measure::kBandwidth;
  std::uint64_t bytes = 0;

  int src() const { return gpus ? gpus->first : -1; }
  int dst() const { return gpus ? gpus->second : -1; }
  // peer_access and sm_read need the driver's peer access; no_peer_access and two_hop do not.
  bool needs_peer_access() const {
    return method == Method::kPeerAccess || method == Method::kSmRead;
  }
  // (accessor, peer) GPU pairs whose peer access the method sets: enabled for peer_access (both
  // ways, so cudaMemcpyPeerAsync takes the direct path) and sm_read (the destination reads the
  // source: D->S, plus S->D for bi), disabled for no_peer_access (both ways); none for two_hop.
  std::vector<std::pair<int, int>> peer_access_pairs() const;
  // two_hop: bytes per staged chunk. 4 MiB, grown so a copy has at most kPeerMaxChunksPerCopy
  // chunks (a latched block must be enqueued without blocking), and never more than the copy.
  std::uint64_t staging_chunk_bytes() const;
  std::uint64_t staging_chunks() const;  // chunks per copy (two_hop), else 1
  // Device memory each GPU of the pair holds: one buffer (uni) or a source and a destination (bi).
  std::uint64_t device_bytes_per_gpu() const { return bidirectional ? 2 * bytes : bytes; }
  // Pinned host memory: the staging slots of each direction (two_hop), else 0.
  std::uint64_t host_bytes() const;
};
PeerRequest decode_peer_request(const CaseSpec& spec);
std::string_view to_string(PeerRequest::Method m);

// The metrics a peer case records, in order (the bench's metrics(), bench/peer.cu).
std::vector<MetricSpec> peer_metrics(const PeerRequest& r);

inline constexpr std::uint64_t kPeerStagingSlots = 4;
inline constexpr std::uint64_t kPeerMinChunkBytes = std::uint64_t{4} << 20;
inline constexpr std::uint64_t kPeerMaxChunksPerCopy = 64;

// The `link` parameter of a pair (the label of Machine::link(S, D): "nvlink18", "pcie-p2p",
// "host-staged"): "none" for pair=none, "unknown" when the inventory has no link for the pair
// (nvidia-smi topo unavailable).
std::string peer_link_param(const PeerRequest& r, const Machine& machine);

// Why the machine cannot run any pair: no usable CUDA, fewer than two GPUs, or fewer than two
// selected by --devices; else nothing.
std::optional<std::string> two_gpu_reason(const Machine& machine);
// Why the case's GPU pair cannot be used on this machine (absent, not selected, no peer access
// where the method needs it), else nothing.
std::optional<std::string> pair_unavailable_reason(const PeerRequest& r, const Machine& machine);

// The `peer` family's axes and host-side rules, shared by the CUDA build (bench/peer.cu) and a
// build without CUDA (bench/peer_unavailable.cpp), so scenario files validate the same on both.
// The family uses the pair's two GPUs, never `--device`.
class PeerFamilyBase : public Family {
 public:
  std::string_view name() const override { return "peer"; }
  std::string_view description() const override;
  const std::vector<AxisSchema>& axes() const override;
  std::vector<std::string> required_axes() const override;
  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override;
  MemoryNeeds memory_needs(const CaseSpec& spec) const override;
  Requirements requirements(const CaseSpec& spec) const override;
  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override;
  // Adds `link` (peer_link_param) right after `pair`.
  void derive_params(CaseSpec& spec, const Machine& machine) const override;
};

std::unique_ptr<Family> make_peer_family();

}  // namespace pathbench
