#include "stress/duty_cycle.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pathbench {

DutySchedule::DutySchedule(Duration period, double duty) : period_(period), duty_(duty) {
  if (period.count() <= 0) throw std::invalid_argument("the period must be longer than 0");
  // Written as a negation so that NaN is refused too.
  if (!(duty > 0.0 && duty <= 1.0)) {
    throw std::invalid_argument("the duty must be in (0, 1], not " + std::to_string(duty));
  }
  const auto on =
      static_cast<Duration::rep>(std::llround(static_cast<double>(period.count()) * duty));
  on_time_ = Duration(std::clamp<Duration::rep>(on, 1, period.count()));
}

DutySchedule::Phase DutySchedule::phase_at(Duration elapsed) const {
  if (elapsed.count() < 0) elapsed = Duration(0);
  Phase phase;
  phase.period_index = static_cast<std::uint64_t>(elapsed / period_);
  const Duration period_start = period_ * static_cast<Duration::rep>(phase.period_index);
  const Duration into = elapsed - period_start;
  phase.on = into < on_time_;
  phase.ends_at = period_start + (phase.on ? on_time_ : period_);
  return phase;
}

}  // namespace pathbench
