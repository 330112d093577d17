#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/host_clock.hpp"

namespace pathbench::test_host_clock {
namespace {

TEST(ThreadCpuSeconds, CountsTheThreadsWorkNotItsWaiting) {
  const double start = thread_cpu_seconds();
  EXPECT_GE(start, 0.0);
  // Busy until the thread has used 2 ms of CPU (a loaded machine may take far longer by the wall
  // clock), bounded so a clock that never advances fails instead of hanging.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  double now = start;
  while (now - start < 2e-3 && std::chrono::steady_clock::now() < deadline) {
    now = thread_cpu_seconds();
  }
  EXPECT_GE(now - start, 2e-3);
  const double before_sleep = thread_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LT(thread_cpu_seconds() - before_sleep, 25e-3);
}

}  // namespace
}  // namespace pathbench::test_host_clock
