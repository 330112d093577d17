// The `serving` family: requests replayed against one GPU. Each submitter thread issues its
// requests on its own stream (input H2D through the case's strategy, a step that checksums the
// input on the GPU, optional D2H response). Back to back, the submitter then waits for the
// request itself; with timed arrivals a completion thread per submitter timestamps each request's
// events as they complete. Latencies run from a request's arrival to its completion.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "bench/serving.hpp"
#include "bench/weight_stream.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/event_completion.hpp"
#include "cuda/global_timer.cuh"
#include "cuda/kernel_loading.hpp"
#include "measure/pattern.hpp"
#include "measure/pinned_staging_pool.hpp"
#include "measure/placed_host_memory.hpp"
#include "measure/sample_builder.hpp"
#include "measure/timeline_checks.hpp"
#include "placement/buffer_checks.hpp"
#include "placement/memory_policy.hpp"
#include "placement/thread_placement.hpp"
#include "scenario/request_stream.hpp"
#include "timeline/cupti_timeline.hpp"
#include "timeline/step_times.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x73657276696e67ull;  // "serving"
constexpr std::size_t kPage = 4096;
constexpr std::chrono::seconds kWaitLimit{60};
using Clock = std::chrono::steady_clock;

// The step of request q: sums its input's 64-bit words into checksum[q] (what the host expects
// of that request's data, so a slot rewritten under its copy is caught), then stays busy until
// `ns` have passed, the decode step's stand-in.
__global__ void decode_step(const unsigned long long* input, std::size_t words,
                            unsigned long long* checksum, unsigned long long ns) {
  const unsigned long long start = global_timer_ns();
  unsigned long long sum = 0;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    sum += input[i];
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(checksum, sum);
  spin_until(start, ns);
}

// Request q's mark in the first word of page p: every request's data differs on every page.
std::uint64_t stamp(std::uint64_t q, std::uint64_t p) { return splitmix64((q << 24) ^ p ^ kSeed); }

// The pool's slots, pinned on the case's memory node; the first slot's placement is checked.
class PinnedSlotMemory final : public SlotMemory {
 public:
  explicit PinnedSlotMemory(std::optional<int> node) : node_(node) {}
  std::byte* allocate(std::size_t bytes) override {
    // The driver faults pinned pages in on this thread, under the thread's policy.
    std::optional<MemoryPolicyScope> policy;
    if (node_) policy.emplace(*node_);
    void* p = nullptr;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocDefault) != cudaSuccess) return nullptr;
    std::lock_guard lock(mutex_);
    if (!first_slot_) {
      first_slot_ = page_placement_check("host_placement_slots", p, bytes, node_, true);
    }
    return static_cast<std::byte*>(p);
  }
  void free(std::byte* memory, std::size_t) noexcept override { cudaFreeHost(memory); }
  std::optional<Check> placement() const {
    std::lock_guard lock(mutex_);
    return first_slot_;
  }

 private:
  std::optional<int> node_;
  mutable std::mutex mutex_;
  std::optional<Check> first_slot_;
};

// Events for the pool's completions, reused once the pool is done with them: creating one per
// chunk would add its cost to every request.
class EventRecycler {
 public:
  cudaEvent_t take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) {
      owned_.emplace_back(cudaEventDisableTiming);
      return owned_.back().get();
    }
    cudaEvent_t e = free_.back();
    free_.pop_back();
    return e;
  }
  void give(cudaEvent_t e) {
    std::lock_guard lock(mutex_);
    free_.push_back(e);
  }

 private:
  std::mutex mutex_;
  std::deque<Event> owned_;
  std::vector<cudaEvent_t> free_;
};

class RecordedCompletion final : public EventCompletion {
 public:
  RecordedCompletion(EventRecycler& events, cudaStream_t stream)
      : EventCompletion(events.take()), events_(events) {
    PB_CUDA(cudaEventRecord(event(), stream));
  }
  ~RecordedCompletion() override { events_.give(event()); }

 private:
  EventRecycler& events_;
};

// One submitter: its stream, device buffers and host buffers, and the requests it issues.
struct Lane {
  Lane(int priority, std::uint64_t request_bytes, std::uint64_t response_bytes,
       PlacedHostMemory source_memory, PlacedHostMemory response_memory,
       PlacedHostMemory pinned_response_memory)
      : stream(priority),
        input(request_bytes),
        output(std::max<std::uint64_t>(response_bytes, 8)),
        source(std::move(source_memory)),
        response(std::move(response_memory)),
        pinned_response(std::move(pinned_response_memory)) {}
  // Where the response goes: pinned memory for the strategies that copy from pinned memory, so
  // that the D2H copy stays asynchronous; pageable memory for the others.
  std::byte* response_buffer() {
    return pinned_response.data() != nullptr ? pinned_response.data() : response.data();
  }
  Stream stream;
  DeviceMemory input, output;
  PlacedHostMemory source, response;     // pageable, on the case's memory node
  PlacedHostMemory pinned_response;      // empty for pageable and pin_per_request
  std::vector<PlacedHostMemory> ring;    // preallocated_pinned: the data already pinned
  std::vector<std::size_t> requests;     // indices into the repetition's schedule
  std::atomic<std::size_t> enqueued{0};  // requests issued so far
  // coalesced: two pinned batch buffers (one is packed while the other's copy may still read
  // it), the device buffer the batch lands in, the event of each host buffer's last copy, and
  // the transfers issued (which buffer is next).
  std::array<PlacedHostMemory, 2> batch_host;
  DeviceMemory batch_device;
  std::array<std::optional<Event>, 2> batch_copied;
  std::size_t batches = 0;
};

class ServingBench final : public CaseBench {
 public:
  ServingBench(const ServingRequest& r, const Machine& machine, int device)
      : r_(r),
        device_(make_current(device)),
        where_(resolve_host_placement(machine, device, r.placement)),
        h2d_done_(events(r.requests)),
        done_(events(r.requests)),
        checksums_(8 * static_cast<std::size_t>(r.requests)),
        expected_(r.requests),
        arrival_(r.requests),
        h2d_at_(r.requests),
        done_at_(r.requests),
        issued_at_(r.requests),
        slot_memory_(where_.memory_node) {
    int least = 0, greatest = 0;
    PB_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    int sms = 0;
    PB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    blocks_ = std::clamp(static_cast<int>(r.request_bytes / (64 * 1024)), 1, sms);
    const bool prealloc = r.strategy == ServingStrategy::kPreallocatedPinned;
    for (int l = 0; l < r.submitters; ++l) {
      const bool pinned_response =
          r.strategy != ServingStrategy::kPageable && r.strategy != ServingStrategy::kPinPerRequest;
      auto lane = std::make_unique<Lane>(
          r.high_priority ? greatest : least, r.request_bytes, r.response_bytes,
          pageable(r.request_bytes), pageable(r.response_bytes),
          pinned_response ? pinned(r.response_bytes) : PlacedHostMemory());
      fill_pattern({lane->source.data(), r.request_bytes}, kSeed);
      if (r.coalesced()) {
        const std::uint64_t batch = static_cast<std::uint64_t>(r.coalesce_max) * r.request_bytes;
        for (auto& b : lane->batch_host) b = pinned(batch);
        lane->batch_device = DeviceMemory(batch);
      }
      for (int s = 0; prealloc && s < r.pool_slots; ++s) {
        lane->ring.push_back(pinned(r.request_bytes));
        std::memcpy(lane->ring.back().data(), lane->source.data(), r.request_bytes);
      }
      lanes_.push_back(std::move(lane));
    }
    for (int q = 0; q < r.requests; ++q) lanes_[q % r.submitters]->requests.push_back(q);
    // The pattern's words that stamps replace are not part of any request's checksum: the sum of
    // the others, for every request size (one pass over the largest).
    for (int q = 0; q < r.requests; ++q) unstamped_sums_[r.h2d_bytes(q) / 8] = 0;
    const auto* words = reinterpret_cast<const std::uint64_t*>(lanes_[0]->source.data());
    std::uint64_t sum = 0;
    std::size_t i = 0;
    for (auto& [count, at] : unstamped_sums_) {
      for (; i < count; ++i) {
        if (i % (kPage / 8) != 0) sum += words[i];
      }
      at = sum;
    }
    if (r.streaming()) {
      weights_.emplace(
          WeightStreamConfig{r.bulk_bytes, r.bulk_chunk_bytes, r.stream_slots, where_.memory_node});
      std::ranges::move(weights_->placement_checks(), std::back_inserter(placement_));
      checker_.emplace();
    } else if (r.background != ServingBackground::kNone) {
      bulk_host_ = pinned(r.bulk_bytes);
      bulk_device_ = DeviceMemory(r.bulk_bytes);
      PB_CUDA(cudaMemset(bulk_device_.get(), 0, r.bulk_bytes));
    }
    std::ranges::move(lanes_[0]->source.checks("request buffers"), std::back_inserter(placement_));
    const auto add = [this](const PlacedHostMemory& memory, const char* what, const char* suffix) {
      std::ranges::move(memory.checks(what, suffix), std::back_inserter(placement_));
    };
    if (prealloc) add(lanes_[0]->ring[0], "preallocated request buffer", "_ring");
    if (lanes_[0]->pinned_response.data() != nullptr) {
      add(lanes_[0]->pinned_response, "pinned response buffer", "_response");
    }
    if (bulk_host_.data() != nullptr) add(bulk_host_, "bulk transfer's host buffer", "_bulk");
    if (r.coalesced()) add(lanes_[0]->batch_host[0], "coalescing batch buffer", "_batch");
  }

  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }
  std::vector<MetricSpec> metrics() const override { return serving_metrics(r_); }
  std::string timing_detail() const override {
    std::string detail =
        "each request timed by the host steady clock from its arrival (back_to_back: its "
        "issue) to the completion of its H2D copy and of the whole request, seen by waiting on "
        "the request's CUDA events: back_to_back in the submitting thread itself, as a "
        "blocking caller; with timed arrivals in a completion thread per submitter";
    if (r_.gpu_timeline) {
      detail +=
          "; h2d_gpu_time and step_gap from the GPU timestamps of CUPTI activity records of "
          "every repetition (a request's copies are those on its stream before its step)";
    }
    return detail;
  }

  void warm_up(double) override {
    if (r_.gpu_timeline) require_cupti_timeline("a serving case with gpu_timeline on");
    load_kernel(decode_step);
    {
      // Untimed: first-touch of every buffer and slot, lazy driver state, and with the timeline
      // on, CUPTI's own first-use costs (on the H200 the first captured repetitions of a Poisson
      // case stalled its submitters for milliseconds; docs/measurements.md).
      std::optional<TimelineCapture> capture;
      if (r_.gpu_timeline) capture.emplace(TimelineCapture::Options{});
      replay(0);
      if (capture) capture->collect();
    }
    verify();
  }

  Sample measure() override {
    ++repetition_;
    std::optional<TimelineCapture> capture;
    if (r_.gpu_timeline) capture.emplace(TimelineCapture::Options{});
    const double seconds = replay(repetition_);
    std::vector<double> h2d(r_.requests), request(r_.requests);
    double first = arrival_[0], last = 0;
    for (int q = 0; q < r_.requests; ++q) {
      h2d[q] = h2d_at_[q] - arrival_[q];
      request[q] = done_at_[q] - arrival_[q];
      first = std::min(first, arrival_[q]);
      last = std::max(last, done_at_[q]);
    }
    SampleBuilder sample(metrics());
    sample.operations("h2d_latency", std::move(h2d))
        .operations("request_latency", std::move(request))
        .value("throughput", r_.requests / (last - first))
        .value("copies_issued", static_cast<double>(copies_.load()));
    if (weights_) sample.value("stream_throughput", weights_->throughput_gb_s());
    if (r_.coalesced()) {
      std::vector<double> waited(r_.requests);
      for (int q = 0; q < r_.requests; ++q) waited[q] = issued_at_[q] - arrival_[q];
      sample.operations("coalesce_wait", std::move(waited))
          .value("batch_size",
                 static_cast<double>(r_.requests) /
                     static_cast<double>(std::max<std::uint64_t>(1, h2d_copies_.load())));
    }
    if (r_.pooled()) {
      sample.value("pool_high_water", static_cast<double>(pool_stats_.high_water_bytes_in_use))
          .value("pool_waits", static_cast<double>(pool_stats_.waits))
          .value("pool_wait_time", pool_stats_.wait_seconds)
          .value("pageable_fallbacks", static_cast<double>(pool_stats_.fallbacks));
      for (const BucketStats& b :
           r_.pool_buckets.empty() ? std::vector<BucketStats>{} : pool_stats_.buckets) {
        const std::string p = "pool_b" + std::to_string(b.slot_bytes) + "_";
        sample.value(p + "requests", static_cast<double>(b.requests))
            .value(p + "spills_out", static_cast<double>(b.spills_out))
            .value(p + "spills_in", static_cast<double>(b.spills_in))
            .value(p + "fallbacks", static_cast<double>(b.fallbacks))
            .value(p + "mean_free", b.mean_free_seen())
            .value(p + "high_water", static_cast<double>(b.high_water_in_use));
      }
    }
    if (capture) {
      timeline_ = capture->collect();
      StepTimes gpu = gpu_step_times();
      sample.operations("h2d_gpu_time", std::move(gpu.input_copy_seconds))
          .operations("step_gap", std::move(gpu.gap_seconds));
    }
    return sample.build(seconds);
  }

  void verify() override {
    std::vector<std::uint64_t> seen(r_.requests);
    PB_CUDA(cudaMemcpy(seen.data(), checksums_.get(), seen.size() * 8, cudaMemcpyDeviceToHost));
    for (int q = 0; q < r_.requests; ++q) {
      if (seen[q] != expected_[q]) {
        throw CaseFailure("request " + std::to_string(q) + " (submitter " +
                          std::to_string(q % r_.submitters) +
                          "): the GPU saw data that is not the request's (a staging buffer "
                          "rewritten before its copy completed, or a copy that went wrong)");
      }
    }
    if (r_.pooled() && pool_stats_.high_water_bytes_in_use > pool_stats_.max_pinned_bytes) {
      throw CaseFailure("the pool held more pinned bytes than its bound");
    }
    if (weights_) {
      weights_->verify(*checker_);
      ++stream_verified_;
    }
    verified_ += static_cast<std::uint64_t>(r_.requests);
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all = placement_;
    if (auto slots = slot_memory_.placement()) all.push_back(*slots);
    for (const auto& c : thread_checks_) all.push_back(c);
    all.push_back({"request_data", verified_ > 0,
                   verified_ > 0 ? "every request's data matched on the GPU, in every sample"
                                 : "no sample was verified",
                   verified_});
    if (weights_) {
      all.push_back({"stream_data", stream_verified_ > 0,
                     stream_verified_ > 0
                         ? "the part of the tensor each repetition streamed matched the host's "
                           "copy on the GPU"
                         : "no repetition's stream was verified",
                     stream_verified_});
    }
    if (r_.gpu_timeline) {
      all.push_back(timeline_complete_check(timeline_));
      all.push_back({"timeline_steps", timeline_repetitions_ > 0,
                     timeline_repetitions_ > 0
                         ? "every request's step and input copy were on the timeline of every "
                           "repetition"
                         : "no repetition's timeline was read",
                     timeline_repetitions_});
    }
    if (r_.pooled()) {
      all.push_back({"pool_bound", max_high_water_ <= pool_stats_.max_pinned_bytes,
                     "pinned bytes in use never above the pool's bound of " +
                         std::to_string(pool_stats_.max_pinned_bytes) + " (high-water " +
                         std::to_string(max_high_water_) + ")",
                     max_high_water_});
    }
    return all;
  }

  const Timeline* captured_timeline() const override {
    return r_.gpu_timeline ? &timeline_ : nullptr;
  }

  std::uint64_t operations_per_sample() const override {
    return static_cast<std::uint64_t>(r_.requests);
  }
  std::uint64_t bytes_per_sample() const override {
    std::uint64_t bytes = 0;
    for (int q = 0; q < r_.requests; ++q) bytes += r_.h2d_bytes(q) + r_.d2h_bytes(q);
    return bytes;
  }

 private:
  // The GPU's own view of the repetition just captured: each request's input copy and the gaps
  // between steps. A timeline that does not show every request cannot time them.
  StepTimes gpu_step_times() {
    if (!timeline_.unavailable_reason.empty()) {
      throw CaseFailure("the repetition's timeline is missing: " + timeline_.unavailable_reason);
    }
    if (timeline_.dropped_records > 0) {
      throw CaseFailure(concat("CUPTI dropped ", std::to_string(timeline_.dropped_records),
                               " records of the repetition: its GPU times are incomplete"));
    }
    StepTimes gpu = step_times(timeline_);
    std::size_t with_input = 0;
    for (int q = 0; q < r_.requests; ++q) with_input += r_.h2d_bytes(q) > 0 ? 1 : 0;
    if (gpu.steps != static_cast<std::size_t>(r_.requests) ||
        gpu.input_copy_seconds.size() != with_input) {
      throw CaseFailure(concat("the timeline shows ", std::to_string(gpu.steps), " steps and ",
                               std::to_string(gpu.input_copy_seconds.size()),
                               " requests' input copies for ", std::to_string(r_.requests),
                               " requests (", std::to_string(with_input), " with input)"));
    }
    if (gpu.input_copy_seconds.empty() || gpu.gap_seconds.empty()) {
      throw CaseFailure(
          "h2d_gpu_time and step_gap need at least two requests, one of them with input");
    }
    ++timeline_repetitions_;
    return gpu;
  }

  PlacedHostMemory pageable(std::uint64_t bytes) const {
    return PlacedHostMemory({HostMemoryKind::kPageable, std::max<std::uint64_t>(bytes, 8),
                             PageType::k4K, where_.memory_node});
  }
  PlacedHostMemory pinned(std::uint64_t bytes) const {
    return PlacedHostMemory({HostMemoryKind::kPinned, std::max<std::uint64_t>(bytes, 8),
                             std::nullopt, where_.memory_node});
  }

  // Arrival times of repetition `rep`, seconds from its start (empty: back to back).
  std::vector<double> schedule(std::uint64_t rep) const {
    RequestShape shape{ByteRange::fixed(r_.request_bytes), ByteRange::fixed(r_.response_bytes),
                       KernelTimeRange::fixed(r_.kernel_ns / 1000.0)};
    std::vector<Request> requests = r_.trace;
    if (r_.arrival == ServingArrival::kPoisson) {
      PoissonStream p;
      p.rate_per_s = r_.rate_per_s;
      p.count = static_cast<std::size_t>(r_.requests);
      p.shape = shape;
      p.seed = kDefaultRequestSeed + rep;
      requests = poisson_requests(p);
    } else if (r_.arrival == ServingArrival::kBursts) {
      BurstStream b;
      b.burst_size = static_cast<std::size_t>(r_.burst_size);
      b.burst_count = static_cast<std::size_t>(r_.requests / r_.burst_size);
      b.period_s = r_.burst_size / r_.rate_per_s;
      b.shape = shape;
      b.seed = kDefaultRequestSeed + rep;
      requests = burst_requests(b);
    }
    std::vector<double> out;
    for (const auto& q : requests) out.push_back(q.arrival_s);
    return out;
  }

  double seconds_since(Clock::time_point t0) const {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

  // One repetition: every request issued and completed; returns its wall time.
  double replay(std::uint64_t rep) {
    const std::vector<double> at = schedule(rep);
    PB_CUDA(cudaMemset(checksums_.get(), 0, checksums_.size()));
    PB_CUDA(cudaDeviceSynchronize());
    copies_ = 0;
    h2d_copies_ = 0;
    abort_ = false;
    std::optional<PinnedStagingPool> pool;
    if (r_.pooled()) {
      const std::size_t slot = r_.strategy == ServingStrategy::kPinnedPoolChunked
                                   ? std::min(r_.chunk_bytes, r_.request_bytes)
                                   : r_.request_bytes;
      StagingPoolConfig config;
      config.buckets = {{slot, static_cast<std::size_t>(r_.pool_slots)}};
      config.max_pinned_bytes = slot * static_cast<std::size_t>(r_.pool_slots);
      if (!r_.pool_buckets.empty()) {
        config.buckets.clear();
        config.max_pinned_bytes = 0;
        for (const auto& [bytes, count] : r_.pool_buckets) {
          config.buckets.push_back({bytes, static_cast<std::size_t>(count)});
          config.max_pinned_bytes += bytes * static_cast<std::size_t>(count);
        }
      }
      config.policy = ExhaustedPolicy::kFallback;
      pool.emplace(std::move(config), slot_memory_);
    }
    std::exception_ptr error;
    std::mutex error_mutex;
    auto guarded = [&](auto&& body, bool record_placement) {
      return [&, body, record_placement] {
        try {
          make_current(device_);
          ThreadPlacement placement(where_.cpus, where_.thread_node, where_.where);
          body();
          if (rep == 1 && record_placement) {
            std::lock_guard lock(error_mutex);
            thread_checks_.push_back(placement.check("submitter thread"));
          }
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
          abort_ = true;
        }
      };
    };
    if (rep == 1) thread_checks_.clear();
    // Reset before any thread starts: a submitter must never see the last repetition's counts.
    bulk_go_ = 0;
    bulk_started_ = 0;
    bulk_done_ = 0;
    for (auto& lane : lanes_) {
      lane->enqueued = 0;
      lane->batches = 0;
    }
    // The stream is already running when the first request arrives, and stops once the last has
    // completed.
    std::atomic<bool> stream_stop{false};
    std::optional<std::thread> streamer;
    if (weights_) {
      weights_->reset();
      streamer.emplace(
          guarded([this, &stream_stop] { weights_->run(stream_stop, abort_); }, false));
    }
    const auto t0 = Clock::now() + std::chrono::milliseconds(2);
    std::vector<std::thread> threads;
    for (auto& lane : lanes_) {
      Lane* l = lane.get();
      threads.emplace_back(guarded([this, l, &at, &pool, t0] { submit(*l, at, pool, t0); }, true));
      // Back to back, the submitter waits for each request itself, as a blocking caller does.
      if (!at.empty()) threads.emplace_back(guarded([this, l, t0] { complete(*l, t0); }, false));
    }
    if (r_.background != ServingBackground::kNone && !weights_) {
      threads.emplace_back(guarded([this] { run_bulk(); }, false));
    }
    for (auto& t : threads) t.join();
    stream_stop.store(true, std::memory_order_release);
    if (streamer) streamer->join();
    if (pool) {
      pool->drain();
      pool_stats_ = pool->stats();
      max_high_water_ = std::max(max_high_water_, pool_stats_.high_water_bytes_in_use);
    }
    if (error) std::rethrow_exception(error);
    return seconds_since(t0);
  }

  void submit(Lane& lane, const std::vector<double>& at, std::optional<PinnedStagingPool>& pool,
              Clock::time_point t0) {
    while (Clock::now() < t0) {
    }
    for (std::size_t k = 0; k < lane.requests.size() && !abort_; ++k) {
      const std::size_t q = lane.requests[k];
      if (at.empty()) {
        prepare_data(lane, k, q);  // the request's data exists before it arrives
        if (r_.background != ServingBackground::kNone && !r_.streaming()) {
          // The previous request's bulk transfer has ended; this one's first chunk is queued.
          if (!wait_until([&] { return bulk_done_.load(std::memory_order_acquire) >= k; },
                          "the previous bulk transfer")) {
            return;
          }
          bulk_go_.store(k + 1, std::memory_order_release);
          if (!wait_until([&] { return bulk_started_.load(std::memory_order_acquire) > k; },
                          "the bulk transfer's start")) {
            return;
          }
        }
        arrival_[q] = seconds_since(t0);
        // A blocking caller: the copy, waited for, then the step and the response.
        // No event: the stream holds nothing but the copy, and recording one would add its API
        // call to every request's latency.
        issue_h2d(lane, k, q, pool, false);
        wait_until([&] { return ready(cudaStreamQuery(lane.stream.get())); },
                   "a request's H2D copy");
        h2d_at_[q] = seconds_since(t0);
        issue_step(lane, q);
        observe_done(q, t0);
        continue;
      } else if (r_.coalesced()) {
        k = submit_batch(lane, k, at, t0);
        continue;
      } else {
        prepare_data(lane, k, q);
        const auto due =
            t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(at[q]));
        if (due - Clock::now() > std::chrono::microseconds(200)) {
          std::this_thread::sleep_until(due - std::chrono::microseconds(100));
        }
        while (Clock::now() < due) {
        }
        arrival_[q] = at[q];
      }
      issue_h2d(lane, k, q, pool, true);
      issue_step(lane, q);
      lane.enqueued.store(k + 1, std::memory_order_release);
    }
  }

  // Waits until request q's arrival time.
  void wait_for_arrival(const std::vector<double>& at, std::size_t q, Clock::time_point t0) {
    const auto due =
        t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(at[q]));
    if (due - Clock::now() > std::chrono::microseconds(200)) {
      std::this_thread::sleep_until(due - std::chrono::microseconds(100));
    }
    while (Clock::now() < due) {
    }
  }

  // coalesced: the requests of `lane` from its k-th on that arrive within the window of the
  // first (at most coalesce_max), packed into one pinned buffer and copied as one transfer; each
  // request's step reads its part. Returns the index of the batch's last request.
  std::size_t submit_batch(Lane& lane, std::size_t k, const std::vector<double>& at,
                           Clock::time_point t0) {
    const std::size_t first = lane.requests[k];
    wait_for_arrival(at, first, t0);
    const double close = at[first] + static_cast<double>(r_.coalesce_ns) * 1e-9;
    std::size_t last = k;
    while (last + 1 < lane.requests.size() &&
           last + 1 - k < static_cast<std::size_t>(r_.coalesce_max) &&
           at[lane.requests[last + 1]] <= close) {
      ++last;
      wait_for_arrival(at, lane.requests[last], t0);
    }
    // The window stays open until it closes or the batch is full, as a server's would.
    if (last + 1 - k < static_cast<std::size_t>(r_.coalesce_max)) {
      const auto closes =
          t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(close));
      while (Clock::now() < closes && !abort_) {
      }
    }
    const std::size_t b = lane.batches++ % 2;
    if (lane.batch_copied[b]) wait_for_event(lane.batch_copied[b]->get(), "a batch's H2D copy");
    std::byte* host = lane.batch_host[b].data();
    std::vector<std::size_t> offsets;
    std::size_t bytes = 0;
    for (std::size_t i = k; i <= last; ++i) {
      const std::size_t q = lane.requests[i];
      arrival_[q] = at[q];
      issued_at_[q] = seconds_since(t0);
      prepare_data(lane, i, q);
      std::memcpy(host + bytes, lane.source.data(), r_.h2d_bytes(q));
      offsets.push_back(bytes);
      bytes += r_.h2d_bytes(q);
    }
    cudaStream_t s = lane.stream.get();
    if (bytes > 0) {
      copy(lane.batch_device.get(), host, bytes, cudaMemcpyHostToDevice, s);
      if (!lane.batch_copied[b]) lane.batch_copied[b].emplace(cudaEventDisableTiming);
      PB_CUDA(cudaEventRecord(lane.batch_copied[b]->get(), s));
    }
    for (std::size_t i = k; i <= last; ++i) {
      const std::size_t q = lane.requests[i];
      PB_CUDA(cudaEventRecord(h2d_done_[q].get(), s));
      issue_step(lane, q, lane.batch_device.get() + offsets[i - k]);
      lane.enqueued.store(i + 1, std::memory_order_release);
    }
    return last;
  }

  // Stamps request q into the buffer it is copied from, and records the checksum to expect.
  void prepare_data(Lane& lane, std::size_t k, std::size_t q) {
    std::byte* data = lane.source.data();
    if (r_.strategy == ServingStrategy::kPreallocatedPinned) {
      const std::size_t slot = k % lane.ring.size();
      if (k >= lane.ring.size() && r_.arrival != ServingArrival::kBackToBack) {
        // The buffer's previous request must have been copied out of it before it is rewritten
        // (back to back it has completed already).
        wait_for_event(h2d_done_[lane.requests[k - lane.ring.size()]].get(),
                       "a request's H2D copy");
      }
      data = lane.ring[slot].data();
    }
    const std::size_t words = r_.h2d_bytes(q) / 8;
    std::uint64_t sum = unstamped_sums_.at(words);
    // Every page whose first word the request's checksum covers.
    for (std::size_t p = 0; p * (kPage / 8) < words; ++p) {
      const std::uint64_t v = stamp(q, p);
      std::memcpy(data + p * kPage, &v, sizeof v);
      sum += v;
    }
    expected_[q] = sum;
  }

  void copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
    PB_CUDA(cudaMemcpyAsync(to, from, bytes, kind, s));
    copies_.fetch_add(1, std::memory_order_relaxed);
    // Responses go back one per request: batch_size counts the input transfers alone.
    if (kind == cudaMemcpyHostToDevice) h2d_copies_.fetch_add(1, std::memory_order_relaxed);
  }

  void issue_h2d(Lane& lane, std::size_t k, std::size_t q, std::optional<PinnedStagingPool>& pool,
                 bool record_event) {
    cudaStream_t s = lane.stream.get();
    std::byte* input = lane.input.get();
    const std::size_t bytes = r_.h2d_bytes(q);
    switch (bytes == 0 ? ServingStrategy::kPreallocatedPinned : r_.strategy) {
      case ServingStrategy::kPageable:
        copy(input, lane.source.data(), bytes, cudaMemcpyHostToDevice, s);
        break;
      case ServingStrategy::kPinPerRequest: {
        HostRegistration pinned(lane.source.data(), bytes);
        copy(input, lane.source.data(), bytes, cudaMemcpyHostToDevice, s);
        // Unregistering under a copy that still reads the memory is not allowed: wait first.
        PB_CUDA(cudaStreamSynchronize(s));
        break;
      }
      case ServingStrategy::kPinnedPool:
      case ServingStrategy::kPinnedPoolChunked: {
        std::size_t offset = 0;
        for (const std::size_t chunk : pool->chunks_for(bytes)) {
          if (auto lease = pool->acquire(chunk)) {
            std::memcpy(lease->data().data(), lane.source.data() + offset, chunk);
            copy(input + offset, lease->data().data(), chunk, cudaMemcpyHostToDevice, s);
            lease->in_flight(std::make_unique<RecordedCompletion>(events_, s));
          } else {
            copy(input + offset, lane.source.data() + offset, chunk, cudaMemcpyHostToDevice, s);
          }
          offset += chunk;
        }
        break;
      }
      case ServingStrategy::kCoalesced:
        throw CaseFailure("a coalesced request's input goes through submit_batch");
      case ServingStrategy::kPreallocatedPinned:
        if (bytes > 0) {
          copy(input, lane.ring[k % lane.ring.size()].data(), bytes, cudaMemcpyHostToDevice, s);
        }
        break;
    }
    if (record_event) PB_CUDA(cudaEventRecord(h2d_done_[q].get(), s));
  }

  // The request's step on the GPU, then its response.
  // The request's step on the GPU (reading `input`, the lane's input buffer unless given), then
  // its response.
  void issue_step(Lane& lane, std::size_t q, std::byte* input = nullptr) {
    cudaStream_t s = lane.stream.get();
    if (input == nullptr) input = lane.input.get();
    const std::size_t bytes = r_.h2d_bytes(q);
    const std::size_t response = r_.d2h_bytes(q);
    decode_step<<<blocks_, 256, 0, s>>>(
        reinterpret_cast<const unsigned long long*>(input), bytes / 8,
        reinterpret_cast<unsigned long long*>(checksums_.get()) + q, r_.step_ns(q));
    PB_CUDA(cudaGetLastError());
    if (response > 0) {
      if (r_.strategy == ServingStrategy::kPinPerRequest) {
        HostRegistration pinned(lane.response.data(), response);
        copy(lane.response.data(), lane.output.get(), response, cudaMemcpyDeviceToHost, s);
        PB_CUDA(cudaStreamSynchronize(s));
      } else {
        copy(lane.response_buffer(), lane.output.get(), response, cudaMemcpyDeviceToHost, s);
      }
    }
    PB_CUDA(cudaEventRecord(done_[q].get(), s));
  }

  // One bulk transfer per request, issued chunk by chunk with one chunk in flight: a request
  // queued behind it waits for at most the chunk being copied (the mitigation chunking buys).
  void run_bulk() {
    const bool same = r_.background == ServingBackground::kSameDirection;
    Event chunk_done(cudaEventDisableTiming);
    for (std::size_t k = 0; k < static_cast<std::size_t>(r_.requests); ++k) {
      if (!wait_until([&] { return bulk_go_.load(std::memory_order_acquire) > k; },
                      "the next request")) {
        return;
      }
      for (std::uint64_t off = 0; off < r_.bulk_bytes; off += r_.bulk_chunk_bytes) {
        const std::size_t n = std::min(r_.bulk_chunk_bytes, r_.bulk_bytes - off);
        std::byte* host = bulk_host_.data() + off;
        std::byte* dev = bulk_device_.get() + off;
        PB_CUDA(cudaMemcpyAsync(same ? static_cast<void*>(dev) : host, same ? host : dev, n,
                                same ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                bulk_stream_.get()));
        PB_CUDA(cudaEventRecord(chunk_done.get(), bulk_stream_.get()));
        if (off == 0) bulk_started_.store(k + 1, std::memory_order_release);
        wait_for_event(chunk_done.get(), "a bulk chunk");
      }
      bulk_done_.store(k + 1, std::memory_order_release);
    }
  }

  void complete(Lane& lane, Clock::time_point t0) {
    for (std::size_t k = 0; k < lane.requests.size(); ++k) {
      if (!wait_until([&] { return lane.enqueued.load(std::memory_order_acquire) > k; },
                      "the submitter", true)) {
        return;
      }
      observe(lane.requests[k], t0);
    }
  }

  void observe_h2d(std::size_t q, Clock::time_point t0) {
    wait_for_event(h2d_done_[q].get(), "a request's H2D copy");
    h2d_at_[q] = seconds_since(t0);
  }
  void observe_done(std::size_t q, Clock::time_point t0) {
    wait_for_event(done_[q].get(), "a request");
    done_at_[q] = seconds_since(t0);
  }

  // Spins until `ready` (false when another thread failed). A wait that lasts kWaitLimit fails
  // the case rather than hanging the run.
  template <typename Ready>
  bool wait_until(Ready&& ready, const char* what, bool yield = false) {
    const auto limit = Clock::now() + kWaitLimit;
    while (!ready()) {
      if (abort_) return false;
      if (Clock::now() > limit) {
        throw CaseFailure(std::string("waited over 60 s for ") + what + ": the replay is stuck");
      }
      if (yield) std::this_thread::yield();
    }
    return true;
  }
  // A query's answer: done, not yet, or an error (thrown).
  static bool ready(cudaError_t e) {
    if (e == cudaErrorNotReady) return false;
    PB_CUDA(e);
    return true;
  }
  void wait_for_event(cudaEvent_t event, const char* what) {
    wait_until([&] { return ready(cudaEventQuery(event)); }, what);
  }

  // Timestamps request q's completions as they happen (events complete in stream order).
  void observe(std::size_t q, Clock::time_point t0) {
    observe_h2d(q, t0);
    observe_done(q, t0);
  }

  static std::vector<Event> events(int n) {
    std::vector<Event> v;
    v.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v.emplace_back(cudaEventDisableTiming);
    return v;
  }

  ServingRequest r_;
  int device_;
  ResolvedHostPlacement where_;
  int blocks_ = 1;
  std::vector<Event> h2d_done_, done_;
  DeviceMemory checksums_;
  std::vector<std::uint64_t> expected_;
  std::vector<double> arrival_, h2d_at_, done_at_;
  std::vector<double> issued_at_;  // coalesced: when each request's batch was issued
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::map<std::size_t, std::uint64_t> unstamped_sums_;  // words -> their unstamped sum
  PinnedSlotMemory slot_memory_;                         // after where_: placed on its memory node
  EventRecycler events_;
  Stream bulk_stream_;
  PlacedHostMemory bulk_host_;
  std::optional<WeightStream> weights_;          // background stream
  std::optional<DevicePatternChecker> checker_;  // checks the streamed weights, with weights_
  std::uint64_t stream_verified_ = 0;
  DeviceMemory bulk_device_;
  std::atomic<std::uint64_t> copies_{0}, h2d_copies_{0};
  std::atomic<bool> abort_{false};
  std::atomic<std::size_t> bulk_go_{0}, bulk_started_{0}, bulk_done_{0};
  StagingPoolStats pool_stats_;
  std::size_t max_high_water_ = 0;
  std::uint64_t repetition_ = 0;
  std::uint64_t verified_ = 0;
  std::uint64_t timeline_repetitions_ = 0;
  Timeline timeline_;  // the last repetition's, with gpu_timeline on
  std::vector<Check> placement_;
  std::vector<Check> thread_checks_;
};

}  // namespace

std::unique_ptr<CaseBench> make_serving_bench(const ServingRequest& r, const Machine& machine,
                                              int device) {
  return std::make_unique<ServingBench>(r, machine, device);
}

}  // namespace pathbench
