#pragma once

#include <chrono>
#include <cstdint>
#include <utility>

namespace pathbench {

// Seconds spent in `fn`, by the steady clock. For work the host performs synchronously.
template <typename Fn>
double time_on_host(Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  std::forward<Fn>(fn)();
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}

// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID), in seconds: what issuing work
// costs the host, as opposed to how long it took.
double thread_cpu_seconds();

// How many operations of `seconds_per_op` fill `min_time`, clamped to [1, max_ops].
std::uint64_t operations_for(double min_time, double seconds_per_op, std::uint64_t max_ops);

}  // namespace pathbench
