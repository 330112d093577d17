#include "bench/peer_family.hpp"
#include "core/errors.hpp"
#include "cuda/cuda_probe.hpp"

namespace pathbench {

namespace {
// Built without CUDA: the cases validate like everywhere else and are skipped with the reason.
class PeerFamilyWithoutCuda final : public PeerFamilyBase {
 public:
  std::unique_ptr<CaseBench> prepare(const CaseSpec&, const Machine&, int) const override {
    throw SkipCase(probe_cuda().unavailable_reason);
  }
};
}  // namespace

std::unique_ptr<Family> make_peer_family() { return std::make_unique<PeerFamilyWithoutCuda>(); }

}  // namespace pathbench
