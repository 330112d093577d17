#include "stress/host_memory_hog.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "placement/host_buffer.hpp"
#include "placement/thread_affinity.hpp"

namespace pathbench {

namespace {

// A stop is noticed between chunks: 64 MiB takes a few milliseconds even on a busy node.
constexpr std::size_t kChunkBytes = std::size_t{64} << 20;

}  // namespace

HostMemoryHog::HostMemoryHog(const HostHogConfig& config)
    : config_(config), ready_(std::max(config.threads, 0)) {
  if (config.threads < 1) throw std::invalid_argument("HostMemoryHog: needs at least one thread");
  if (config.bytes == 0) throw std::invalid_argument("HostMemoryHog: buffers of 0 bytes");
  try {
    for (int i = 0; i < config.threads; ++i) {
      threads_.emplace_back([this](std::stop_token stop) { worker(stop); });
    }
  } catch (...) {
    stop();  // threads already running would otherwise wait for start() forever
    throw;
  }
  ready_.wait();
  if (const std::exception_ptr error = meter_.error()) {
    stop();
    std::rethrow_exception(error);
  }
}

HostMemoryHog::~HostMemoryHog() { stop(); }

void HostMemoryHog::release() {
  if (released_) return;
  released_ = true;
  go_.count_down();
}

void HostMemoryHog::start() { release(); }

void HostMemoryHog::stop() {
  for (auto& t : threads_) t.request_stop();
  release();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void HostMemoryHog::worker(const std::stop_token& stop) {
  using Clock = std::chrono::steady_clock;
  std::optional<ThreadAffinityScope> affinity;
  std::optional<HostBuffer> from;
  std::optional<HostBuffer> to;
  try {
    // Bound before touching: where the thread runs does not move bound pages, but it keeps the
    // first touch (and then the copies) on the node's own CPUs.
    if (!config_.cpus.empty()) affinity.emplace(config_.cpus);
    from.emplace(HostBufferRequest{config_.bytes, PageType::kThp, config_.node});
    to.emplace(HostBufferRequest{config_.bytes, PageType::kThp, config_.node});
    from->touch();
    to->touch();
  } catch (...) {
    meter_.fail(std::current_exception());
    ready_.count_down();
    return;
  }
  ready_.count_down();
  go_.wait();
  while (!stop.stop_requested()) {
    for (std::size_t offset = 0; offset < config_.bytes && !stop.stop_requested();
         offset += kChunkBytes) {
      const std::size_t n = std::min(kChunkBytes, config_.bytes - offset);
      const Clock::time_point t0 = Clock::now();
      std::memcpy(to->data() + offset, from->data() + offset, n);
      meter_.add(n, std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0));
    }
  }
}

}  // namespace pathbench
