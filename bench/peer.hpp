#pragma once

// The `peer` family: copies between two GPUs of one node, with and without peer access.

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
  // peer_access and sm_read; no_peer_access and two_hop measure a pair without it.
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
  // Pinned host memory: the staging slots of each direction (two_hop), else 0.
  std::uint64_t host_bytes() const;
};
PeerRequest decode_peer_request(const CaseSpec& spec);
std::string_view to_string(PeerRequest::Method m);

// The metrics a peer case records, in order.
std::vector<MetricSpec> peer_metrics(const PeerRequest& r);

inline constexpr std::uint64_t kPeerStagingSlots = 4;
inline constexpr std::uint64_t kPeerMaxChunksPerCopy = 64;

// Why a method needing peer access cannot measure a pair without it (the inventory's answer and
// the driver's alike).
std::string peer_access_need(const PeerRequest& r);

// The family uses the pair's two GPUs, never `--device`.
std::unique_ptr<Family> make_peer_family();

// The CUDA bench (bench/peer.cu).
std::unique_ptr<CaseBench> make_peer_bench(const PeerRequest& r, const Machine& machine);

}  // namespace pathbench
