#include "bench/peer_family.hpp"

#include <algorithm>

#include "inventory/gpu_selection.hpp"

namespace pathbench {

namespace {

using Method = PeerRequest::Method;

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::vector<int> gpu_indexes(const Machine& machine) {
  std::vector<int> out;
  for (const auto& g : machine.gpus) out.push_back(g.index);
  std::sort(out.begin(), out.end());
  return out;
}


}  // namespace

std::string_view to_string(PeerRequest::Method m) {
  switch (m) {
    case Method::kPeerAccess:
      return "peer_access";
    case Method::kNoPeerAccess:
      return "no_peer_access";
    case Method::kTwoHop:
      return "two_hop";
    case Method::kSmRead:
      return "sm_read";
  }
  return "?";
}

std::vector<std::pair<int, int>> PeerRequest::peer_access_pairs() const {
  if (!gpus) return {};
  const int s = src(), d = dst();
  switch (method) {
    case Method::kPeerAccess:
    case Method::kNoPeerAccess:
      return {{s, d}, {d, s}};
    case Method::kSmRead:
      if (bidirectional) return {{d, s}, {s, d}};
      return {{d, s}};
    case Method::kTwoHop:
      return {};
  }
  return {};
}

std::uint64_t PeerRequest::staging_chunk_bytes() const {
  if (bytes == 0) return 0;
  const std::uint64_t spread = (bytes + kPeerMaxChunksPerCopy - 1) / kPeerMaxChunksPerCopy;
  // Whole 4 KiB pages, so every chunk but the last starts page-aligned.
  const std::uint64_t aligned = (spread + 4095) / 4096 * 4096;
  return std::min(bytes, std::max(kPeerMinChunkBytes, aligned));
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
  PeerRequest r;
  r.pair = spec.str("pair");
  r.gpus = parse_gpu_pair(r.pair);
  const std::string method = spec.str("method");
  r.method = method == "no_peer_access" ? Method::kNoPeerAccess
             : method == "two_hop"      ? Method::kTwoHop
             : method == "sm_read"      ? Method::kSmRead
                                        : Method::kPeerAccess;
  r.bidirectional = spec.has("direction") && spec.str("direction") == "bi";
  r.measure = spec.has("measure") && spec.str("measure") == "latency"
                  ? PeerRequest::Measure::kLatency
                  : PeerRequest::Measure::kBandwidth;
  r.bytes = static_cast<std::uint64_t>(spec.integer("bytes"));
  return r;
}

std::string peer_link_param(const PeerRequest& r, const Machine& machine) {
  if (!r.gpus) return kNoGpuPair;
  const GpuLink* link = machine.link(r.src(), r.dst());
  if (link == nullptr || link->param.empty()) return "unknown";
  return link->param;
}

std::optional<std::string> two_gpu_reason(const Machine& machine) {
  return Requirements().two_gpus().unmet(machine, 0);
}

std::string_view PeerFamilyBase::description() const {
  return "GPU-to-GPU copies of every selected GPU pair: cudaMemcpyPeerAsync with peer access "
         "(NVLink or PCIe P2P) and without it (the driver stages through the host), an explicit "
         "two-hop copy through pinned host memory, and a kernel reading the peer's memory; one "
         "direction or both at once; bandwidth and small-copy latency";
}

const std::vector<AxisSchema>& PeerFamilyBase::axes() const {
  static const std::vector<AxisSchema> kAxes = {
      {"pair",
       AxisSchema::Kind::kString,
       {},
       0,
       0,
       "source and destination CUDA device, \"S-D\" (S != D); {\"gpu_pairs\": \"all\"} is every "
       "ordered pair of the selected GPUs (--devices), or \"none\" when there are fewer than two"},
      {"method",
       AxisSchema::Kind::kString,
       {"peer_access", "no_peer_access", "two_hop", "sm_read"},
       0,
       0,
       "peer_access: cudaMemcpyPeerAsync with peer access enabled; no_peer_access: the same with "
       "peer access disabled (staged by the driver); two_hop: D2H on the source's stream then "
       "H2D on the destination's through pinned staging slots, chunked and pipelined; sm_read: a "
       "copy kernel on the destination reading the source's memory over peer access"},
      {"direction",
       AxisSchema::Kind::kString,
       {"uni", "bi"},
       0,
       0,
       "uni: S->D; bi: S->D and D->S at once (per direction and the sum)"},
      {"measure",
       AxisSchema::Kind::kString,
       {"bandwidth", "latency"},
       0,
       0,
       "bandwidth: GB/s of a latched block of copies; latency: time per small copy and round "
       "trip"},
      {"bytes", AxisSchema::Kind::kInteger, {}, 1, std::int64_t{1} << 36, "bytes per copy"},
  };
  return kAxes;
}

std::vector<std::string> PeerFamilyBase::required_axes() const {
  return {"pair", "method", "bytes"};
}

std::optional<std::string> PeerFamilyBase::invalid_combination(const CaseSpec& spec) const {
  const PeerRequest r = decode_peer_request(spec);
  if (!r.gpus && r.pair != kNoGpuPair) {
    return "pair \"" + r.pair +
           "\" is not \"S-D\" (two different CUDA device indexes, e.g. \"0-1\"); use "
           "{\"gpu_pairs\": \"all\"} for every pair of the selected GPUs";
  }
  if (r.measure == PeerRequest::Measure::kLatency && r.bidirectional) {
    return "latency is measured one direction at a time: direction=bi applies to bandwidth";
  }
  return std::nullopt;
}

std::vector<MetricSpec> peer_metrics(const PeerRequest& r) {
  if (r.measure == PeerRequest::Measure::kLatency) {
    return {{"time_per_copy", "s", Better::kLower}, {"round_trip_time", "s", Better::kLower}};
  }
  if (r.bidirectional) {
    return {{"bandwidth", "GB/s", Better::kHigher},
            {"bandwidth_fwd", "GB/s", Better::kHigher},
            {"bandwidth_rev", "GB/s", Better::kHigher},
            {"time_per_copy", "s", Better::kLower}};
  }
  return {{"bandwidth", "GB/s", Better::kHigher}, {"time_per_copy", "s", Better::kLower}};
}

std::optional<std::vector<std::string>> PeerFamilyBase::metric_names(const CaseSpec& spec) const {
  return metric_names_of(peer_metrics(decode_peer_request(spec)));
}

MemoryNeeds PeerFamilyBase::memory_needs(const CaseSpec& spec) const {
  const PeerRequest r = decode_peer_request(spec);
  return {r.host_bytes(), r.device_bytes_per_gpu()};
}

Requirements PeerFamilyBase::requirements(const CaseSpec& spec) const {
  Requirements needs;
  needs.two_gpus().custom([r = decode_peer_request(spec)](const Machine& machine, int) {
    return pair_unavailable_reason(r, machine);
  });
  return needs;
}

std::optional<std::string> pair_unavailable_reason(const PeerRequest& r, const Machine& machine) {
  if (!r.gpus) {
    return "pair=none names no GPU pair, but " + std::to_string(machine.selected_gpus.size()) +
           " GPUs are selected; use {\"gpu_pairs\": \"all\"} or \"S-D\"";
  }
  const std::vector<int> all = gpu_indexes(machine);
  for (int g : {r.src(), r.dst()}) {
    if (!contains(all, g)) {
      return "pair " + r.pair + ": GPU " + std::to_string(g) +
             " does not exist; this machine has " + describe_gpus(machine);
    }
    if (!contains(machine.selected_gpus, g)) {
      return "pair " + r.pair + ": GPU " + std::to_string(g) +
             " is not selected (--devices selects GPU " + join_indexes(machine.selected_gpus) + ")";
    }
  }
  if (r.needs_peer_access()) {
    for (const auto& [accessor, peer] : r.peer_access_pairs()) {
      const GpuLink* link = machine.link(accessor, peer);
      if (link != nullptr && link->peer_access && !*link->peer_access) {
        return "GPU " + std::to_string(accessor) + " cannot access GPU " + std::to_string(peer) +
               "'s memory (cudaDeviceCanAccessPeer = 0; link " + link_type_name(link->type) + ", " +
               link->param + "): method=" + std::string(to_string(r.method)) +
               " needs peer access; no_peer_access and two_hop measure this pair";
      }
    }
  }
  return std::nullopt;
}

void PeerFamilyBase::derive_params(CaseSpec& spec, const Machine& machine) const {
  if (!spec.has("pair")) return;
  PeerRequest r;
  r.pair = spec.str("pair");
  r.gpus = parse_gpu_pair(r.pair);
  const std::string link = peer_link_param(r, machine);
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const auto& [name, value] : spec.params.items()) {
    if (name == "link") continue;  // derived again, never twice
    params[name] = value;
    if (name == "pair") params["link"] = link;
  }
  spec.params = std::move(params);
}

}  // namespace pathbench
