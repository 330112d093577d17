#pragma once

// Any host-side case run while a share of RAM is pinned: the pressure is taken before the case's
// own bench is built (its buffers are mapped and first touched under it) and held until the bench
// is gone; the case's checks gain what was held, verified after every sample.

#include <functional>
#include <memory>

#include "measure/family.hpp"
#include "placement/pinning_pressure.hpp"

namespace pathbench {

std::unique_ptr<CaseBench> under_pinning_pressure(
    const PinningPressureRequest& request,
    const std::function<std::unique_ptr<CaseBench>()>& make_bench);

}  // namespace pathbench
