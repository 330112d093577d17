// noise_reasons (declared in inventory/environment.hpp): whether a result's own environment
// samples say it was measured on a busy or throttled node.

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "inventory/environment.hpp"

namespace pathbench {
namespace {

// Result-file pointer of the environment: messages name the place in the file a user opens.
constexpr const char* kPointer = "/context/environment";

std::string percent(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f %%", value);
  return buffer;
}

std::string gpu_label(const GpuEnvironment& gpu) {
  return "GPU " + std::to_string(gpu.index) +
         (gpu.pci_bus_id.empty() ? std::string() : " (" + gpu.pci_bus_id + ")");
}

std::optional<double> steal_pct(const nlohmann::json& environment,
                                const std::optional<EnvironmentSample>& start,
                                const std::optional<EnvironmentSample>& end) {
  if (auto share = environment.find("cpu_share"); share != environment.end() && !share->is_null()) {
    if (!share->is_object()) {
      throw std::invalid_argument(std::string("environment JSON ") + kPointer +
                                  "/cpu_share: expected an object, got " + share->dump());
    }
    if (auto steal = share->find("steal_pct"); steal != share->end() && !steal->is_null()) {
      if (!steal->is_number()) {
        throw std::invalid_argument(std::string("environment JSON ") + kPointer +
                                    "/cpu_share/steal_pct: expected a number, got " +
                                    steal->dump());
      }
      return steal->get<double>();
    }
  }
  // A result whose writer left the share out still has both counters.
  if (start && start->cpu && end && end->cpu) {
    if (auto share = cpu_share(*start->cpu, *end->cpu)) return share->steal_pct;
  }
  return std::nullopt;
}

std::string throttle_detail(const GpuEnvironment& gpu) {
  std::string detail;
  if (gpu.temperature_c) detail += "temperature " + std::to_string(*gpu.temperature_c) + " C";
  if (gpu.power_w) {
    char buffer[64];
    if (gpu.power_limit_w) {
      std::snprintf(buffer, sizeof buffer, "power %.0f W of %.0f W", *gpu.power_w,
                    *gpu.power_limit_w);
    } else {
      std::snprintf(buffer, sizeof buffer, "power %.0f W", *gpu.power_w);
    }
    detail += (detail.empty() ? "" : ", ") + std::string(buffer);
  }
  return detail.empty() ? detail : " (" + detail + ")";
}

}  // namespace

bool is_throttle_noise(std::string_view reason) {
  return reason == "hw_slowdown" || reason == "hw_thermal_slowdown" ||
         reason == "sw_thermal_slowdown" || reason == "hw_power_brake_slowdown";
}

std::vector<std::string> noise_reasons(const nlohmann::json& context,
                                       const NoiseThresholds& thresholds) {
  if (!context.is_object()) return {};
  const auto environment = context.find("environment");
  if (environment == context.end() || environment->is_null()) return {};
  if (!environment->is_object()) {
    throw std::invalid_argument(std::string("environment JSON ") + kPointer +
                                ": expected an object, got " + environment->dump());
  }

  // The samples in time order, with the words that place them in a sentence.
  std::vector<std::pair<const char*, EnvironmentSample>> samples;
  std::optional<EnvironmentSample> start, end;
  for (const char* key : {"start", "end"}) {
    auto it = environment->find(key);
    if (it == environment->end() || it->is_null()) continue;
    auto sample = environment_sample_from_json(*it, std::string(kPointer) + "/" + key);
    (std::string(key) == "start" ? start : end) = sample;
    samples.emplace_back(std::string(key) == "start" ? "the start" : "the end", std::move(sample));
  }

  std::vector<std::string> reasons;
  if (auto steal = steal_pct(*environment, start, end);
      steal && *steal > thresholds.max_steal_pct) {
    reasons.push_back("CPU steal was " + percent(*steal) +
                      " of all CPU time over the run (more than " +
                      percent(thresholds.max_steal_pct) +
                      "): the hypervisor gave this node's CPUs to other guests while it measured");
  }

  // Other processes: one sentence per GPU and process, saying in which samples it was seen.
  struct Seen {
    const GpuEnvironment* gpu;
    const GpuProcess* process;
    std::vector<const char*> when;
  };
  std::map<std::tuple<int, std::string, unsigned>, Seen> others;
  std::vector<std::tuple<int, std::string, unsigned>> order;
  for (const auto& [when, sample] : samples) {
    for (const auto& gpu : sample.gpus) {
      if (!gpu.processes) continue;
      for (const auto& process : *gpu.processes) {
        if (process.self) continue;
        const auto key = std::make_tuple(gpu.index, gpu.pci_bus_id, process.pid);
        auto [it, inserted] = others.try_emplace(key, Seen{&gpu, &process, {}});
        if (inserted) order.push_back(key);
        it->second.when.push_back(when);
      }
    }
  }
  for (const auto& key : order) {
    const Seen& seen = others.at(key);
    std::string when = seen.when.front();
    if (seen.when.size() > 1) when += " and " + std::string(seen.when.back());
    std::string who =
        "pid " + std::to_string(seen.process->pid) + " (" +
        (seen.process->name.empty() ? std::string("name unknown") : seen.process->name);
    if (seen.process->used_memory_bytes) {
      who += ", " + format_bytes(*seen.process->used_memory_bytes) + " of GPU memory";
    }
    who += ")";
    reasons.push_back(gpu_label(*seen.gpu) + " had another compute process at " + when +
                      " of the run: " + who);
  }

  for (const auto& [when, sample] : samples) {
    for (const auto& gpu : sample.gpus) {
      std::vector<std::string> names = gpu.clock_event_reasons;
      if (names.empty() && gpu.clock_event_reasons_mask) {
        names = decode_clock_event_reasons(*gpu.clock_event_reasons_mask);
      }
      std::string throttles;
      for (const auto& name : names) {
        if (!is_throttle_noise(name)) continue;
        throttles += (throttles.empty() ? "" : ", ") + name;
      }
      if (throttles.empty()) continue;
      reasons.push_back(gpu_label(gpu) + " was throttled at " + when + " of the run: " + throttles +
                        throttle_detail(gpu));
    }
  }
  return reasons;
}

}  // namespace pathbench
