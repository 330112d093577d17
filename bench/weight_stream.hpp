#pragma once

// CPU offload / weight streaming, the background of a `serving` case with background=stream: a
// host-resident tensor (weights or KV blocks, in pageable memory on the case's memory node)
// streamed to the GPU chunk by chunk for the whole repetition, through a bounded ring of pinned
// staging slots — memcpy into a free slot, an async H2D copy out of it, the slot reused once its
// copy's event has completed — while the requests run on their own streams.

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "measure/placed_host_memory.hpp"

namespace pathbench {

struct WeightStreamConfig {
  std::uint64_t tensor_bytes = 0;
  std::uint64_t chunk_bytes = 0;  // one slot, one copy
  int slots = 2;
  std::optional<int> memory_node;
};

class WeightStream {
 public:
  explicit WeightStream(const WeightStreamConfig& config);

  // Before a repetition: the device tensor zeroed (a chunk that was not copied cannot pass
  // verify()) and the counters cleared.
  void reset();
  // Streams the tensor round and round until `stop` or `abort` is set, then waits for the copies
  // in flight. Runs on its own thread.
  void run(const std::atomic<bool>& stop, const std::atomic<bool>& abort);

  std::uint64_t bytes_streamed() const { return bytes_; }
  double seconds() const { return seconds_; }
  double throughput_gb_s() const;
  // The part of the device tensor the repetition wrote (all of it after a whole pass) matches
  // the host tensor. Throws CaseFailure otherwise.
  void verify(DevicePatternChecker& checker);
  // host_memory_kind and host_placement of the tensor and of the slots.
  std::vector<Check> placement_checks() const;

 private:
  WeightStreamConfig config_;
  PlacedHostMemory tensor_;  // pageable: what the model's host copy is
  PlacedHostMemory slots_;   // pinned, `slots` × chunk_bytes
  DeviceMemory device_;
  Stream stream_;
  std::vector<Event> slot_done_;
  std::uint64_t bytes_ = 0;
  std::uint64_t covered_ = 0;  // prefix of the device tensor written this repetition
  double seconds_ = 0;
};

}  // namespace pathbench
