#pragma once

#include <cstddef>
#include <latch>
#include <optional>
#include <stop_token>
#include <thread>
#include <vector>

#include "stress/load_meter.hpp"

namespace pathbench {

struct HostHogConfig {
  int threads = 1;
  std::size_t bytes = std::size_t{256} << 20;  // per buffer; every thread owns two
  std::optional<int> node;  // buffers bound here (MPOL_BIND before first touch) when set
  std::vector<int> cpus;    // CPUs the threads run on; empty: wherever the scheduler likes
};

// Host memory-bandwidth pressure: each thread memcpys from one of its buffers to the other, over
// and over, so the copies go to DRAM (the buffers are far larger than any last-level cache) and
// compete with whatever else uses the node's memory controllers, a pinned H2D copy's DMA reads
// included. Every memcpy of N bytes counts N bytes.
class HostMemoryHog {
 public:
  // Allocates, binds and first-touches every thread's buffers (each thread its own, in parallel)
  // and returns when all are ready, or throws the first error (SkipCase when the node cannot hold
  // them, SystemError when binding fails). Nothing is copied before start().
  explicit HostMemoryHog(const HostHogConfig& config);
  HostMemoryHog(const HostMemoryHog&) = delete;
  HostMemoryHog& operator=(const HostMemoryHog&) = delete;
  ~HostMemoryHog();  // stops the threads; each frees its buffers

  void start();
  // Asks every thread to stop after its current chunk and waits for them.
  void stop();

  const LoadMeter& meter() const { return meter_; }

 private:
  void worker(const std::stop_token& stop);
  void release();

  HostHogConfig config_;
  LoadMeter meter_;
  std::latch ready_;
  std::latch go_{1};
  bool released_ = false;
  std::vector<std::jthread> threads_;  // last: stopped and joined before the latches go away
};

}  // namespace pathbench
