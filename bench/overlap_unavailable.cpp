#include "bench/overlap_family.hpp"
#include "core/errors.hpp"
#include "cuda/cuda_probe.hpp"

namespace pathbench {

namespace {
class OverlapFamilyWithoutCuda final : public OverlapFamilyBase {
 public:
  std::unique_ptr<CaseBench> prepare(const CaseSpec&, const Machine&, int) const override {
    throw SkipCase(probe_cuda().unavailable_reason);
  }
};
}  // namespace

std::unique_ptr<Family> make_overlap_family() {
  return std::make_unique<OverlapFamilyWithoutCuda>();
}

}  // namespace pathbench
