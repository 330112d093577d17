#include <stdexcept>

#include "stress/gpu_copier.hpp"

namespace pathbench {

// Built without CUDA: the stress command refuses --gpu-copies with the CUDA probe's reason before
// it gets here.
struct GpuCopier::Impl {};

GpuCopier::GpuCopier(int, CopyDirection, std::size_t, std::optional<int>) {
  throw std::runtime_error(
      "pathbench was built without CUDA (no nvcc at configure time): no GPU copies");
}

GpuCopier::GpuCopier(GpuCopier&&) noexcept = default;
GpuCopier& GpuCopier::operator=(GpuCopier&&) noexcept = default;
GpuCopier::~GpuCopier() = default;

std::uint64_t GpuCopier::copy_once() { return 0; }

}  // namespace pathbench
