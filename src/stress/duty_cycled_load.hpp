#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

#include "stress/duty_cycle.hpp"
#include "stress/load_meter.hpp"

namespace pathbench {

// Runs one operation over and over on its own thread, following a DutySchedule: during the
// on-part of each period operations are issued back to back (each one complete before the next,
// so the off-part is really idle), then the thread sleeps to the end of the period. An operation
// started in the on-part finishes even if it runs past it. The operation returns the bytes it
// moved; an exception it throws stops the loop and is kept in the meter.
class DutyCycledLoad {
 public:
  using Operation = std::function<std::uint64_t()>;

  DutyCycledLoad(DutySchedule schedule, Operation operation);
  DutyCycledLoad(const DutyCycledLoad&) = delete;
  DutyCycledLoad& operator=(const DutyCycledLoad&) = delete;
  ~DutyCycledLoad() = default;  // the thread member stops and joins first

  // Starts the thread; periods count from `epoch`. Call once.
  void start(std::chrono::steady_clock::time_point epoch);
  // Asks the thread to stop after the operation in flight and waits for it.
  void stop();

  const LoadMeter& meter() const { return meter_; }

 private:
  void loop(const std::stop_token& stop, std::chrono::steady_clock::time_point epoch);

  DutySchedule schedule_;
  Operation operation_;
  LoadMeter meter_;
  std::jthread thread_;  // last: destroyed (stopped and joined) before what it uses
};

}  // namespace pathbench
