#include "bench/weight_stream.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "measure/pattern.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kTensorSeed = 0x776569676874ull;  // "weight"

}  // namespace

WeightStream::WeightStream(const WeightStreamConfig& config)
    : config_(config),
      tensor_({HostMemoryKind::kPageable, config.tensor_bytes, PageType::k4K, config.memory_node}),
      slots_({HostMemoryKind::kPinned, config.chunk_bytes * static_cast<std::size_t>(config.slots),
              std::nullopt, config.memory_node}),
      device_(config.tensor_bytes) {
  fill_pattern({tensor_.data(), config.tensor_bytes}, kTensorSeed);
  for (int s = 0; s < config.slots; ++s) slot_done_.emplace_back(cudaEventDisableTiming);
}

void WeightStream::reset() {
  PB_CUDA(cudaMemsetAsync(device_.get(), 0, config_.tensor_bytes, stream_.get()));
  stream_.synchronize();
  bytes_ = 0;
  covered_ = 0;
  seconds_ = 0;
}

void WeightStream::run(const std::atomic<bool>& stop, const std::atomic<bool>& abort) {
  const auto start = std::chrono::steady_clock::now();
  const auto slots = static_cast<std::size_t>(config_.slots);
  std::vector<std::uint64_t> in_slot(slots, 0);  // bytes of the copy out of each slot, 0: free
  std::uint64_t offset = 0;
  for (std::size_t i = 0; !stop.load(std::memory_order_acquire) && !abort.load(); ++i) {
    const std::size_t s = i % slots;
    if (in_slot[s] > 0) {
      // The copy engine may still read the slot until its copy's event has completed.
      cudaError_t e;
      while ((e = cudaEventQuery(slot_done_[s].get())) == cudaErrorNotReady) {
        if (abort.load()) return;
      }
      PB_CUDA(e);
      bytes_ += in_slot[s];
    }
    const std::uint64_t n = std::min(config_.chunk_bytes, config_.tensor_bytes - offset);
    std::byte* slot = slots_.data() + s * config_.chunk_bytes;
    std::memcpy(slot, tensor_.data() + offset, n);
    PB_CUDA(
        cudaMemcpyAsync(device_.get() + offset, slot, n, cudaMemcpyHostToDevice, stream_.get()));
    PB_CUDA(cudaEventRecord(slot_done_[s].get(), stream_.get()));
    in_slot[s] = n;
    covered_ = std::max(covered_, offset + n);
    offset = offset + n == config_.tensor_bytes ? 0 : offset + n;
  }
  stream_.synchronize();
  for (const std::uint64_t n : in_slot) bytes_ += n;
  seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double WeightStream::throughput_gb_s() const {
  return seconds_ > 0 ? static_cast<double>(bytes_) / seconds_ / kGB : 0.0;
}

void WeightStream::verify(DevicePatternChecker& checker) {
  if (covered_ == 0) {
    throw CaseFailure("the weight stream copied nothing during the repetition");
  }
  checker.verify(device_.get(), covered_, kTensorSeed, stream_.get(),
                 "streamed tensor on the GPU (first " + format_bytes(covered_) + ")");
}

std::vector<Check> WeightStream::placement_checks() const {
  std::vector<Check> out = tensor_.checks("streamed host tensor", "_stream_tensor");
  for (auto& c : slots_.checks("stream staging slots", "_stream_slots"))
    out.push_back(std::move(c));
  return out;
}

}  // namespace pathbench
