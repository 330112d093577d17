#include "compare/floors.hpp"

#include <set>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <string>

namespace pathbench {
namespace {

using ojson = nlohmann::ordered_json;

// The PCIe link of one GPU as the context records it. Any field may be missing (null): the
// inventory could not read it, e.g. nvidia-smi absent.
struct Link {
  std::optional<int> gen_current, gen_max, width_current, width_max;
};

std::optional<int> optional_int(const ojson& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

Link link_of(const ojson& gpu) {
  return {optional_int(gpu, "pcie_gen_current"), optional_int(gpu, "pcie_gen_max"),
          optional_int(gpu, "pcie_width_current"), optional_int(gpu, "pcie_width_max")};
}

std::string link_text(std::optional<int> gen, std::optional<int> width) {
  return "Gen" + (gen ? std::to_string(*gen) : std::string("?")) + " x" +
         (width ? std::to_string(*width) : std::string("?"));
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string percent(double fraction) { return fixed(100.0 * fraction, 1) + " %"; }

const ojson* gpu_at(const ojson& context, int index) {
  const auto it = context.find("gpus");
  if (it == context.end() || !it->is_array() || index < 0 ||
      static_cast<std::size_t>(index) >= it->size()) {
    return nullptr;
  }
  return &(*it)[static_cast<std::size_t>(index)];
}

// The link check of one GPU. A link below its maximum is reported even when the copies on it
// pass their (current-link) floors: a Gen4 link on a Gen5 slot halves the node's best case.
FloorCheck link_check(int index, const Link& link) {
  FloorCheck f;
  f.id = "gpu" + std::to_string(index) + "/pcie_link";
  f.gpu = index;
  const std::string current = link_text(link.gen_current, link.width_current);
  const std::string maximum = link_text(link.gen_max, link.width_max);
  const std::optional<double> raw = link.gen_current && link.width_current
                                        ? pcie_raw_gb_per_s(*link.gen_current, *link.width_current)
                                        : std::nullopt;
  if (raw) f.link_raw_gb_per_s = *raw;

  if (!raw) {
    f.verdict = FloorVerdict::kUnknownLink;
    f.detail = "GPU " + std::to_string(index) + ": current PCIe link " + current +
               " unknown or not a known generation; no floor can be derived";
  } else if (!link.gen_max || !link.width_max) {
    // Without the maximum a degraded link cannot be told from a healthy one; never pass it
    // silently.
    f.verdict = FloorVerdict::kUnknownLink;
    f.detail = "GPU " + std::to_string(index) + ": PCIe link " + current + " (" + fixed(*raw, 2) +
               " GB/s raw), maximum " + maximum +
               " unknown: cannot tell whether the link is degraded";
  } else if (*link.gen_current < *link.gen_max || *link.width_current < *link.width_max) {
    f.verdict = FloorVerdict::kLinkDegraded;
    f.detail = "GPU " + std::to_string(index) + ": PCIe link runs at " + current + " (" +
               fixed(*raw, 2) + " GB/s raw), below its maximum " + maximum +
               "; copy floors use the current link";
  } else {
    f.verdict = FloorVerdict::kPass;
    f.detail = "GPU " + std::to_string(index) + ": PCIe link at its maximum " + current + " (" +
               fixed(*raw, 2) + " GB/s raw)";
  }
  return f;
}

bool held_to_floor(const CaseResult& c, const FloorOptions& options) {
  if (c.status != CaseStatus::kOk) return false;
  const ojson& p = c.params;
  if (!p.is_object()) return false;
  auto string_param = [&](const char* key) -> std::string {
    const auto it = p.find(key);
    return it != p.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (string_param("measure") != "bandwidth") return false;
  const std::string direction = string_param("direction");
  if (direction != "h2d" && direction != "d2h") return false;
  // Pageable copies are staged through a driver bounce buffer and never reach the link rate;
  // holding them to the floor would only produce noise.
  const std::string host = string_param("host_memory");
  if (host != "pinned" && !host.starts_with("registered-")) return false;
  const auto bytes = p.find("bytes");
  // Parsed results hold bytes as unsigned, results built in code often as signed integers.
  if (bytes == p.end()) return false;
  if (bytes->is_number_unsigned()) return bytes->get<std::uint64_t>() >= options.min_bytes;
  if (bytes->is_number_integer()) {
    const auto b = bytes->get<std::int64_t>();
    return b >= 0 && static_cast<std::uint64_t>(b) >= options.min_bytes;
  }
  return false;
}

const MetricResult* bandwidth_metric(const CaseResult& c) {
  for (const auto& m : c.metrics) {
    if (m.name == "bandwidth") return &m;
  }
  return nullptr;
}

}  // namespace

std::optional<double> pcie_raw_gb_per_s(int generation, int width) {
  struct Rate {
    double gt_per_s;  // transfers per second per lane, in 1e9
    double encoding;  // payload bits per transferred bit
  };
  // Gen1/2 use 8b/10b, Gen3-5 128b/130b; Gen6+ (PAM4, FLIT mode) is counted without overhead.
  static constexpr Rate kRates[] = {
      {2.5, 8.0 / 10.0},     {5.0, 8.0 / 10.0}, {8.0, 128.0 / 130.0}, {16.0, 128.0 / 130.0},
      {32.0, 128.0 / 130.0}, {64.0, 1.0},       {128.0, 1.0}};
  constexpr int kKnown = static_cast<int>(std::size(kRates));
  if (generation < 1 || generation > kKnown || width <= 0) return std::nullopt;
  const Rate& r = kRates[generation - 1];
  return r.gt_per_s * width * r.encoding / 8.0;
}

std::string_view to_string(FloorVerdict v) {
  switch (v) {
    case FloorVerdict::kPass:
      return "pass";
    case FloorVerdict::kBelowFloor:
      return "below_floor";
    case FloorVerdict::kLinkDegraded:
      return "link_degraded";
    case FloorVerdict::kUnknownLink:
      return "unknown_link";
  }
  return "unknown";
}

std::vector<FloorCheck> check_floors(const Result& result, const FloorOptions& options) {
  if (!std::isfinite(options.fraction) || options.fraction <= 0 || options.fraction > 1) {
    throw std::invalid_argument("floor fraction must be in (0, 1], got " +
                                std::to_string(options.fraction));
  }
  const ojson& context = result.context;
  std::vector<FloorCheck> checks;

  // One link entry per GPU in the inventory, used or not: a degraded link anywhere on the node
  // matters to the rollout gate.
  if (const auto it = context.find("gpus"); it != context.end() && it->is_array()) {
    for (std::size_t i = 0; i < it->size(); ++i) {
      checks.push_back(link_check(static_cast<int>(i), link_of((*it)[i])));
    }
  }

  // The run's device (pathbench run --device); a case's own "device" param wins when present.
  const int run_device = optional_int(context, "device").value_or(0);
  std::set<int> trained_up;  // GPUs whose copies beat the link state the inventory read

  for (const auto& c : result.cases) {
    if (!held_to_floor(c, options)) continue;
    const MetricResult* bw = bandwidth_metric(c);
    if (bw == nullptr || (bw->stats.n == 0 && bw->samples.empty())) continue;

    FloorCheck f;
    f.id = c.id;
    f.gpu = optional_int(c.params, "device").value_or(run_device);
    f.measured_gb_per_s = bw->stats.n > 0 ? bw->stats.median : summarize(bw->samples).median;

    const ojson* gpu = gpu_at(context, f.gpu);
    const Link link = gpu ? link_of(*gpu) : Link{};
    std::optional<double> raw = link.gen_current && link.width_current
                                    ? pcie_raw_gb_per_s(*link.gen_current, *link.width_current)
                                    : std::nullopt;
    const std::optional<double> raw_max = link.gen_max && link.width_max
                                              ? pcie_raw_gb_per_s(*link.gen_max, *link.width_max)
                                              : std::nullopt;
    // GPUs drop their link to a lower generation when idle, and the inventory is read before
    // the copies start: a copy faster than the reported link can carry proves the link was up at
    // its maximum while it ran.
    const bool idle_downshift = raw && raw_max && f.measured_gb_per_s > *raw && *raw_max > *raw;
    if (idle_downshift) {
      raw = raw_max;
      trained_up.insert(f.gpu);
    }
    if (!raw) {
      f.verdict = FloorVerdict::kUnknownLink;
      f.detail = gpu == nullptr
                     ? "GPU " + std::to_string(f.gpu) + " is not in the result's context"
                     : "PCIe link of GPU " + std::to_string(f.gpu) + " (" +
                           link_text(link.gen_current, link.width_current) + ") unknown: median " +
                           fixed(f.measured_gb_per_s, 2) + " GB/s cannot be held to a floor";
      checks.push_back(std::move(f));
      continue;
    }

    f.link_raw_gb_per_s = *raw;
    f.floor_gb_per_s = options.fraction * *raw;
    f.fraction = f.measured_gb_per_s / *raw;
    const std::string against = "the " + fixed(*raw, 2) + " GB/s raw rate of " +
                                (idle_downshift ? link_text(link.gen_max, link.width_max)
                                                : link_text(link.gen_current, link.width_current)) +
                                " (floor " + percent(options.fraction) + " = " +
                                fixed(f.floor_gb_per_s, 2) + " GB/s)";
    if (f.measured_gb_per_s >= f.floor_gb_per_s) {
      f.verdict = FloorVerdict::kPass;
      f.detail = "median " + fixed(f.measured_gb_per_s, 2) + " GB/s is " + percent(f.fraction) +
                 " of " + against;
    } else {
      f.verdict = FloorVerdict::kBelowFloor;
      f.detail = "median " + fixed(f.measured_gb_per_s, 2) + " GB/s is only " +
                 percent(f.fraction) + " of " + against;
    }
    checks.push_back(std::move(f));
  }

  for (auto& f : checks) {
    if (f.verdict == FloorVerdict::kLinkDegraded && trained_up.contains(f.gpu)) {
      f.verdict = FloorVerdict::kPass;
      f.detail +=
          "; but copies on this GPU ran faster than that link carries, so the link was "
          "at a higher state while they ran (idle power saving when the inventory was "
          "read)";
    }
  }
  return checks;
}

nlohmann::ordered_json to_json(const FloorCheck& f) {
  ojson j;
  j["id"] = f.id;
  j["gpu"] = f.gpu;
  j["verdict"] = to_string(f.verdict);
  j["measured_gb_per_s"] = f.measured_gb_per_s;
  j["floor_gb_per_s"] = f.floor_gb_per_s;
  j["link_raw_gb_per_s"] = f.link_raw_gb_per_s;
  j["fraction"] = f.fraction;
  j["detail"] = f.detail;
  return j;
}

}  // namespace pathbench
