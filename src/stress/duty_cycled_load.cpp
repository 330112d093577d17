#include "stress/duty_cycled_load.hpp"

#include <stdexcept>
#include <utility>

namespace pathbench {

DutyCycledLoad::DutyCycledLoad(DutySchedule schedule, Operation operation)
    : schedule_(schedule), operation_(std::move(operation)) {}

void DutyCycledLoad::start(std::chrono::steady_clock::time_point epoch) {
  if (thread_.joinable()) throw std::logic_error("DutyCycledLoad::start called twice");
  thread_ = std::jthread([this, epoch](std::stop_token stop) { loop(stop, epoch); });
}

void DutyCycledLoad::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

void DutyCycledLoad::loop(const std::stop_token& stop,
                          std::chrono::steady_clock::time_point epoch) {
  using Clock = std::chrono::steady_clock;
  try {
    while (!stop.stop_requested()) {
      const Clock::time_point now = Clock::now();
      const DutySchedule::Phase phase = schedule_.phase_at(now - epoch);
      if (!phase.on) {
        sleep_until_or_stopped(epoch + phase.ends_at, stop);
        continue;
      }
      const std::uint64_t bytes = operation_();
      meter_.add(bytes, std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - now));
    }
  } catch (...) {
    meter_.fail(std::current_exception());
  }
}

}  // namespace pathbench
