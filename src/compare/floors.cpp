#include "compare/floors.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <string>

#include "inventory/nvlink.hpp"

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

Link link_of(const GpuContext& gpu) {
  return {gpu.pcie_gen_current.value, gpu.pcie_gen_max.value, gpu.pcie_width_current.value,
          gpu.pcie_width_max.value};
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

std::string string_param(const ojson& params, const char* key) {
  if (!params.is_object()) return {};
  const auto it = params.find(key);
  return it != params.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool bytes_at_least(const ojson& params, std::uint64_t min_bytes) {
  const auto bytes = params.find("bytes");
  // Parsed results hold bytes as unsigned, results built in code often as signed integers.
  if (bytes == params.end()) return false;
  if (bytes->is_number_unsigned()) return bytes->get<std::uint64_t>() >= min_bytes;
  if (bytes->is_number_integer()) {
    const auto b = bytes->get<std::int64_t>();
    return b >= 0 && static_cast<std::uint64_t>(b) >= min_bytes;
  }
  return false;
}

bool held_to_floor(const CaseResult& c, const FloorOptions& options) {
  if (c.status != CaseStatus::kOk) return false;
  const ojson& p = c.params;
  if (!p.is_object()) return false;
  if (string_param(p, "measure") != "bandwidth") return false;
  const std::string direction = string_param(p, "direction");
  if (direction != "h2d" && direction != "d2h") return false;
  // Pageable copies are staged through a driver bounce buffer and never reach the link rate;
  // holding them to the floor would only produce noise.
  const std::string host = string_param(p, "host_memory");
  if (host != "pinned" && !host.starts_with("registered-")) return false;
  return bytes_at_least(p, options.min_bytes);
}

const MetricResult* metric_named(const CaseResult& c, std::string_view name) {
  for (const auto& m : c.metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

bool has_values(const MetricResult* m) {
  return m != nullptr && (m->stats.n > 0 || !m->samples.empty());
}

double median_of(const MetricResult& m) {
  return m.stats.n > 0 ? m.stats.median : summarize(m.samples).median;
}

// "bandwidth_gpu3" -> 3.
std::optional<int> per_gpu_metric_index(std::string_view name) {
  constexpr std::string_view kPrefix = "bandwidth_gpu";
  if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(kPrefix.size());
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || end != digits.data() + digits.size() || value < 0) return std::nullopt;
  return value;
}

// One copy's median against the PCIe floor of GPU `gpu_index`. `trained_up` collects the GPUs
// whose copies beat the link state the inventory read.
FloorCheck pcie_copy_check(const RunContext& context, std::string id, std::string metric,
                           int gpu_index, double measured, const FloorOptions& options,
                           std::set<int>& trained_up) {
  FloorCheck f;
  f.id = std::move(id);
  f.gpu = gpu_index;
  f.metric = std::move(metric);
  f.measured_gb_per_s = measured;

  const GpuContext* gpu = context.gpu(f.gpu);
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
    return f;
  }

  f.link_raw_gb_per_s = *raw;
  f.floor_gb_per_s = options.fraction * *raw;
  f.fraction = f.measured_gb_per_s / *raw;
  const std::string against = "the " + fixed(*raw, 2) + " GB/s raw rate of " +
                              (idle_downshift ? link_text(link.gen_max, link.width_max)
                                              : link_text(link.gen_current, link.width_current)) +
                              " (floor " + percent(options.fraction) + " = " +
                              fixed(f.floor_gb_per_s, 2) + " GB/s)";
  const std::string who =
      f.metric == "bandwidth" ? std::string() : "GPU " + std::to_string(f.gpu) + ": ";
  if (f.measured_gb_per_s >= f.floor_gb_per_s) {
    f.verdict = FloorVerdict::kPass;
    f.detail = who + "median " + fixed(f.measured_gb_per_s, 2) + " GB/s is " + percent(f.fraction) +
               " of " + against;
  } else {
    f.verdict = FloorVerdict::kBelowFloor;
    f.detail = who + "median " + fixed(f.measured_gb_per_s, 2) + " GB/s is only " +
               percent(f.fraction) + " of " + against;
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
// NVLink floors of peer cases

// "3-1" -> {3, 1}.
std::optional<std::pair<int, int>> parse_pair(std::string_view text) {
  const auto dash = text.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  auto number = [](std::string_view digits) -> std::optional<int> {
    int value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || value < 0) {
      return std::nullopt;
    }
    return value;
  };
  const auto s = number(text.substr(0, dash));
  const auto d = number(text.substr(dash + 1));
  if (!s || !d || *s == *d) return std::nullopt;
  return std::pair{*s, *d};
}

// The link label of the pair in the context's link map ("" when it has none).
std::string context_link_param(const RunContext& context, int from, int to) {
  for (const auto& l : context.links) {
    if (l.from.value == from && l.to.value == to) return l.param.value_or("");
  }
  return {};
}

struct NvlinkFloorCase {
  int src = 0, dst = 0;
  int nvlinks = 0;
  bool bidirectional = false;
};

std::optional<NvlinkFloorCase> nvlink_floor_case(const CaseResult& c, const RunContext& context,
                                                 const FloorOptions& options) {
  if (c.status != CaseStatus::kOk || c.family != "peer") return std::nullopt;
  const ojson& p = c.params;
  if (!p.is_object()) return std::nullopt;
  // The peer family's optional axes default to measure=bandwidth and direction=uni.
  const std::string measure = p.contains("measure") ? string_param(p, "measure") : "bandwidth";
  if (measure != "bandwidth") return std::nullopt;
  const std::string method = string_param(p, "method");
  // The floor measures the link, so it takes the copy engines' path only. no_peer_access and
  // two_hop go through the host by design; sm_read's rate depends on the copy kernel's occupancy
  // as much as on the link (two H200s over NV18, both directions at once: sm_read 334 GB/s per
  // direction, 74 % of the link, where cudaMemcpyPeerAsync moved 390): the regression gate
  // watches it against baselines instead.
  if (method != "peer_access") return std::nullopt;
  const std::string direction = p.contains("direction") ? string_param(p, "direction") : "uni";
  if (direction != "uni" && direction != "bi") return std::nullopt;
  if (!bytes_at_least(p, options.min_bytes)) return std::nullopt;
  const auto pair = parse_pair(string_param(p, "pair"));
  if (!pair) return std::nullopt;
  std::string link = string_param(p, "link");
  if (link.empty()) link = context_link_param(context, pair->first, pair->second);
  const auto nvlinks = nvlink_count(link);
  if (!nvlinks) return std::nullopt;
  return NvlinkFloorCase{pair->first, pair->second, *nvlinks, direction == "bi"};
}

std::optional<NvlinkRate> gpu_nvlink_rate(const GpuContext* gpu) {
  if (gpu == nullptr) return std::nullopt;
  const std::optional<double> driver =
      gpu->nvlink ? gpu->nvlink->link_gb_per_s.value : std::nullopt;
  return nvlink_link_rate(driver, gpu->compute_capability.value_or(""));
}

// The fastest PCIe link of the pair at its maximum state (GPUs idle their links down): a copy no
// faster than this did not need NVLink.
std::optional<double> pair_pcie_raw(const RunContext& context, int a, int b) {
  std::optional<double> best;
  for (int index : {a, b}) {
    const GpuContext* gpu = context.gpu(index);
    if (gpu == nullptr) continue;
    const Link l = link_of(*gpu);
    const auto gen = l.gen_max ? l.gen_max : l.gen_current;
    const auto width = l.width_max ? l.width_max : l.width_current;
    if (!gen || !width) continue;
    if (const auto raw = pcie_raw_gb_per_s(*gen, *width); raw && (!best || *raw > *best)) {
      best = raw;
    }
  }
  return best;
}

void add_nvlink_checks(const CaseResult& c, const NvlinkFloorCase& k, const RunContext& context,
                       const FloorOptions& options, std::vector<FloorCheck>& checks) {
  // The pair's rate: the lower of its two GPUs' (each from the driver or the table).
  std::optional<NvlinkRate> rate;
  std::string rate_source;
  for (int index : {k.src, k.dst}) {
    const auto r = gpu_nvlink_rate(context.gpu(index));
    if (r && (!rate || r->gb_per_s < rate->gb_per_s)) {
      rate = r;
      rate_source = "GPU " + std::to_string(index) + ": " + r->source;
    }
  }
  std::string active_note;
  for (int index : {k.src, k.dst}) {
    const GpuContext* gpu = context.gpu(index);
    if (gpu == nullptr || !gpu->nvlink) continue;
    const auto active = gpu->nvlink->active_links.value;
    if (active && *active < k.nvlinks) {
      active_note += "; GPU " + std::to_string(index) + " reports only " + std::to_string(*active) +
                     " active NVLinks";
    }
  }
  const std::optional<double> pcie = pair_pcie_raw(context, k.src, k.dst);

  struct Direction {
    const char* metric;
    int from, to;
  };
  std::vector<Direction> directions;
  if (k.bidirectional) {
    directions = {{"bandwidth_fwd", k.src, k.dst}, {"bandwidth_rev", k.dst, k.src}};
  } else {
    directions = {{"bandwidth", k.src, k.dst}};
  }
  for (const auto& d : directions) {
    const MetricResult* m = metric_named(c, d.metric);
    if (!has_values(m)) continue;
    FloorCheck f;
    f.id = k.bidirectional ? c.id + "#" + d.metric : c.id;
    f.gpu = d.from;
    f.metric = d.metric;
    f.measured_gb_per_s = median_of(*m);
    const std::string path = "GPU " + std::to_string(d.from) + " -> GPU " + std::to_string(d.to) +
                             " over " + std::to_string(k.nvlinks) + " NVLinks" +
                             (k.bidirectional ? " (both directions at once)" : "");
    const std::string median = "median " + fixed(f.measured_gb_per_s, 2) + " GB/s";
    std::string against;
    if (rate) {
      f.link_raw_gb_per_s = k.nvlinks * rate->gb_per_s;
      f.floor_gb_per_s = options.nvlink_fraction * f.link_raw_gb_per_s;
      f.fraction = f.measured_gb_per_s / f.link_raw_gb_per_s;
      against = fixed(f.link_raw_gb_per_s, 2) + " GB/s (" + std::to_string(k.nvlinks) + " x " +
                fixed(rate->gb_per_s, 2) + " GB/s per link and direction; " + rate_source +
                "; floor " + percent(options.nvlink_fraction) + " = " + fixed(f.floor_gb_per_s, 2) +
                " GB/s)";
    }
    if (pcie && f.measured_gb_per_s <= *pcie) {
      f.verdict = FloorVerdict::kNvlinkAtPcieSpeed;
      f.detail = path + ": " + median + " measures at PCIe speed (at or below the " +
                 fixed(*pcie, 2) + " GB/s raw rate of the pair's PCIe link" +
                 (rate ? "; the NVLinks carry " + against : "") +
                 "): the copy did not go over NVLink (peer access off, links down, or the "
                 "fabric manager not running?)" +
                 active_note;
    } else if (!rate) {
      f.verdict = FloorVerdict::kUnknownLink;
      f.detail = path +
                 ": no per-link NVLink rate (nvidia-smi nvlink -s gave none and the "
                 "compute capability is not in the NVLink table): " +
                 median + " cannot be held to a floor" + active_note;
    } else if (f.measured_gb_per_s >= f.floor_gb_per_s) {
      f.verdict = FloorVerdict::kPass;
      f.detail =
          path + ": " + median + " is " + percent(f.fraction) + " of " + against + active_note;
    } else {
      f.verdict = FloorVerdict::kBelowFloor;
      f.detail =
          path + ": " + median + " is only " + percent(f.fraction) + " of " + against + active_note;
    }
    checks.push_back(std::move(f));
  }
}

}  // namespace

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
    case FloorVerdict::kNvlinkAtPcieSpeed:
      return "nvlink_at_pcie_speed";
  }
  return "unknown";
}

bool is_failure(FloorVerdict v) {
  return v == FloorVerdict::kBelowFloor || v == FloorVerdict::kLinkDegraded ||
         v == FloorVerdict::kNvlinkAtPcieSpeed;
}

std::vector<FloorCheck> check_floors(const Result& result, const FloorOptions& options) {
  return check_floors(RunContext::from_json(result.context, "result"), result.cases, options);
}

std::vector<FloorCheck> check_floors(const RunContext& context,
                                     const std::vector<CaseResult>& cases,
                                     const FloorOptions& options) {
  if (!std::isfinite(options.fraction) || options.fraction <= 0 || options.fraction > 1) {
    throw std::invalid_argument("floor fraction must be in (0, 1], got " +
                                std::to_string(options.fraction));
  }
  if (!std::isfinite(options.nvlink_fraction) || options.nvlink_fraction <= 0 ||
      options.nvlink_fraction > 1) {
    throw std::invalid_argument("NVLink floor fraction must be in (0, 1], got " +
                                std::to_string(options.nvlink_fraction));
  }
  std::vector<FloorCheck> checks;

  // One link entry per GPU in the inventory, used or not: a degraded link anywhere on the node
  // matters to the rollout gate.
  for (std::size_t i = 0; i < context.gpus.size(); ++i) {
    checks.push_back(link_check(static_cast<int>(i), link_of(context.gpus[i])));
  }

  // The run's device (pathbench run --device); a case's own "device" param wins when present.
  const int run_device = context.device.value.value_or(0);
  std::set<int> trained_up;  // GPUs whose copies beat the link state the inventory read

  for (const auto& c : cases) {
    if (const auto nvlink = nvlink_floor_case(c, context, options)) {
      add_nvlink_checks(c, *nvlink, context, options, checks);
      continue;
    }
    if (!held_to_floor(c, options)) continue;
    if (string_param(c.params, "gpus") == "all") {
      // Copies to every GPU at once: each GPU's share against its own link (GPUs behind one
      // switch or root port fall below it); the sum is no single link's rate.
      for (const auto& m : c.metrics) {
        const auto index = per_gpu_metric_index(m.name);
        if (!index || !has_values(&m)) continue;
        checks.push_back(pcie_copy_check(context, c.id + "#" + m.name, m.name, *index, median_of(m),
                                         options, trained_up));
      }
      continue;
    }
    const MetricResult* bw = metric_named(c, "bandwidth");
    if (!has_values(bw)) continue;
    const int gpu = optional_int(c.params, "device").value_or(run_device);
    checks.push_back(
        pcie_copy_check(context, c.id, "bandwidth", gpu, median_of(*bw), options, trained_up));
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
  j["metric"] = f.metric;
  j["verdict"] = to_string(f.verdict);
  j["measured_gb_per_s"] = f.measured_gb_per_s;
  j["floor_gb_per_s"] = f.floor_gb_per_s;
  j["link_raw_gb_per_s"] = f.link_raw_gb_per_s;
  j["fraction"] = f.fraction;
  j["detail"] = f.detail;
  return j;
}

}  // namespace pathbench
