#include "core/host_clock.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>

namespace pathbench {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::uint64_t operations_for(double min_time, double seconds_per_op, std::uint64_t max_ops) {
  max_ops = std::max<std::uint64_t>(1, max_ops);
  if (std::isnan(seconds_per_op)) return 1;
  // An operation too short for the clock to see: as many as allowed.
  if (seconds_per_op <= 0) return max_ops;
  const double ops = std::ceil(min_time / seconds_per_op);
  if (!(ops < static_cast<double>(max_ops))) return max_ops;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(ops));
}

}  // namespace pathbench
