#include "stress/stress_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "inventory/cpulist.hpp"
#include "inventory/gpu_selection.hpp"
#include "scenario/scenario_file.hpp"

namespace pathbench {

namespace {

std::uint64_t size_option(const std::string& option, const std::optional<std::string>& text,
                          std::uint64_t fallback, std::uint64_t minimum) {
  if (!text) return fallback;
  std::int64_t bytes = 0;
  try {
    bytes = parse_size(*text);
  } catch (const std::invalid_argument&) {
    throw InputError::option(option, "\"" + *text +
                                         "\" is not a size (bytes, or a number with a binary "
                                         "unit: 64MiB, 1GiB)");
  }
  if (bytes < 0 || static_cast<std::uint64_t>(bytes) < minimum) {
    throw InputError::option(option, "must be at least " + format_bytes(minimum));
  }
  return static_cast<std::uint64_t>(bytes);
}

// An option that only shapes a load the command line did not ask for is a mistake worth saying.
void require_load(bool load_given, bool option_given, const std::string& option,
                  const std::string& load) {
  if (option_given && !load_given) {
    throw InputError::option(option, "applies to " + load + ", which was not given");
  }
}

std::vector<CopyDirection> directions_of(const std::string& text) {
  if (text == "h2d") return {CopyDirection::kH2D};
  if (text == "d2h") return {CopyDirection::kD2H};
  if (text == "both") return {CopyDirection::kH2D, CopyDirection::kD2H};
  throw InputError::option("--gpu-copies", "\"" + text + "\" is not one of: h2d, d2h, both");
}

std::string gb(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GB", static_cast<double>(bytes) / kGB);
  return buf;
}

// The node the buffers go to: the one asked for, else the GPU's, else the first this process may
// use. Fills plan.host_node and plan.host_node_origin.
void choose_host_node(const StressOptions& options, const Machine& machine, StressPlan& plan) {
  const auto& nodes = machine.numa_nodes;
  const auto allowed = [&](int node) {
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
  };
  if (options.host_node) {
    if (nodes.empty()) {
      throw InputError::option("--host-node",
                               "this machine's NUMA layout is unknown (no "
                               "/sys/devices/system/node), so nothing can be bound to a node");
    }
    if (!allowed(*options.host_node)) {
      throw InputError::option("--host-node", "NUMA node " + std::to_string(*options.host_node) +
                                                  " is not one this process may allocate on "
                                                  "(nodes with memory in its cpuset: " +
                                                  join_indexes(nodes) + ")");
    }
    plan.host_node = *options.host_node;
    plan.host_node_origin = "--host-node";
    return;
  }
  if (nodes.empty()) {
    plan.host_node_origin = "not bound: this machine's NUMA layout is unknown";
    return;
  }
  const std::string gpu = "GPU " + std::to_string(options.device);
  plan.host_node = nodes.front();
  if (machine.gpu_unavailable_reason(options.device)) {
    plan.host_node_origin = "the first node; no usable " + gpu + " to follow";
    return;
  }
  const std::optional<int> local = machine.gpu_local_node(options.device);
  if (!local) {
    plan.host_node_origin = "the first node; " + gpu + "'s node is unknown";
  } else if (allowed(*local)) {
    plan.host_node = *local;
    plan.host_node_origin = "the node of " + gpu;
  } else {
    plan.host_node_origin = "the first node this process may use; " + gpu + "'s node " +
                            std::to_string(*local) + " is not";
  }
}

// The values first, then the machine: a typo is reported the same on every machine.
void plan_gpu_copies(const StressOptions& options, const Machine& machine, StressPlan& plan) {
  plan.directions = directions_of(*options.gpu_copies);
  plan.copy_bytes = size_option("--copy-bytes", options.copy_bytes, kDefaultCopyBytes, 1);
  const double duty = options.duty.value_or(1.0);
  if (!(duty > 0.0 && duty <= 1.0)) {
    throw InputError::option("--duty",
                             "must be more than 0 and at most 1 (the share of every "
                             "period spent copying), not " +
                                 std::to_string(duty));
  }
  const int period_ms = options.period_ms.value_or(kDefaultPeriodMs);
  if (period_ms < 1 || period_ms > kMaxPeriodMs) {
    throw InputError::option("--period-ms", "must be from 1 to " + std::to_string(kMaxPeriodMs) +
                                                ", not " + std::to_string(period_ms));
  }
  plan.schedule = DutySchedule(std::chrono::milliseconds(period_ms), duty);

  if (!machine.has_gpu()) {
    throw InputError::option("--gpu-copies", machine.cuda_unavailable_reason.empty()
                                                 ? "no CUDA device on this machine"
                                                 : machine.cuda_unavailable_reason);
  }
  if (auto why = machine.gpu_unavailable_reason(options.device)) {
    throw InputError::option("--device", *why);
  }
  plan.device = options.device;
  for (const auto& g : machine.gpus) {
    if (g.index == options.device) plan.gpu_name = g.name;
  }

  const std::uint64_t gpu_bytes = plan.copy_bytes * plan.directions.size();
  for (const auto& g : machine.gpus) {
    if (g.index == plan.device && g.memory_bytes != 0 && gpu_bytes > g.memory_bytes) {
      throw InputError::option(
          "--copy-bytes", format_bytes(gpu_bytes) + " of device memory (" +
                              std::to_string(plan.directions.size()) + " x " +
                              format_bytes(plan.copy_bytes) + ") do not fit in GPU " +
                              std::to_string(plan.device) + "'s " + format_bytes(g.memory_bytes));
    }
  }
}

void plan_host_load(const StressOptions& options, const Machine& machine, StressPlan& plan) {
  plan.host_threads = *options.host_threads;
  if (plan.host_threads < 1) {
    throw InputError::option("--host-membw-threads", "must be at least 1");
  }
  plan.host_bytes =
      size_option("--host-bytes", options.host_bytes, kDefaultHostBytes, kMinHostBytes);
  if (plan.host_node) {
    const std::vector<int>* cpus = machine.cpus_of_node(*plan.host_node);
    if (cpus == nullptr || cpus->empty()) {
      throw InputError::option(options.host_node ? "--host-node" : "--host-membw-threads",
                               "NUMA node " + std::to_string(*plan.host_node) +
                                   " has no CPUs this process may run on; choose another node "
                                   "with --host-node");
    }
    plan.host_cpus = *cpus;
  }
  const std::size_t cpu_count =
      plan.host_node ? plan.host_cpus.size() : std::max(1u, std::thread::hardware_concurrency());
  if (static_cast<std::size_t>(plan.host_threads) > cpu_count) {
    throw InputError::option(
        "--host-membw-threads",
        std::to_string(plan.host_threads) + " threads on " + std::to_string(cpu_count) +
            " CPUs would only take turns; use at most " + std::to_string(cpu_count));
  }
}

// Both loads' host memory together against what the kernel says is available.
void check_host_memory(const Machine& machine, const StressPlan& plan) {
  if (machine.mem_available_bytes == 0) return;  // unknown: let the allocation say
  const long double hog = 2.0L * plan.host_threads * plan.host_bytes;
  const long double pinned = static_cast<long double>(plan.copy_bytes) * plan.directions.size();
  if (hog + pinned <= static_cast<long double>(machine.mem_available_bytes)) return;
  std::vector<std::string> parts;
  if (plan.host_threads > 0) {
    parts.push_back(std::to_string(plan.host_threads) +
                    (plan.host_threads == 1 ? " thread x 2 x " : " threads x 2 x ") +
                    format_bytes(plan.host_bytes));
  }
  if (!plan.directions.empty()) {
    parts.push_back(std::to_string(plan.directions.size()) + " x " + format_bytes(plan.copy_bytes) +
                    " pinned");
  }
  std::string what = parts.front();
  if (parts.size() > 1) what += " + " + parts.back();
  throw InputError::option(hog >= pinned ? "--host-bytes" : "--copy-bytes",
                           "the buffers need " + gb(static_cast<std::uint64_t>(hog + pinned)) +
                               " of host memory (" + what + "), more than the " +
                               gb(machine.mem_available_bytes) + " available (MemAvailable)");
}

}  // namespace

StressPlan make_stress_plan(const StressOptions& options, const Machine& machine) {
  const bool gpu = options.gpu_copies.has_value();
  const bool host = options.host_threads.has_value();
  if (!gpu && !host) {
    throw InputError::option("stress",
                             "give --gpu-copies h2d|d2h|both, --host-membw-threads N, or both: "
                             "without one there is no load");
  }
  require_load(gpu, options.copy_bytes.has_value(), "--copy-bytes", "--gpu-copies");
  require_load(gpu, options.duty.has_value(), "--duty", "--gpu-copies");
  require_load(gpu, options.period_ms.has_value(), "--period-ms", "--gpu-copies");
  require_load(host, options.host_bytes.has_value(), "--host-bytes", "--host-membw-threads");
  if (!std::isfinite(options.duration_s) || options.duration_s < 0) {
    throw InputError::option("--duration", "must be seconds >= 0 (0: until SIGINT/SIGTERM)");
  }

  StressPlan plan;
  plan.device = options.device;
  if (gpu) plan_gpu_copies(options, machine, plan);
  choose_host_node(options, machine, plan);
  if (host) plan_host_load(options, machine, plan);
  check_host_memory(machine, plan);
  if (options.duration_s > 0) plan.duration = std::chrono::duration<double>(options.duration_s);
  return plan;
}

std::string StressPlan::describe() const {
  const std::string node =
      host_node ? "NUMA node " + std::to_string(*host_node) + " (" + host_node_origin + ")"
                : "unbound memory (" + host_node_origin + ")";
  std::vector<std::string> parts;
  if (!directions.empty()) {
    const std::string what = directions.size() == 2
                                 ? "H2D and D2H copies (concurrent, one stream each)"
                             : directions.front() == CopyDirection::kH2D ? "H2D copies"
                                                                         : "D2H copies";
    const auto period_ms = std::chrono::duration<double, std::milli>(schedule.period()).count();
    const auto on_ms = std::chrono::duration<double, std::milli>(schedule.on_time()).count();
    char timing[160];
    if (schedule.duty() >= 1.0) {
      std::snprintf(timing, sizeof timing, "back to back all the time (duty 1)");
    } else {
      std::snprintf(timing, sizeof timing,
                    "back to back for the first %.4g ms of every %.4g ms, idle for the rest "
                    "(duty %.4g)",
                    on_ms, period_ms, schedule.duty());
    }
    parts.push_back(what + " of " + format_bytes(copy_bytes) + " between GPU " +
                    std::to_string(device) + (gpu_name.empty() ? "" : " (" + gpu_name + ")") +
                    " and pinned host memory on " + node + ", " + timing);
  }
  if (host_threads > 0) {
    parts.push_back(
        std::to_string(host_threads) + " host thread" + (host_threads == 1 ? "" : "s") +
        " memcpy-ing between two " + format_bytes(host_bytes) + " buffers each, on " + node +
        (host_cpus.empty() ? std::string() : ", running on CPUs " + format_cpu_list(host_cpus)));
  }
  std::string text = "pathbench stress: ";
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i ? "; " : "") + parts[i];
  if (duration) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "; for %.4g s", duration->count());
    text += buf;
  } else {
    text += "; until SIGINT or SIGTERM";
  }
  return text;
}

}  // namespace pathbench
