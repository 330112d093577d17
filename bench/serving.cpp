#include "bench/serving.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

#include "measure/gpu_bench.hpp"
#include "scenario/scenario_file.hpp"
#include "scenario/typed_axis.hpp"

namespace pathbench {

namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

const EnumAxis<ServingStrategy> kStrategy{
    "strategy",
    {{"pageable", ServingStrategy::kPageable},
     {"pin_per_request", ServingStrategy::kPinPerRequest},
     {"pinned_pool", ServingStrategy::kPinnedPool},
     {"pinned_pool_chunked", ServingStrategy::kPinnedPoolChunked},
     {"preallocated_pinned", ServingStrategy::kPreallocatedPinned},
     {"coalesced", ServingStrategy::kCoalesced}},
    "how a request's host memory reaches the copy engine; coalesced: the requests a submitter "
    "sees arrive within coalesce_us packed into one pinned buffer and copied as one transfer"};
const EnumAxis<ServingArrival> kArrival{
    "arrival",
    {{"back_to_back", ServingArrival::kBackToBack},
     {"poisson", ServingArrival::kPoisson},
     {"bursts", ServingArrival::kBursts},
     {"trace", ServingArrival::kTrace}},
    "when requests arrive: each submitter's next one as soon as its last completed (default), a "
    "Poisson process at rate_per_s, bursts of burst_size at rate_per_s on average, or as a trace "
    "file says"};
AxisSchema pool_buckets_axis() {
  AxisSchema s;
  s.name = "pool_buckets";
  s.kind = AxisSchema::Kind::kString;
  s.help =
      "pooled strategies: the pinned pool's size classes as \"slot:count,...\", e.g. "
      "\"16KiB:8,64KiB:8,1MiB:2\"; a request takes a slot of the smallest class that fits, a "
      "larger one when that class is busy (a spill), pageable memory when none is free; per-"
      "bucket occupancy is recorded (pool_b<bytes>_*). Replaces pool_slots and chunk_bytes";
  return s;
}

AxisSchema trace_axis() {
  AxisSchema s;
  s.name = "trace";
  s.kind = AxisSchema::Kind::kString;
  s.help =
      "arrival trace: a JSON Lines file, relative to the scenario file, one request a line: "
      "{\"time_s\": 0.0012, \"h2d_bytes\": 65536, \"d2h_bytes\": 0, \"kernel_us\": 250}";
  return s;
}
const IntegerAxis kRequestBytes{"request_bytes", 4096, 4 * kGiB,
                                "bytes copied host to device per request, a multiple of 4096"};
const IntegerAxis kResponseBytes{"response_bytes", 0, 4 * kGiB,
                                 "bytes copied device to host per request (default 0)"};
const IntegerAxis kKernelUs{"kernel_us", 0, 1000000,
                            "the decode step's duration per request, microseconds (default 0: "
                            "only the step that checks the request's data)"};
const IntegerAxis kRequests{"requests", 10, 1000000, "requests per repetition (default 2000)"};
const IntegerAxis kRate{"rate_per_s", 1, 10000000, "mean arrival rate, requests per second"};
const IntegerAxis kBurstSize{"burst_size", 1, 10000, "requests per burst (default 8)"};
const IntegerAxis kSubmitters{"submitters", 1, 16,
                              "host threads issuing requests, each with its own stream, placed "
                              "as the threads axis says (default 1)"};
const EnumAxis<bool> kPriority{"request_priority",
                               {{"normal", false}, {"high", true}},
                               "the request streams' priority (default normal)"};
const EnumAxis<ServingBackground> kBackground{
    "background",
    {{"none", ServingBackground::kNone},
     {"same_direction", ServingBackground::kSameDirection},
     {"opposite_direction", ServingBackground::kOppositeDirection},
     {"stream", ServingBackground::kStream}},
    "same_direction / opposite_direction: a bulk transfer issued on another stream just before "
    "each request; stream: CPU offload, a host tensor of bulk_bytes streamed to the GPU in "
    "bulk_chunk_bytes copies through stream_slots pinned slots for the whole repetition, while "
    "the requests run (default none)"};
const IntegerAxis kBulkBytes{"bulk_bytes", 1 << 20, 16 * kGiB,
                             "bytes of the background transfer (default 64 MiB)"};
const IntegerAxis kBulkChunk{"bulk_chunk_bytes", 4096, 16 * kGiB,
                             "the background transfer is issued as copies of this size "
                             "(default: one copy of bulk_bytes)"};
const IntegerAxis kStreamSlots{"stream_slots", 1, 64,
                               "background stream: pinned staging slots the tensor is streamed "
                               "through, each of bulk_chunk_bytes (default 2: double buffering)"};
const IntegerAxis kCoalesceUs{"coalesce_us", 1, 100000,
                              "strategy coalesced: the aggregation window, microseconds from a "
                              "transfer's first request (default 50)"};
const IntegerAxis kCoalesceMax{"coalesce_max", 2, 1024,
                               "strategy coalesced: most requests in one transfer (default 16)"};
const IntegerAxis kChunkBytes{"chunk_bytes", 4096, kGiB,
                              "pinned_pool_chunked: slot and chunk size, a multiple of 4096 "
                              "(default 256 KiB)"};
const IntegerAxis kPoolSlots{"pool_slots", 1, 4096,
                             "pinned slots of the pool (pooled strategies) or of the ring of "
                             "preallocated buffers (default 8)"};

const EnumAxis<bool> kGpuTimeline{
    "gpu_timeline",
    {{"off", false}, {"on", true}},
    "on: every repetition is captured by CUPTI; adds h2d_gpu_time (each request's input copy "
    "on the GPU's clock) and step_gap (how long the GPU ran no step before each one) and writes "
    "the timeline as a Chrome trace (default off: CUPTI's records cost the host time on every "
    "CUDA call)"};

constexpr std::uint64_t kDefaultBulk = std::uint64_t{64} << 20;
constexpr std::uint64_t kDefaultChunk = std::uint64_t{256} << 10;

std::vector<AxisSchema> with_trace(std::vector<AxisSchema> axes) {
  axes.push_back(trace_axis());
  axes.push_back(pool_buckets_axis());
  return axes;
}

// Each trace file read once per run: the core asks a case several questions (is it valid, what
// memory, which metrics) and each decodes it.
class TraceCache {
 public:
  std::vector<Request> get(const std::filesystem::path& path) {
    std::lock_guard lock(mutex_);
    auto it = traces_.find(path.string());
    if (it == traces_.end()) it = traces_.emplace(path.string(), read_request_trace(path)).first;
    return it->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::vector<Request>> traces_;
};

ServingRequest decode(const CaseSpec& spec, TraceCache& traces) {
  ServingRequest r;
  r.strategy = kStrategy.decode(spec);
  r.arrival = kArrival.decode_or(spec, ServingArrival::kBackToBack);
  r.request_bytes = static_cast<std::uint64_t>(kRequestBytes.decode_or(spec, 0));
  r.response_bytes = static_cast<std::uint64_t>(kResponseBytes.decode_or(spec, 0));
  r.kernel_ns = static_cast<std::uint64_t>(kKernelUs.decode_or(spec, 0)) * 1000;
  r.requests = static_cast<int>(kRequests.decode_or(spec, 2000));
  r.rate_per_s = static_cast<double>(kRate.decode_or(spec, 0));
  r.burst_size = static_cast<int>(kBurstSize.decode_or(spec, 8));
  r.submitters = static_cast<int>(kSubmitters.decode_or(spec, 1));
  r.placement = decode_host_placement(spec);
  r.high_priority = kPriority.decode_or(spec, false);
  r.background = kBackground.decode_or(spec, ServingBackground::kNone);
  r.bulk_bytes = static_cast<std::uint64_t>(kBulkBytes.decode_or(spec, kDefaultBulk));
  r.bulk_chunk_bytes = static_cast<std::uint64_t>(kBulkChunk.decode_or(spec, r.bulk_bytes));
  r.stream_slots = static_cast<int>(kStreamSlots.decode_or(spec, 2));
  r.coalesce_ns = static_cast<std::uint64_t>(kCoalesceUs.decode_or(spec, 50)) * 1000;
  r.coalesce_max = static_cast<int>(kCoalesceMax.decode_or(spec, 16));
  r.chunk_bytes = static_cast<std::uint64_t>(kChunkBytes.decode_or(spec, kDefaultChunk));
  r.pool_slots = static_cast<int>(kPoolSlots.decode_or(spec, 8));
  r.gpu_timeline = kGpuTimeline.decode_or(spec, false);
  if (spec.has("pool_buckets")) {
    try {
      r.pool_buckets = parse_pool_buckets(spec.str("pool_buckets"));
    } catch (const std::invalid_argument&) {
      // invalid_combination says what is wrong; decoding stays total for the other questions.
    }
  }
  if (r.arrival == ServingArrival::kTrace && spec.has("trace")) {
    // Read at validation already: a bad line is exit 3 naming the trace file and the line.
    std::filesystem::path path = spec.str("trace");
    if (path.is_relative()) path = std::filesystem::path(spec.file).parent_path() / path;
    r.trace = traces.get(path);
    r.requests = static_cast<int>(r.trace.size());
    r.request_bytes = 8;
    r.response_bytes = 0;
    for (const auto& q : r.trace) {
      r.request_bytes = std::max(r.request_bytes, q.h2d_bytes);
      r.response_bytes = std::max(r.response_bytes, q.d2h_bytes);
    }
  }
  return r;
}

class ServingFamily final : public DeclaredFamily {
 public:
  ServingFamily()
      : DeclaredFamily(
            {"serving",
             "requests replayed against one GPU (back to back, Poisson or bursts; N submitter "
             "threads): each request's H2D copy through a host-memory strategy (pageable, "
             "pin_per_request, pinned_pool, pinned_pool_chunked, preallocated_pinned), a step "
             "that checks its data on the GPU, an optional D2H response; per-request latency "
             "distributions, and head-of-line blocking behind a bulk transfer",
             with_trace(axis_schemas(kStrategy, kArrival, kRequestBytes, kResponseBytes, kKernelUs,
                                     kRequests, kRate, kBurstSize, kSubmitters, kPriority,
                                     kBackground, kBulkBytes, kBulkChunk, kStreamSlots, kCoalesceUs,
                                     kCoalesceMax, kChunkBytes, kPoolSlots, kGpuTimeline,
                                     host_node_axis(), threads_axis())),
             {"strategy"}}) {}

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    const bool traced =
        kArrival.decode_or(spec, ServingArrival::kBackToBack) == ServingArrival::kTrace;
    if (traced != spec.has("trace")) {
      return std::string(traced ? "arrival trace needs the trace axis (a JSON Lines file)"
                                : "the trace axis applies only to arrival trace");
    }
    if (traced) {
      for (const char* axis : {"request_bytes", "response_bytes", "kernel_us", "requests",
                               "rate_per_s", "burst_size"}) {
        if (spec.has(axis)) {
          return std::string(axis) + " comes from the trace file with arrival trace";
        }
      }
    } else if (!kRequestBytes.present(spec)) {
      return std::string("request_bytes is required (except with arrival trace)");
    }
    const ServingRequest r = decode(spec, traces_);
    const bool timed_arrivals = r.arrival != ServingArrival::kBackToBack;
    if (timed_arrivals && !traced && !kRate.present(spec)) {
      return "arrival \"" + spec.str("arrival") + "\" needs rate_per_s";
    }
    if (!timed_arrivals && (kRate.present(spec) || kBurstSize.present(spec))) {
      return std::string("rate_per_s and burst_size apply only to arrival poisson or bursts");
    }
    if (r.arrival == ServingArrival::kPoisson && kBurstSize.present(spec)) {
      return std::string("burst_size applies only to arrival bursts");
    }
    if (!traced && r.request_bytes % 4096 != 0) {
      return std::string("request_bytes must be a multiple of 4096");
    }
    if (kChunkBytes.present(spec) && r.strategy != ServingStrategy::kPinnedPoolChunked) {
      return std::string("chunk_bytes applies only to strategy pinned_pool_chunked");
    }
    if (r.chunk_bytes % 4096 != 0) return std::string("chunk_bytes must be a multiple of 4096");
    const bool ring = r.pooled() || r.strategy == ServingStrategy::kPreallocatedPinned;
    if (spec.has("pool_buckets")) {
      if (!r.pooled()) {
        return std::string("pool_buckets applies only to pinned_pool and pinned_pool_chunked");
      }
      if (kPoolSlots.present(spec) || kChunkBytes.present(spec)) {
        return std::string(
            "pool_buckets replaces pool_slots and chunk_bytes: give one or the "
            "other");
      }
      try {
        parse_pool_buckets(spec.str("pool_buckets"));
      } catch (const std::invalid_argument& e) {
        return std::string("pool_buckets: ") + e.what();
      }
    }
    if (kPoolSlots.present(spec) && !ring) {
      return std::string(
          "pool_slots applies only to pinned_pool, pinned_pool_chunked and preallocated_pinned");
    }
    if ((kCoalesceUs.present(spec) || kCoalesceMax.present(spec)) && !r.coalesced()) {
      return std::string("coalesce_us and coalesce_max apply only to strategy coalesced");
    }
    if (r.coalesced() && !timed_arrivals) {
      return std::string(
          "strategy coalesced needs timed arrivals (poisson, bursts or trace): "
          "back to back there is never a second request to pack");
    }
    if (kStreamSlots.present(spec) && !r.streaming()) {
      return std::string("stream_slots applies only to background stream");
    }
    if (r.background == ServingBackground::kNone) {
      if (kBulkBytes.present(spec) || kBulkChunk.present(spec)) {
        return std::string("bulk_bytes and bulk_chunk_bytes apply only with a background");
      }
    } else if (r.streaming()) {
      // The stream runs beside any arrival pattern and any number of submitters.
      if (r.bulk_chunk_bytes > r.bulk_bytes) {
        return std::string("bulk_chunk_bytes must not exceed bulk_bytes");
      }
      if (r.bulk_chunk_bytes % 4096 != 0) {
        return std::string("bulk_chunk_bytes must be a multiple of 4096");
      }
    } else {
      // Each request gets its own bulk transfer just before it: a closed loop of one submitter.
      if (r.arrival != ServingArrival::kBackToBack || r.submitters != 1) {
        return std::string("a background needs arrival back_to_back and one submitter");
      }
      if (r.bulk_chunk_bytes > r.bulk_bytes) {
        return std::string("bulk_chunk_bytes must not exceed bulk_bytes");
      }
    }
    if (r.requests % r.burst_size != 0 && r.arrival == ServingArrival::kBursts) {
      return std::string("requests must be a multiple of burst_size");
    }
    return std::nullopt;
  }

  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const ServingRequest r = decode(spec, traces_);
    const std::uint64_t per_submitter = r.request_bytes + r.response_bytes;
    const std::uint64_t slot = r.strategy == ServingStrategy::kPinnedPoolChunked
                                   ? std::min(r.chunk_bytes, r.request_bytes)
                                   : r.request_bytes;
    std::uint64_t pool = static_cast<std::uint64_t>(r.pool_slots) * slot;
    if (!r.pool_buckets.empty()) {
      pool = 0;
      for (const auto& [bytes, count] : r.pool_buckets) {
        pool += bytes * static_cast<std::uint64_t>(count);
      }
    }
    const std::uint64_t bulk = r.background == ServingBackground::kNone ? 0 : r.bulk_bytes;
    const std::uint64_t stream_slots =
        r.streaming() ? static_cast<std::uint64_t>(r.stream_slots) * r.bulk_chunk_bytes : 0;
    // coalesced: two pinned batch buffers per submitter and one on the device.
    const std::uint64_t batch =
        r.coalesced() ? static_cast<std::uint64_t>(r.coalesce_max) * r.request_bytes : 0;
    return {
        r.submitters * (2 * per_submitter + 2 * batch) + pool + bulk + stream_slots,
        r.submitters * (per_submitter + batch) + bulk + 8 * static_cast<std::uint64_t>(r.requests)};
  }
  Requirements requirements(const CaseSpec& spec) const override {
    Requirements needs;
    needs.gpu();
    require_host_placement(needs, decode_host_placement(spec));
    return needs;
  }
  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override {
    return metric_names_of(serving_metrics(decode(spec, traces_)));
  }
  std::vector<std::string> per_operation_metric_names(const CaseSpec& spec) const override {
    std::vector<std::string> names;
    for (const auto& m : serving_metrics(decode(spec, traces_))) {
      if (m.per_operation) names.push_back(m.name);
    }
    return names;
  }
  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    PATHBENCH_GPU_BENCH(make_serving_bench(decode(spec, traces_), machine, device));
  }

 private:
  mutable TraceCache traces_;
};

}  // namespace

std::vector<MetricSpec> serving_metrics(const ServingRequest& r) {
  std::vector<MetricSpec> m = {
      {"h2d_latency", "s", Better::kLower, true},
      {"request_latency", "s", Better::kLower, true},
      {"throughput", "requests/s", Better::kHigher},
      {"copies_issued", "copies", Better::kLower},
  };
  if (r.pooled()) {
    m.push_back({"pool_high_water", "B", Better::kLower});
    m.push_back({"pool_waits", "acquisitions", Better::kLower});
    m.push_back({"pool_wait_time", "s", Better::kLower});
    m.push_back({"pageable_fallbacks", "copies", Better::kLower});
  }
  if (r.gpu_timeline) {
    m.push_back({"h2d_gpu_time", "s", Better::kLower, true});
    m.push_back({"step_gap", "s", Better::kLower, true});
  }
  if (r.streaming()) m.push_back({"stream_throughput", "GB/s", Better::kHigher});
  if (r.coalesced()) {
    m.push_back({"coalesce_wait", "s", Better::kLower, true});
    m.push_back({"batch_size", "requests", Better::kHigher});
  }
  if (r.pooled()) std::ranges::move(pool_bucket_metrics(r.pool_buckets), std::back_inserter(m));
  return m;
}

std::vector<std::pair<std::uint64_t, int>> parse_pool_buckets(const std::string& text) {
  std::vector<std::pair<std::uint64_t, int>> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) {
      throw std::invalid_argument("\"" + item + "\" is not slot:count (e.g. 64KiB:8)");
    }
    std::int64_t bytes = 0;
    try {
      bytes = parse_size(item.substr(0, colon));
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("\"" + item.substr(0, colon) + "\" is not a size");
    }
    const std::string count_text = item.substr(colon + 1);
    if (count_text.empty() || count_text.size() > 4 ||
        count_text.find_first_not_of("0123456789") != std::string::npos) {
      throw std::invalid_argument("\"" + count_text + "\" is not a slot count (1-4096)");
    }
    const int count = std::stoi(count_text);
    if (bytes < 4096 || bytes % 4096 != 0 || bytes > (std::int64_t{1} << 30)) {
      throw std::invalid_argument("slot size " + std::to_string(bytes) +
                                  " must be a multiple of 4096 up to 1 GiB");
    }
    if (count < 1 || count > 4096) {
      throw std::invalid_argument("slot count " + count_text + " must be in [1, 4096]");
    }
    for (const auto& [seen, n] : out) {
      if (seen == static_cast<std::uint64_t>(bytes)) {
        throw std::invalid_argument("two buckets of " + std::to_string(bytes) + " bytes");
      }
    }
    out.emplace_back(static_cast<std::uint64_t>(bytes), count);
    if (out.size() > 16) throw std::invalid_argument("more than 16 buckets");
    start = end + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<MetricSpec> pool_bucket_metrics(
    const std::vector<std::pair<std::uint64_t, int>>& buckets) {
  std::vector<MetricSpec> m;
  for (const auto& [bytes, count] : buckets) {
    const std::string p = "pool_b" + std::to_string(bytes) + "_";
    m.push_back({p + "requests", "acquisitions", Better::kLower});
    m.push_back({p + "spills_out", "acquisitions", Better::kLower});
    m.push_back({p + "spills_in", "acquisitions", Better::kLower});
    m.push_back({p + "fallbacks", "copies", Better::kLower});
    m.push_back({p + "mean_free", "slots", Better::kHigher});
    m.push_back({p + "high_water", "slots", Better::kLower});
  }
  return m;
}

std::unique_ptr<Family> make_serving_family() { return std::make_unique<ServingFamily>(); }

}  // namespace pathbench
