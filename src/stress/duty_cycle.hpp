#pragma once

#include <chrono>
#include <cstdint>

namespace pathbench {

// The on/off pattern of a background load: in every period the first `duty` share is "on" (work
// is issued back to back), the rest "off" (idle). Pure arithmetic on the time since the load
// started, so the pattern can be tested without a GPU and every load of one run, started with
// the same epoch, switches on and off together.
class DutySchedule {
 public:
  using Duration = std::chrono::nanoseconds;

  // `period` > 0 and 0 < `duty` <= 1; throws std::invalid_argument otherwise.
  DutySchedule(Duration period, double duty);

  Duration period() const { return period_; }
  double duty() const { return duty_; }
  // The on-part of one period, never shorter than 1 ns.
  Duration on_time() const { return on_time_; }

  // Where `elapsed` (time since the load started, >= 0) falls.
  struct Phase {
    bool on = true;
    std::uint64_t period_index = 0;
    Duration ends_at{0};  // since the start: end of this on-part, or start of the next period
  };
  Phase phase_at(Duration elapsed) const;

 private:
  Duration period_;
  double duty_;
  Duration on_time_;
};

}  // namespace pathbench
