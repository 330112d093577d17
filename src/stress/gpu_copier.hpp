#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

namespace pathbench {

enum class CopyDirection { kH2D, kD2H };

inline std::string_view to_string(CopyDirection direction) {
  return direction == CopyDirection::kH2D ? "h2d" : "d2h";
}

// One direction of background copy traffic: a pinned host buffer (cudaMallocHost, allocated under
// a memory policy bound to `host_node` when given, so its pages land there), a device buffer and
// a stream of its own. Built without CUDA, construction throws (the caller checks the CUDA probe
// first and never gets here).
class GpuCopier {
 public:
  GpuCopier(int device, CopyDirection direction, std::size_t bytes, std::optional<int> host_node);
  GpuCopier(GpuCopier&&) noexcept;
  GpuCopier& operator=(GpuCopier&&) noexcept;
  ~GpuCopier();

  // Issues one copy of the whole buffer on the copier's stream and waits for it; returns the
  // bytes moved. Callable from any one thread at a time (it makes the device current there).
  std::uint64_t copy_once();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pathbench
