#include "bench/unified_memory_family.hpp"
#include "core/errors.hpp"
#include "cuda/cuda_probe.hpp"

namespace pathbench {

namespace {
// Built without CUDA: the cases validate like everywhere else and are skipped with the reason.
class UnifiedMemoryFamilyWithoutCuda final : public UnifiedMemoryFamilyBase {
 public:
  std::unique_ptr<CaseBench> prepare(const CaseSpec&, const Machine&, int) const override {
    throw SkipCase(probe_cuda().unavailable_reason);
  }
};
}  // namespace

std::unique_ptr<Family> make_unified_memory_family() {
  return std::make_unique<UnifiedMemoryFamilyWithoutCuda>();
}

}  // namespace pathbench
