#include "cli/stress_command.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "inventory/inventory.hpp"
#include "stress/duty_cycled_load.hpp"
#include "stress/gpu_copier.hpp"
#include "stress/host_memory_hog.hpp"
#include "core/stop_signals.hpp"

namespace pathbench::cli {

namespace {

using Clock = std::chrono::steady_clock;

// One direction of GPU copies on its duty cycle. The load is declared after the copier, so its
// thread is stopped before the buffers it copies are freed.
struct GpuCopyLoad {
  GpuCopier copier;
  DutyCycledLoad load;

  GpuCopyLoad(const StressPlan& plan, CopyDirection direction)
      : copier(plan.device, direction, plan.copy_bytes, plan.host_node),
        load(plan.schedule, [this] { return copier.copy_once(); }) {}
};

// What the reporter reads, per load.
struct Meter {
  std::string name;
  const LoadMeter* meter;
  std::uint64_t last_bytes = 0;
};

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double gb_per_s(std::uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / kGB / seconds : 0.0;
}

void rethrow_first_error(const std::vector<Meter>& meters) {
  for (const auto& m : meters) {
    if (const std::exception_ptr error = m.meter->error()) std::rethrow_exception(error);
  }
}

const char* signal_name(int signal_number) {
  return signal_number == SIGINT ? "SIGINT" : signal_number == SIGTERM ? "SIGTERM" : "a signal";
}

}  // namespace

int stress_command(const StressOptions& options) {
  const Inventory inventory = collect_inventory(InventoryOptions{});
  const Machine machine = machine_from(inventory);
  const StressPlan plan = make_stress_plan(options, machine);

  // Installed before anything is allocated: a signal during the (possibly long) first touch of
  // the host buffers is kept and stops the run as soon as it starts.
  std::optional<StopSignals> signals;
  signals.emplace();

  // std::deque: the loads do not move once built (their threads point into them).
  std::deque<GpuCopyLoad> gpu_loads;
  for (const CopyDirection d : plan.directions) gpu_loads.emplace_back(plan, d);
  std::optional<HostMemoryHog> hog;
  if (plan.host_threads > 0) {
    try {
      hog.emplace(
          HostHogConfig{plan.host_threads, plan.host_bytes, plan.host_node, plan.host_cpus});
    } catch (const SkipCase& e) {
      // The node cannot hold the buffers (no memory, not in this cpuset): the option's fault.
      throw InputError::option("--host-node", e.what());
    }
  }

  std::vector<Meter> meters;
  for (std::size_t i = 0; i < gpu_loads.size(); ++i) {
    meters.push_back({std::string(to_string(plan.directions[i])), &gpu_loads[i].load.meter()});
  }
  if (hog) meters.push_back({"host-membw", &hog->meter()});

  std::printf("%s\n", plan.describe().c_str());
  std::fflush(stdout);

  const Clock::time_point start = Clock::now();
  for (auto& g : gpu_loads) g.load.start(start);
  if (hog) hog->start();

  const Clock::time_point deadline =
      plan.duration ? start + std::chrono::duration_cast<Clock::duration>(*plan.duration)
                    : Clock::time_point::max();
  Clock::time_point last_tick = start;
  Clock::time_point next_tick = start + std::chrono::seconds(1);
  std::optional<int> stopped_by;
  while (true) {
    stopped_by = signals->wait_until(std::min(next_tick, deadline));
    if (stopped_by) break;
    bool failed = false;
    for (const auto& m : meters) failed = failed || m.meter->error() != nullptr;
    if (failed) break;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    if (now < next_tick) continue;
    std::string line = "pathbench stress: " +
                       std::to_string(static_cast<long>(seconds_between(start, now) + 0.5)) + " s:";
    for (auto& m : meters) {
      const std::uint64_t bytes = m.meter->bytes();
      char rate[64];
      std::snprintf(rate, sizeof rate, " %s %.2f GB/s", m.name.c_str(),
                    gb_per_s(bytes - m.last_bytes, seconds_between(last_tick, now)));
      line += rate;
      m.last_bytes = bytes;
    }
    std::fprintf(stderr, "%s\n", line.c_str());
    last_tick = now;
    next_tick += std::chrono::seconds(1);
    if (next_tick <= now) next_tick = now + std::chrono::seconds(1);  // after a stall, no burst
  }
  // A second SIGINT/SIGTERM while the loads wind down takes the default action (terminate): the
  // usual way out when something hangs.
  signals.reset();

  for (auto& g : gpu_loads) g.load.stop();
  if (hog) hog->stop();
  const Clock::time_point end = Clock::now();
  rethrow_first_error(meters);

  const double elapsed = seconds_between(start, end);
  char head[128];
  std::snprintf(head, sizeof head, "pathbench stress: summary: %.2f s, stopped by %s", elapsed,
                stopped_by ? signal_name(*stopped_by) : "--duration");
  std::string summary = head;
  for (std::size_t i = 0; i < meters.size(); ++i) {
    const std::uint64_t bytes = meters[i].meter->bytes();
    char part[192];
    std::snprintf(part, sizeof part, "; %s: %llu bytes, %.2f GB/s average", meters[i].name.c_str(),
                  static_cast<unsigned long long>(bytes), gb_per_s(bytes, elapsed));
    summary += part;
    if (i < gpu_loads.size()) {
      // With a duty below 1 the average is diluted by the idle part; the rate while copying is
      // what a measured copy competed with.
      const double busy = std::chrono::duration<double>(meters[i].meter->busy()).count();
      std::snprintf(part, sizeof part, " (%.2f GB/s while copying)", gb_per_s(bytes, busy));
      summary += part;
    }
  }
  std::printf("%s\n", summary.c_str());
  return static_cast<int>(ExitCode::kOk);
}

}  // namespace pathbench::cli
