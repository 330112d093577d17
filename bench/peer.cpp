#include "bench/peer.hpp"

#include <algorithm>

#include "inventory/gpu_selection.hpp"
#include "measure/gpu_bench.hpp"
#include "scenario/typed_axis.hpp"

namespace pathbench {

namespace {

using Method = PeerRequest::Method;
using Measure = PeerRequest::Measure;

constexpr std::uint64_t kMinChunkBytes = std::uint64_t{4} << 20;

const GpuPairAxis kPair{"pair", "source and destination CUDA device"};
const EnumAxis<Method> kMethod{
    "method",
    {{"peer_access", Method::kPeerAccess},
     {"no_peer_access", Method::kNoPeerAccess},
     {"two_hop", Method::kTwoHop},
     {"sm_read", Method::kSmRead}},
    "peer_access: cudaMemcpyPeerAsync with peer access enabled; no_peer_access: the same with "
    "peer access disabled (staged by the driver); two_hop: D2H on the source's stream then H2D on "
    "the destination's through pinned staging slots, chunked and pipelined; sm_read: a copy "
    "kernel on the destination reading the source's memory over peer access"};
const EnumAxis<bool> kDirection{"direction",
                                {{"uni", false}, {"bi", true}},
                                "uni: S->D; bi: S->D and D->S at once (per direction and the sum)"};
const EnumAxis<Measure> kMeasure{
    "measure",
    {{"bandwidth", Measure::kBandwidth}, {"latency", Measure::kLatency}},
    "bandwidth: GB/s of a latched block of copies; latency: time per small copy and round trip"};
const IntegerAxis kBytes{"bytes", 1, std::int64_t{1} << 36, "bytes per copy"};

class PeerFamily final : public DeclaredFamily {
 public:
  PeerFamily()
      : DeclaredFamily({"peer",
                        "GPU-to-GPU copies of every selected GPU pair: cudaMemcpyPeerAsync with "
                        "peer access (NVLink or PCIe P2P) and without it (the driver stages "
                        "through the host), an explicit two-hop copy through pinned host memory, "
                        "and a kernel reading the peer's memory; one direction or both at once; "
                        "bandwidth and small-copy latency",
                        axis_schemas(kPair, kMethod, kDirection, kMeasure, kBytes),
                        {"pair", "method", "bytes"}}) {}

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    if (auto why = kPair.invalid(spec)) return why;
    const PeerRequest r = decode_peer_request(spec);
    if (r.measure == Measure::kLatency && r.bidirectional) {
      return "latency is measured one direction at a time: direction=bi applies to bandwidth";
    }
    return std::nullopt;
  }

  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const PeerRequest r = decode_peer_request(spec);
    // Each GPU of the pair holds one buffer (uni) or a source and a destination (bi).
    return {r.host_bytes(), r.bidirectional ? 2 * r.bytes : r.bytes};
  }

  Requirements requirements(const CaseSpec& spec) const override {
    const PeerRequest r = decode_peer_request(spec);
    Requirements needs = kPair.requirements(spec);
    for (const auto& [accessor, peer] : r.peer_access_pairs()) {
      if (r.needs_peer_access()) needs.peer_access(accessor, peer, peer_access_need(r));
    }
    return needs;
  }

  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override {
    return metric_names_of(peer_metrics(decode_peer_request(spec)));
  }

  void derive_params(CaseSpec& spec, const Machine& machine) const override {
    kPair.derive_link(spec, machine);
  }

  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int /*device*/) const override {
    PATHBENCH_GPU_BENCH(make_peer_bench(decode_peer_request(spec), machine));
  }
};

}  // namespace

std::string_view to_string(PeerRequest::Method m) { return kMethod.name_of(m); }

std::vector<std::pair<int, int>> PeerRequest::peer_access_pairs() const {
  if (!gpus || method == Method::kTwoHop) return {};
  const int s = src(), d = dst();
  if (method != Method::kSmRead) return {{s, d}, {d, s}};
  if (bidirectional) return {{d, s}, {s, d}};
  return {{d, s}};  // sm_read: the destination reads the source
}

std::uint64_t PeerRequest::staging_chunk_bytes() const {
  if (bytes == 0) return 0;
  const std::uint64_t spread = (bytes + kPeerMaxChunksPerCopy - 1) / kPeerMaxChunksPerCopy;
  // Whole 4 KiB pages, so every chunk but the last starts page-aligned.
  const std::uint64_t aligned = (spread + 4095) / 4096 * 4096;
  return std::min(bytes, std::max(kMinChunkBytes, aligned));
}

std::uint64_t PeerRequest::staging_chunks() const {
  if (method != Method::kTwoHop || bytes == 0) return 1;
  const std::uint64_t chunk = staging_chunk_bytes();
  return (bytes + chunk - 1) / chunk;
}

std::uint64_t PeerRequest::host_bytes() const {
  if (method != Method::kTwoHop) return 0;
  const std::uint64_t slots = std::min(kPeerStagingSlots, staging_chunks());
  return slots * staging_chunk_bytes() * (bidirectional ? 2 : 1);
}

PeerRequest decode_peer_request(const CaseSpec& spec) {
  return {.pair = spec.str(kPair.name()),
          .gpus = kPair.decode(spec),
          .method = kMethod.decode(spec),
          .bidirectional = kDirection.decode_or(spec, false),
          .measure = kMeasure.decode_or(spec, Measure::kBandwidth),
          .bytes = static_cast<std::uint64_t>(kBytes.decode(spec))};
}

std::vector<MetricSpec> peer_metrics(const PeerRequest& r) {
  const MetricSpec per_copy{"time_per_copy", "s", Better::kLower};
  if (r.measure == Measure::kLatency) return {per_copy, {"round_trip_time", "s", Better::kLower}};
  if (!r.bidirectional) return {{"bandwidth", "GB/s", Better::kHigher}, per_copy};
  return {{"bandwidth", "GB/s", Better::kHigher},
          {"bandwidth_fwd", "GB/s", Better::kHigher},
          {"bandwidth_rev", "GB/s", Better::kHigher},
          per_copy};
}

std::string peer_access_need(const PeerRequest& r) {
  return "method=" + std::string(to_string(r.method)) +
         " needs peer access; no_peer_access and two_hop measure this pair";
}

std::unique_ptr<Family> make_peer_family() { return std::make_unique<PeerFamily>(); }

}  // namespace pathbench
