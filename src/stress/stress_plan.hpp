#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inventory/machine.hpp"
#include "stress/duty_cycle.hpp"
#include "stress/gpu_copier.hpp"

namespace pathbench {

// `pathbench stress` as typed; an option left out is empty. Sizes are strings with binary units
// ("64MiB"), parsed like the scenario files' sizes.
struct StressOptions {
  std::optional<std::string> gpu_copies;  // h2d | d2h | both
  int device = 0;
  std::optional<std::string> copy_bytes;  // default kDefaultCopyBytes
  std::optional<double> duty;             // default 1
  std::optional<int> period_ms;           // default 100
  std::optional<int> host_threads;
  std::optional<std::string> host_bytes;  // default kDefaultHostBytes
  std::optional<int> host_node;           // default: the GPU's node
  double duration_s = 0;                  // 0: until SIGINT/SIGTERM
};

inline constexpr std::uint64_t kDefaultCopyBytes = std::uint64_t{64} << 20;
// Per buffer, two per thread: far beyond any CPU's last-level cache, so every memcpy reaches DRAM,
// and 512 MiB per thread leaves room for a dozen threads on a small node.
inline constexpr std::uint64_t kDefaultHostBytes = std::uint64_t{256} << 20;
inline constexpr std::uint64_t kMinHostBytes = std::uint64_t{1} << 20;
inline constexpr int kDefaultPeriodMs = 100;
inline constexpr int kMaxPeriodMs = 60'000;

// What the command will do, validated against the machine: every bad value or combination is an
// InputError naming the option (exit 3) before anything is allocated.
struct StressPlan {
  // GPU copies; empty `directions` means none.
  std::vector<CopyDirection> directions;
  int device = 0;
  std::string gpu_name;
  std::uint64_t copy_bytes = kDefaultCopyBytes;
  DutySchedule schedule{std::chrono::milliseconds(kDefaultPeriodMs), 1.0};
  // Host memory-bandwidth threads; 0 means none.
  int host_threads = 0;
  std::uint64_t host_bytes = kDefaultHostBytes;
  // Where the host buffers and the pinned copy buffers live, and why that node; nothing when the
  // machine's NUMA layout is unknown (then nothing is bound).
  std::optional<int> host_node;
  std::string host_node_origin;                           // "--host-node", "the node of GPU 0", ...
  std::vector<int> host_cpus;                             // the node's CPUs this process may use
  std::optional<std::chrono::duration<double>> duration;  // nothing: until a signal

  // One line saying exactly what the command does.
  std::string describe() const;
};

StressPlan make_stress_plan(const StressOptions& options, const Machine& machine);

}  // namespace pathbench
