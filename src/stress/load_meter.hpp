#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stop_token>

namespace pathbench {

// What a running background load has done, written by its worker threads and read by the
// reporter at any time: bytes moved, time spent moving them, and the first error a worker hit
// (a worker cannot throw across its thread; the command rethrows it).
class LoadMeter {
 public:
  void add(std::uint64_t bytes, std::chrono::nanoseconds busy) {
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
    busy_ns_.fetch_add(busy.count(), std::memory_order_relaxed);
  }
  std::uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  std::chrono::nanoseconds busy() const {
    return std::chrono::nanoseconds(busy_ns_.load(std::memory_order_relaxed));
  }

  void fail(std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::move(error);
  }
  std::exception_ptr error() const {
    std::lock_guard lock(mutex_);
    return error_;
  }

 private:
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::int64_t> busy_ns_{0};
  mutable std::mutex mutex_;
  std::exception_ptr error_;
};

// Sleeps until `deadline` or until a stop is requested, whichever comes first; true when stopped.
// The off-part of a duty cycle sleeps here, so a stop never waits for a period to end.
inline bool sleep_until_or_stopped(std::chrono::steady_clock::time_point deadline,
                                   const std::stop_token& stop) {
  std::mutex mutex;
  std::condition_variable_any wakeup;
  std::unique_lock lock(mutex);
  wakeup.wait_until(lock, stop, deadline, [] { return false; });
  return stop.stop_requested();
}

}  // namespace pathbench
