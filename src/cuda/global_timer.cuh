#pragma once

// The GPU's global nanosecond timer, for kernels that stand in for a compute step of a fixed
// duration: busy time that depends neither on clocks nor on what the copy engines do.

namespace pathbench {

__device__ inline unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Returns once `ns` nanoseconds have passed since `start_ns` on the global timer.
__device__ inline void spin_until(unsigned long long start_ns, unsigned long long ns) {
  while (global_timer_ns() - start_ns < ns) {
  }
}

}  // namespace pathbench
