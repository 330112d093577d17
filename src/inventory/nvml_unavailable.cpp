// Built when CMake found no nvml.h (neither the CUDA toolkit's nor nvidia-nvml-dev-cu12's): every
// NVML session fails to open and says why, so the inventory and the environment samples take the
// nvidia-smi fallback.
#include <stdexcept>

#include "inventory/gpu_inventory_nvml.hpp"
#include "inventory/nvml_library.hpp"

namespace pathbench {

// Without the header there is no function table; this empty one only completes the type.
struct NvmlApi {};

namespace {

[[noreturn]] void unavailable() {
  throw std::runtime_error(
      "pathbench was built without nvml.h (install nvidia-nvml-dev-cu12 with scripts/setup.sh "
      "or point PATHBENCH_NVML_INCLUDE_DIR at the CUDA toolkit's include directory)");
}

}  // namespace

void NvmlSession::LibraryCloser::operator()(void*) const {}

NvmlSession::NvmlSession() { unavailable(); }

NvmlSession::NvmlSession(const NvmlApi&) { unavailable(); }

NvmlSession::~NvmlSession() = default;

void NvmlSession::start() { unavailable(); }

void NvmlSession::sample(GpuEnvironment& gpu) const {
  gpu.source = "unavailable: pathbench was built without nvml.h";
}

NvmlInventory read_nvml_inventory(const NvmlSession&) { unavailable(); }

}  // namespace pathbench
