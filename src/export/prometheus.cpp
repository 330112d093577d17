#include "export/prometheus.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/text.hpp"
#include "stats/latency_histogram.hpp"
#include "stats/operation_distribution.hpp"

// Naming scheme (Prometheus conventions: https://prometheus.io/docs/practices/naming/).
//
// - Each case metric becomes the gauge pathbench_<family>_<metric>_<unit>, where <unit> is the
//   result's unit rewritten in base units, plural, with "_per_" for a quotient:
//       GB/s  -> _bytes_per_second   (value x 1e9)
//       s     -> _seconds
//       s/GiB -> _seconds_per_byte   (value / 2^30)
//   The value is the median of the case's samples: a dashboard or alert wants one number per
//   series, and the samples stay in the result JSON.
// - A per-operation metric (one with a distribution in the result: serving's h2d_latency and
//   request_latency) is exported as what it is, a latency distribution, instead of that gauge:
//     - the histogram pathbench_<family>_<metric>_seconds: _bucket{le="..."} cumulative counts of
//       every operation of every repetition at fixed bounds (1 us .. 10 s on a 1-2-5 series,
//       then +Inf), _sum (seconds) and _count (operations), from the result's log-linear
//       histogram (LatencyHistogram::cumulative_buckets: a count at a bound leaves out at most
//       the samples of the one fine bucket straddling it, all within 1 % of the bound);
//       histogram_quantile() works on it directly, and the series of several nodes add up;
//     - the gauge pathbench_<family>_<metric>_percentile_seconds{...,percentile="p99"}: the exact
//       percentiles over every operation, one series per percentile p50, p90, p99, p99.9, max
//       (the names of the result file and of the gate). The label is "percentile", not
//       "quantile": Prometheus reserves that one for summaries, and promtool says so (it was
//       "statistic" before the dcgm-exporter label change).
//   The metric's plain gauge is left out: its name is the histogram's, and the exact p50 is in
//   the percentile gauge.
// - The serving family's pinned-pool metrics have the names a serving stack's dashboards use
//   (kServingNames): pathbench_serving_pinned_pool_high_water_bytes,
//   pathbench_serving_pinned_pool_waits, pathbench_serving_pinned_pool_wait_seconds and
//   pathbench_serving_pageable_fallbacks; gauges of the per-repetition values' median like the
//   others (not counters: a value is one repetition's count, not a running total, so no _total).
// - s/GiB becomes seconds per *byte* rather than a "_seconds_per_gibibyte" suffix because bytes
//   are the base unit and a binary prefix in a metric name is exactly what the conventions say to
//   avoid. The values are small (~1e-10) but float64 holds them exactly (dividing by 2^30 only
//   changes the exponent); multiply by 2^30 in PromQL to get s/GiB back. The result's metric for
//   that unit is named "seconds_per_gib", i.e. only its unit, so its name stem becomes "cost":
//       copy alloc_cost seconds_per_gib      -> pathbench_copy_cost_seconds_per_byte
//       host_memory mlock seconds_per_gib    -> pathbench_host_memory_cost_seconds_per_byte
//   The measure axis label tells pinning, registering, first touch and mlock apart, as it does
//   for every family, so one gauge holds one quantity in one unit.
// - Labels: the case's params in the result's order (strings as is, integers in decimal, so
//   bytes="268435456"), then the labels dcgm-exporter puts on its DCGM_FI_* series for the GPU
//   the series belongs to, spelled as it spells them, so that PromQL joins with DCGM metrics
//   work (on(UUID), on(Hostname, gpu)):
//       gpu         the GPU's CUDA index (dcgm-exporter's is NVML's; the two agree unless
//                   CUDA_DEVICE_ORDER or CUDA_VISIBLE_DEVICES reorder the CUDA indexes: join
//                   on UUID to be exact)
//       UUID        "GPU-..." (context gpus[].uuid)
//       pci_bus_id  NVML's spelling, "00000000:3B:00.0" (the context's "0000:3b:00.0" padded and
//                   upper-cased)
//       modelName   "NVIDIA H200" (context gpus[].name)
//   then Hostname (context hostname, dcgm-exporter's spelling) and node_type. dcgm-exporter's
//   `device` ("nvidia0", the device node's minor number) is not written: the result does not
//   record the minor number, and a guessed label would join wrong.
//   The GPU a series belongs to: a case's "device" param; the source GPU of a peer case's
//   "pair"; in a case that measured several GPUs at once (copy gpus=all), the <N> of a
//   per-GPU metric "<metric>_gpu<N>", which is exported as "<metric>" with gpu="<N>" (the
//   index is never in the name); otherwise the run's device (context "device").
//   Every series then carries run_gpu, the run's device (context "device"): one file per GPU,
//   pathbench run --device N, can sit in the same textfile directory without two files
//   exporting the same series (node_exporter rejects that) even where both runs measured the
//   same thing (a host case, a peer pair, gpus=all). It is not a join key.
//   Host-level series carry no GPU labels, only Hostname, node_type and run_gpu:
//     - the host_memory family (it measures the host alone);
//     - in a case with per-GPU metrics, the metric they add up to (renamed
//       aggregate_<metric>: sum() over the GPUs' series must not count it again) and the other
//       metrics (the slowest GPU's time per copy): they are over all the GPUs.
//   A family's series all carry the same label names: a label a series lacks (d2d has no
//   host_memory param, a host series no UUID) is written as an empty value, which Prometheus
//   treats as an absent label, exactly as node_exporter would fill it in.
// - The run's own series (pathbench_info, pathbench_case_status, pathbench_result_*) belong to
//   the run's device. pathbench_info (constant 1, the "info metric" pattern) adds the rest of
//   the context: versions, BIOS, kernel, node type, fingerprint, the GPU's VBIOS and maximum
//   link; join on UUID or on (Hostname, gpu) for them.
// - Every case, whatever its status, gets pathbench_case_status{id,family,status,...} 1.
//   Skipped and failed cases get no value series: a failed case's partial samples are not a
//   measurement to graph, and a value of 0 would read as a real (and terrible) measurement. The
//   skip reason is not a label: free text with numbers in it would churn series between runs.
// - No sample carries a timestamp: the textfile collector rejects them. The run's times are
//   pathbench_result_{start,end}_timestamp_seconds instead.

namespace pathbench {
namespace {

using ojson = nlohmann::ordered_json;

constexpr double kGiBytes = 1024.0 * 1024.0 * 1024.0;

// Go's strconv.ParseFloat reads what to_chars writes; shortest round-trip keeps values exact and
// picks the shorter of fixed and exponent form (55.5 GB/s -> "5.55e+10").
std::string format_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), res.ptr);
}

// The exposition format is UTF-8 and Prometheus's parser rejects a label value that is not.
// Context strings come from other tools' output; replace what is invalid rather than lose the
// whole file.
std::string valid_utf8(std::string_view s) {
  static constexpr std::array<std::uint32_t, 5> kMinCodePoint = {0, 0, 0x80, 0x800, 0x10000};
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80           ? 1
                            : (c >> 5) == 0x6  ? 2
                            : (c >> 4) == 0xE  ? 3
                            : (c >> 3) == 0x1E ? 4
                                               : 0;
    bool ok = len != 0 && i + len <= s.size();
    if (ok && len > 1) {
      std::uint32_t cp = c & (0x7Fu >> len);
      for (std::size_t k = 1; k < len && ok; ++k) {
        const auto cc = static_cast<unsigned char>(s[i + k]);
        ok = (cc & 0xC0) == 0x80;
        cp = (cp << 6) | (cc & 0x3F);
      }
      ok = ok && cp >= kMinCodePoint[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

// Backslash and newline escaped, and the double quote where `quote` (label values; HELP text
// keeps it, format 0.0.4).
std::string escape_text(std::string_view raw, bool quote) {
  std::string out;
  for (const char c : valid_utf8(raw)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_label_value(std::string_view raw) { return escape_text(raw, true); }
std::string escape_help(std::string_view raw) { return escape_text(raw, false); }

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Family, metric and param names are snake_case already; anything else is mapped to '_' so that a
// future name with a dash or dot still yields a valid metric or label name.
std::string sanitize(std::string_view s) {
  std::string out;
  for (const char c : s) out += is_name_char(c) ? c : '_';
  return out;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// A param's label name. Names starting with "__" are reserved to Prometheus, label names cannot
// start with a digit, and the labels pathbench adds itself must not be shadowed by a param; nor
// dcgm-exporter's `device` ("nvidia0"): a copy case's "device" param (a CUDA index, already the
// series's gpu label) is param_device, so that a join with DCGM series never meets two meanings.
std::string param_label_name(std::string_view key) {
  std::string name = sanitize(key);
  if (name.empty() || (name[0] >= '0' && name[0] <= '9') || name.starts_with("__") ||
      name == "gpu" || name == "UUID" || name == "pci_bus_id" || name == "modelName" ||
      name == "Hostname" || name == "device" || name == "node_type" || name == "run_gpu" ||
      name == "le" || name == "percentile" || name == "statistic") {
    name = "param_" + name;
  }
  return name;
}

// A label value from a JSON scalar: strings as is, integers in decimal (bytes="268435456"),
// null as empty (an absent label to Prometheus).
std::string json_label(const ojson& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number_float()) return format_number(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

// A context field as a label value: empty when absent or null (an absent label to Prometheus).
std::string context_label(const Recorded<std::string>& f) { return f.value_or(""); }
std::string context_label(const Recorded<int>& f) {
  return f.value ? std::to_string(*f.value) : std::string();
}

// A PCI bus id as NVML, and so dcgm-exporter's pci_bus_id label, spells it: an 8-digit domain,
// upper-case hex ("0000:3b:00.0", the inventory's canonical form, -> "00000000:3B:00.0"). Text
// that is not a bus id is kept as it is.
std::string dcgm_pci_bus_id(std::string_view id) {
  const auto is_hex = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  };
  const auto colon = id.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 8) return std::string(id);
  const std::string_view rest = id.substr(colon + 1);  // "3b:00.0"
  if (rest.size() != 7 || rest[2] != ':' || rest[5] != '.') return std::string(id);
  for (std::size_t i = 0; i < id.size(); ++i) {
    if (i != colon && i != colon + 3 && i != colon + 6 && !is_hex(id[i])) return std::string(id);
  }
  std::string out(8 - colon, '0');
  out += id;
  for (char& c : out) {
    if (c >= 'a' && c <= 'f') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

// One side of a unit ("GB", "s", "GiB"): its base unit, plural and singular, and the factor to it.
struct UnitPart {
  std::string plural;    // "bytes"
  std::string singular;  // "byte"
  double scale = 1.0;    // base value = value * scale
};

UnitPart unit_part(std::string_view token) {
  struct Known {
    std::string_view token, plural, singular;
    double scale;
  };
  static constexpr std::array<Known, 16> kKnown = {{
      {"s", "seconds", "second", 1.0},
      {"ms", "seconds", "second", 1e-3},
      {"us", "seconds", "second", 1e-6},
      {"\xC2\xB5s", "seconds", "second", 1e-6},  // µs
      {"ns", "seconds", "second", 1e-9},
      {"B", "bytes", "byte", 1.0},
      {"KB", "bytes", "byte", 1e3},
      {"MB", "bytes", "byte", 1e6},
      {"GB", "bytes", "byte", 1e9},
      {"TB", "bytes", "byte", 1e12},
      {"KiB", "bytes", "byte", 1024.0},
      {"MiB", "bytes", "byte", 1024.0 * 1024.0},
      {"GiB", "bytes", "byte", kGiBytes},
      {"TiB", "bytes", "byte", kGiBytes * 1024.0},
      {"%", "ratio", "ratio", 0.01},
      {"bytes", "bytes", "byte", 1.0},
  }};
  for (const auto& k : kKnown) {
    if (k.token == token) return {std::string(k.plural), std::string(k.singular), k.scale};
  }
  // A unit pathbench does not know yet ("faults", "copies") is kept, spelled as a name part.
  const std::string name = lowercase(sanitize(token));
  return {name, name, 1.0};
}

struct BaseUnit {
  std::string suffix;  // "bytes_per_second"; empty for a plain number
  double scale = 1.0;
};

BaseUnit base_unit(std::string_view unit) {
  const auto slash = unit.find('/');
  const std::string_view num = unit.substr(0, slash);
  const UnitPart n = num.empty() || num == "1" ? UnitPart{"", "", 1.0} : unit_part(num);
  if (slash == std::string_view::npos) return {n.plural, n.scale};
  const UnitPart d = unit_part(unit.substr(slash + 1));
  const std::string per = "per_" + d.singular;
  return {n.plural.empty() ? per : n.plural + "_" + per, n.scale / d.scale};
}

// The metric name without a trailing spelling of its own unit ("seconds_per_gib" for s/GiB), so
// that the unit appears once, in base units; a name that was only its unit becomes "cost".
std::string metric_stem(std::string_view metric, std::string_view unit) {
  std::string name = sanitize(metric);
  const auto slash = unit.find('/');
  if (slash != std::string_view::npos) {
    std::string num = lowercase(unit.substr(0, slash));
    if (num == "s") num = "seconds";
    const std::string spelled = num + "_per_" + lowercase(sanitize(unit.substr(slash + 1)));
    if (name == spelled) return "cost";
    if (name.ends_with("_" + spelled)) name.resize(name.size() - spelled.size() - 1);
  }
  return name;
}

// One label of a series as it is added: its name and value, or (slot >= 0) a label filled in
// from the run's context when the exposition is rendered. The run-level slots (node_type,
// Hostname, run_gpu) ignore the value; the GPU slots (gpu, UUID, pci_bus_id, modelName) read it
// as the GPU the series belongs to: a CUDA index, or empty for the run's device.
struct Label {
  std::string name;
  std::string value;
  int slot = -1;
};
using Labels = std::vector<Label>;
enum Slot : std::int8_t {
  kNodeTypeSlot = 0,
  kHostnameSlot,
  kRunGpuSlot,
  kGpuSlot,
  kUuidSlot,
  kPciBusIdSlot,
  kModelNameSlot,
  kSlots
};
constexpr std::array<std::string_view, kSlots> kSlotNames = {
    "node_type", "Hostname", "run_gpu", "gpu", "UUID", "pci_bus_id", "modelName"};

Label slot_label(Slot slot, std::string gpu_ref = {}) {
  return {std::string(kSlotNames[static_cast<std::size_t>(slot)]), std::move(gpu_ref), slot};
}

// dcgm-exporter's label set for a GPU, in its order: gpu, UUID, pci_bus_id, modelName.
void add_gpu_labels(Labels& labels, const std::string& gpu_ref) {
  for (const Slot s : {kGpuSlot, kUuidSlot, kPciBusIdSlot, kModelNameSlot}) {
    labels.push_back(slot_label(s, gpu_ref));
  }
}

// The labels every series ends with: Hostname, node_type and run_gpu (the run's device: one
// file per GPU, pathbench run --device N, shares the textfile directory without duplicate
// series even where two runs measured the same GPU: a peer pair, gpus=all, a host case).
void add_run_labels(Labels& labels) {
  labels.push_back(slot_label(kHostnameSlot));
  labels.push_back(slot_label(kNodeTypeSlot));
  labels.push_back(slot_label(kRunGpuSlot));
}

// The values of the slot labels, escaped, made from the run's context when rendering.
class SlotValues {
 public:
  // `run_gpu`: the run's device (CUDA index) or empty; `gpus`: context.gpus.
  SlotValues(const std::string& node_type, const std::string& hostname, const std::string& run_gpu,
             const std::vector<GpuContext>& gpus)
      : run_{escape_label_value(node_type), escape_label_value(hostname),
             escape_label_value(run_gpu)} {
    for (const auto& g : gpus) {
      if (!g.index.present || !g.index.value) continue;
      by_index_.emplace_back(std::to_string(*g.index.value), gpu_values(g));
    }
    run_device_ = {escape_label_value(run_gpu), "", "", ""};
    for (const auto& [index, values] : by_index_) {
      if (index == run_gpu) run_device_ = values;
    }
    max_size_ = 0;
    for (const auto& v : run_) max_size_ = std::max(max_size_, v.size());
    for (const auto& v : run_device_) max_size_ = std::max(max_size_, v.size());
    for (const auto& [index, values] : by_index_) {
      for (const auto& v : values) max_size_ = std::max(max_size_, v.size());
    }
  }

  // The value of slot `slot` for a series whose GPU reference is `ref` (a view into the
  // family's records: it outlives the call). A CUDA index the context does not list keeps its
  // gpu label and has the others empty.
  std::string_view get(int slot, std::string_view ref) const {
    if (slot < kGpuSlot) return run_[static_cast<std::size_t>(slot)];
    const auto k = static_cast<std::size_t>(slot - kGpuSlot);
    if (ref.empty()) return run_device_[k];
    for (const auto& [index, values] : by_index_) {
      if (index == ref) return values[k];
    }
    return k == 0 ? ref : std::string_view();
  }

  // The longest value a slot label can take (a reference's own text is at most a CUDA index).
  std::size_t max_size() const { return std::max<std::size_t>(max_size_, 16); }

 private:
  using GpuValues = std::array<std::string, 4>;  // gpu, UUID, pci_bus_id, modelName
  static GpuValues gpu_values(const GpuContext& g) {
    return {escape_label_value(context_label(g.index)), escape_label_value(context_label(g.uuid)),
            escape_label_value(dcgm_pci_bus_id(context_label(g.pci_bus_id))),
            escape_label_value(context_label(g.name))};
  }

  std::array<std::string, 3> run_;  // node_type, Hostname, run_gpu
  GpuValues run_device_;
  std::vector<std::pair<std::string, GpuValues>> by_index_;
  std::size_t max_size_ = 0;
};

// The fixed `le` bounds of every exported histogram, seconds: 1 us to 10 s on a 1-2-5 series (a
// small request's copy takes microseconds, a saturated one or a page-fault storm seconds), then
// +Inf. Literals, so that each bound is the same double in every file and every release.
constexpr std::array<double, 22> kLatencyBucketBounds = {
    1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3,
    5e-3, 1e-2, 2e-2, 5e-2, 0.1,  0.2,  0.5,  1.0,  2.0,  5.0,  10.0};

enum class FamilyType { kGauge, kHistogram };

// A metric family: a gauge, or a histogram (series _bucket{le}, _sum, _count per label set). Its
// series are kept compactly, not as label vectors: a million cases make millions of series, and
// their labels are what the exposition's memory goes to. Each series is one record in
// `records_`: label count, then per label its name's index in label_names_, its slot (or -1)
// and its escaped value (a slot label's GPU reference); then a gauge's value, or a histogram's
// bucket count, its (le, cumulative count) pairs, sum and count.
class MetricFamily {
 public:
  MetricFamily(std::string name, std::string help, FamilyType type = FamilyType::kGauge)
      : name_(std::move(name)), help_(std::move(help)), type_(type) {}

  FamilyType type() const { return type_; }

  void add(const Labels& labels, double value) {
    append_labels(labels);
    append(value);
    ++count_;
  }

  // One histogram series: `cumulative` as LatencyHistogram::cumulative_buckets returns it (the
  // le bounds, then +Inf with the total count).
  void add_histogram(const Labels& labels,
                     const std::vector<std::pair<double, std::uint64_t>>& cumulative, double sum,
                     std::uint64_t count) {
    append_labels(labels);
    append(static_cast<std::uint16_t>(cumulative.size()));
    for (const auto& [le, n] : cumulative) {
      append(le);
      append(n);
    }
    append(sum);
    append(count);
    max_lines_ = std::max(max_lines_, cumulative.size() + 2);
    ++count_;
  }

  // Bytes render() writes at most, for one allocation of the whole text.
  std::size_t size_bound(const SlotValues& slots) const {
    // A histogram line also carries a suffix (_bucket) and le="..." (at most 32 bytes).
    std::size_t per_line = name_.size() + 2 + kSlots * slots.max_size() + 34 + 8 + 40;
    for (const auto& n : label_names_) per_line += n.size() + 4;
    return name_.size() * 2 + help_.size() * 2 + 48 + count_ * per_line * max_lines_ +
           records_.size() * max_lines_;
  }

  // Every series is written with all the family's label names, in order (a label it lacks is
  // empty: absent to Prometheus). Two series with one label set would be a duplicate series:
  // node_exporter drops it with a gather error (promtool does not notice), so the first one wins.
  void render(std::string& out, const SlotValues& slots) const {
    out += "# HELP " + name_ + " " + escape_help(help_) + "\n";
    out += "# TYPE " + name_ + (type_ == FamilyType::kGauge ? " gauge\n" : " histogram\n");
    // The series written so far, as spans of `out` (no copy of their text): a gauge's whole
    // line before the value; a histogram's first bucket line before the value (every histogram
    // of a family has the same bounds, so that line stands for its label set).
    struct Span {
      std::size_t at, size;
    };
    const auto text = [&out](const Span& s) { return std::string_view(out).substr(s.at, s.size); };
    const auto hash = [&](const Span& s) { return std::hash<std::string_view>{}(text(s)); };
    const auto equal = [&](const Span& a, const Span& b) { return text(a) == text(b); };
    std::unordered_set<Span, decltype(hash), decltype(equal)> seen(count_, hash, equal);
    std::vector<std::pair<std::uint16_t, std::string_view>> labels;
    std::size_t pos = 0;
    // name + suffix + {labels[,le="..."]}
    const auto series = [&](std::string_view suffix, const std::string* le) {
      out += name_;
      out += suffix;
      if (label_names_.empty() && le == nullptr) return;
      out += '{';
      for (std::size_t i = 0; i < label_names_.size(); ++i) {
        if (i > 0) out += ',';
        out += label_names_[i];
        out += "=\"";
        for (const auto& [name, v] : labels) {
          if (name == i) {
            out += v;
            break;
          }
        }
        out += '"';
      }
      if (le != nullptr) {
        if (!label_names_.empty()) out += ',';
        out += "le=\"";
        out += *le;
        out += '"';
      }
      out += '}';
    };
    for (std::size_t k = 0; k < count_; ++k) {
      const auto n = read<std::uint16_t>(pos);
      labels.clear();
      for (std::uint16_t i = 0; i < n; ++i) {
        const auto name = read<std::uint16_t>(pos);
        const auto slot = read<std::int8_t>(pos);
        const auto size = read<std::uint32_t>(pos);
        const std::string_view stored = std::string_view(records_).substr(pos, size);
        labels.emplace_back(name, slot >= 0 ? slots.get(slot, stored) : stored);
        pos += size;
      }
      const std::size_t at = out.size();
      if (type_ == FamilyType::kGauge) {
        const auto value = read<double>(pos);
        series("", nullptr);
        if (!seen.insert(Span{at, out.size() - at}).second) {
          out.resize(at);
          continue;
        }
        out += ' ';
        out += format_number(value);
        out += '\n';
        continue;
      }
      const auto buckets = read<std::uint16_t>(pos);
      bool duplicate = false;
      for (std::uint16_t b = 0; b < buckets && !duplicate; ++b) {
        const auto le = read<double>(pos);
        const auto cumulative = read<std::uint64_t>(pos);
        const std::string le_text = format_number(le);
        const std::size_t line_at = out.size();
        series("_bucket", &le_text);
        if (b == 0 && !seen.insert(Span{line_at, out.size() - line_at}).second) duplicate = true;
        out += ' ';
        out += std::to_string(cumulative);
        out += '\n';
      }
      if (duplicate) {
        pos += (buckets - 1) * (sizeof(double) + sizeof(std::uint64_t));
      }
      const auto sum = read<double>(pos);
      const auto total = read<std::uint64_t>(pos);
      if (duplicate) {
        out.resize(at);
        continue;
      }
      series("_sum", nullptr);
      out += ' ';
      out += format_number(sum);
      out += '\n';
      series("_count", nullptr);
      out += ' ';
      out += std::to_string(total);
      out += '\n';
    }
  }

 private:
  void append_labels(const Labels& labels) {
    append(static_cast<std::uint16_t>(labels.size()));
    for (const auto& label : labels) {
      append(name_index(label.name));
      append(static_cast<std::int8_t>(label.slot));
      // A slot label keeps its GPU reference (a CUDA index: nothing to escape).
      const std::string escaped = label.slot >= 0 ? label.value : escape_label_value(label.value);
      append(static_cast<std::uint32_t>(escaped.size()));
      records_ += escaped;
    }
  }

  std::uint16_t name_index(const std::string& name) {
    for (std::size_t i = 0; i < label_names_.size(); ++i) {
      if (label_names_[i] == name) return static_cast<std::uint16_t>(i);
    }
    if (label_names_.size() == UINT16_MAX) {
      throw std::length_error("family " + name_ + " has more label names than can be written");
    }
    label_names_.push_back(name);
    return static_cast<std::uint16_t>(label_names_.size() - 1);
  }

  template <typename T>
  void append(T v) {
    records_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <typename T>
  T read(std::size_t& pos) const {
    T v;
    std::memcpy(&v, records_.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }

  std::string name_, help_;
  FamilyType type_;
  std::vector<std::string> label_names_;  // in the order of first use
  std::string records_;
  std::size_t count_ = 0;
  std::size_t max_lines_ = 1;  // lines per series: 1 for a gauge, buckets + 2 for a histogram
};

// "2026-11-29T13:54:07Z" (optionally with fractional seconds, or +00:00) -> Unix seconds.
std::optional<double> parse_utc(const std::string& text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, consumed = 0;
  double s = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &s, &consumed) !=
      6) {
    return std::nullopt;
  }
  const std::string_view zone = std::string_view(text).substr(static_cast<std::size_t>(consumed));
  if (zone != "Z" && zone != "+00:00") return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year{y},
                                        std::chrono::month{static_cast<unsigned>(mo)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s >= 61) return std::nullopt;
  const auto days = std::chrono::sys_days{ymd}.time_since_epoch().count();
  return static_cast<double>(days) * 86400.0 + h * 3600.0 + mi * 60.0 + s;
}

// The CUDA device index the run used: context "device". Results written before "device" was
// recorded lack it; on a machine with exactly one GPU the run can only have used that one, so its
// index is taken; otherwise the label stays empty rather than guessed.
std::string run_device(const RunContext& context) {
  std::string device = context_label(context.device);
  if (device.empty() && context.gpus.size() == 1) device = context_label(context.gpus[0].index);
  return device;
}

// pathbench_info: the run's context on one constant series, with the run's GPU as the value
// series have it (dcgm-exporter's labels) and the GPU's other fields.
MetricFamily info_family(const RunContext& ctx, const std::string& gpu) {
  Labels labels;
  for (const auto& [key, value] : {std::pair{"tool_version", &ctx.tool_version},
                                   {"git_sha", &ctx.git_sha},
                                   {"topology_fingerprint", &ctx.topology_fingerprint},
                                   {"cpu_model", &ctx.cpu_model},
                                   {"kernel", &ctx.kernel},
                                   {"bios_vendor", &ctx.bios_vendor},
                                   {"bios_version", &ctx.bios_version},
                                   {"bios_date", &ctx.bios_date},
                                   {"driver_version", &ctx.driver_version}}) {
    labels.push_back({key, context_label(*value)});
  }
  labels.push_back({"cuda_driver_version", context_label(ctx.cuda_driver_version)});
  labels.push_back({"cuda_runtime_version", context_label(ctx.cuda_runtime_version)});
  labels.push_back({"thp_enabled", context_label(ctx.thp_enabled)});
  labels.push_back({"numa_balancing", context_label(ctx.numa_balancing)});
  add_gpu_labels(labels, "");
  // The GPU the run used (context "device" indexes context "gpus" by its "index" field).
  const GpuContext* dev = nullptr;
  for (const auto& g : ctx.gpus) {
    if (g.index.present && context_label(g.index) == gpu) dev = &g;
  }
  const GpuContext none;  // every label empty
  const GpuContext& d = dev != nullptr ? *dev : none;
  labels.push_back({"gpu_vbios", context_label(d.vbios)});
  labels.push_back({"gpu_pcie_gen_max", context_label(d.pcie_gen_max)});
  labels.push_back({"gpu_pcie_width_max", context_label(d.pcie_width_max)});
  add_run_labels(labels);
  MetricFamily f("pathbench_info",
                 "Context of the pathbench run that wrote this file (node, tool, driver, BIOS, "
                 "GPU); always 1.");
  f.add(labels, 1.0);
  return f;
}

// The serving family's pinned-pool metrics under the names a serving stack's dashboards use
// (the pool, what it counts, the unit): the generic rule would give
// pathbench_serving_pool_waits_acquisitions. Only for the unit the family records them in (a
// changed unit falls back to the generic rule rather than mislabel the value).
struct ServingName {
  std::string_view metric, unit, name, what;
};
constexpr std::array<ServingName, 4> kServingNames = {{
    {"pool_high_water", "B", "pathbench_serving_pinned_pool_high_water_bytes",
     "the most bytes of the pinned staging pool's slots in use at once"},
    {"pool_waits", "acquisitions", "pathbench_serving_pinned_pool_waits",
     "acquisitions of a pinned slot that found none free and waited"},
    {"pool_wait_time", "s", "pathbench_serving_pinned_pool_wait_seconds",
     "the time those acquisitions spent waiting for a pinned slot, in seconds"},
    {"pageable_fallbacks", "copies", "pathbench_serving_pageable_fallbacks",
     "copies made from the pageable buffer because no pinned slot was free (the pool's "
     "fallback)"},
}};

const ServingName* serving_name(std::string_view family, const MetricResult& m) {
  if (family != "serving") return nullptr;
  for (const auto& n : kServingNames) {
    if (n.metric == m.name && n.unit == m.unit) return &n;
  }
  return nullptr;
}

// The end of every value family's HELP text.
constexpr std::string_view kLabelsHelp =
    ". Labels: the case's params, the GPU's as dcgm-exporter writes them (gpu, UUID, pci_bus_id, "
    "modelName; none on host series), Hostname, node_type, run_gpu (the run's device).";

// A per-GPU metric of a case that measured several GPUs at once (copy gpus=all records
// bandwidth_gpu<N>): "<stem>_gpu<N>[_<rest>]" -> {"<stem>[_<rest>]", "<N>"}.
struct PerGpuName {
  std::string name;
  std::string gpu;
};
std::optional<PerGpuName> per_gpu_name(std::string_view metric) {
  for (std::size_t at = metric.find("_gpu"); at != std::string_view::npos;
       at = metric.find("_gpu", at + 1)) {
    std::size_t end = at + 4;
    while (end < metric.size() && metric[end] >= '0' && metric[end] <= '9') ++end;
    // At least one digit, at most nine (a CUDA index), then the end or another name part.
    if (end == at + 4 || end > at + 13 || (end < metric.size() && metric[end] != '_') || at == 0) {
      continue;
    }
    return PerGpuName{concat(metric.substr(0, at), metric.substr(end)),
                      std::string(metric.substr(at + 4, end - at - 4))};
  }
  return std::nullopt;
}

// Families that measure the host alone: their series carry no GPU labels.
bool host_only_family(std::string_view family) { return family == "host_memory"; }

// The GPU a case ran on, as a GPU reference (a CUDA index; empty: the run's device): a "device"
// param, the source of a peer case's "pair" ("0-1"), else the run's device.
std::string case_gpu(const CaseResult& c) {
  if (!c.params.is_object()) return "";
  if (const auto it = c.params.find("device");
      it != c.params.end() && it->is_number_integer() && it->get<std::int64_t>() >= 0) {
    return std::to_string(it->get<std::int64_t>());
  }
  if (const auto it = c.params.find("pair");
      c.family == "peer" && it != c.params.end() && it->is_string()) {
    const std::string pair = it->get<std::string>();
    const auto dash = pair.find('-');
    const std::string source = pair.substr(0, dash);
    if (dash != std::string::npos && !source.empty() &&
        source.find_first_not_of("0123456789") == std::string::npos) {
      return source;
    }
  }
  return "";
}

}  // namespace

// Families in the order they are written: the run-level ones (made at render time), the case
// statuses, then the value families in order of first appearance. Each name once: HELP/TYPE
// appear once and a family's samples are written together, as the format requires.
struct PrometheusExposition::Families {
  MetricFamily status{
      "pathbench_case_status",
      "1 for every case of the run, labelled with its status (ok, skipped, failed); skipped and "
      "failed cases have no value series."};
  std::deque<MetricFamily> values;  // a deque: adding a family moves no other
  std::unordered_map<std::string, MetricFamily*> by_name;
};

PrometheusExposition::PrometheusExposition() : families_(std::make_unique<Families>()) {}
PrometheusExposition::~PrometheusExposition() = default;
PrometheusExposition::PrometheusExposition(PrometheusExposition&&) noexcept = default;
PrometheusExposition& PrometheusExposition::operator=(PrometheusExposition&&) noexcept = default;

void PrometheusExposition::add(const CaseResult& c) {
  Labels status_labels = {
      {"id", c.id}, {"family", c.family}, {"status", std::string(to_string(c.status))}};
  add_gpu_labels(status_labels, "");
  add_run_labels(status_labels);
  families_->status.add(status_labels, 1.0);
  if (c.status != CaseStatus::kOk) return;
  Labels params;
  if (c.params.is_object()) {
    for (const auto& [key, value] : c.params.items()) {
      params.push_back({param_label_name(key), json_label(value)});
    }
  }
  // The labels of a series of this case: its GPU's, or (gpu null) none, for a measurement of
  // the host or of several GPUs at once.
  const auto labels_for = [&](const std::optional<std::string>& gpu) {
    Labels labels = params;
    if (gpu) add_gpu_labels(labels, *gpu);
    add_run_labels(labels);
    return labels;
  };
  // A case with per-GPU metrics measured several GPUs at once: each of those is its GPU's, the
  // metric they add up to is renamed aggregate_<metric>, and the case's other metrics (the
  // slowest GPU's time per copy) belong to no one GPU.
  std::unordered_set<std::string> per_gpu_stems;
  for (const auto& m : c.metrics) {
    if (const auto p = per_gpu_name(m.name)) per_gpu_stems.insert(p->name);
  }
  const std::optional<std::string> case_gpu_ref =
      host_only_family(c.family) || !per_gpu_stems.empty() ? std::nullopt
                                                           : std::optional(case_gpu(c));
  // The family of `name`, made on first use. Nothing for a name that is one of the run-level
  // families', or that a family of the other type already took (the first one wins, as for
  // series): either would make the file invalid.
  const auto family = [&](const std::string& name, FamilyType type,
                          const std::string& help) -> MetricFamily* {
    const bool fixed = name == "pathbench_info" || name == "pathbench_case_status" ||
                       name.starts_with("pathbench_result_");
    if (fixed) return nullptr;  // no family is named so
    auto it = families_->by_name.find(name);
    if (it == families_->by_name.end()) {
      MetricFamily& added = families_->values.emplace_back(name, help, type);
      it = families_->by_name.emplace(name, &added).first;
    }
    return it->second->type() == type ? it->second : nullptr;
  };
  for (const auto& original : c.metrics) {
    if (original.stats.n == 0) continue;  // nothing was measured: no median to report
    std::optional<std::string> gpu = case_gpu_ref;
    const MetricResult* metric = &original;
    MetricResult renamed;
    if (const auto p = per_gpu_name(original.name)) {
      renamed = original;
      renamed.name = p->name;
      gpu = p->gpu;
      metric = &renamed;
    } else if (per_gpu_stems.contains(original.name)) {
      renamed = original;
      renamed.name = concat("aggregate_", original.name);
      metric = &renamed;
    }
    const MetricResult& m = *metric;
    const Labels labels = labels_for(gpu);
    const std::string what = concat("pathbench ", c.family, " ", m.name);
    const std::string better_text = concat(to_string(m.better), " is better");
    if (m.distribution) {
      // Per-operation latencies: a histogram under the metric's name in seconds (whatever the
      // result's unit: durations are recorded in seconds), and its exact percentiles. The
      // samples' median has no gauge of its own: its name is the histogram's, and p50 is there.
      std::string name = concat("pathbench_", sanitize(c.family), "_", metric_stem(m.name, m.unit));
      if (!name.ends_with("_seconds")) name += "_seconds";
      const LatencyHistogram& h = m.distribution->histogram;
      if (MetricFamily* f = family(
              name, FamilyType::kHistogram,
              concat(what,
                     ": every operation's duration over all repetitions, in seconds (cumulative "
                     "counts of the result's histogram at 1-2-5 bounds from 1 us to 10 s); ",
                     better_text, kLabelsHelp))) {
        f->add_histogram(labels, h.cumulative_buckets(kLatencyBucketBounds), h.sum(), h.count());
      }
      const std::string percentile_name =
          concat(name.substr(0, name.size() - 8), "_percentile_seconds");
      if (MetricFamily* f = family(
              percentile_name, FamilyType::kGauge,
              concat(what,
                     ": exact percentiles over every operation of every repetition, in seconds; "
                     "label percentile: p50, p90, p99, p99.9, max (as in the result file and the "
                     "gate); ",
                     better_text, kLabelsHelp))) {
        Labels with_percentile = labels;
        with_percentile.push_back({"percentile", ""});
        for (std::size_t k = 0; k < kDistributionStatistics.size(); ++k) {
          with_percentile.back().value = std::string(kDistributionStatistics[k].name);
          f->add(with_percentile, m.distribution->overall[k]);
        }
      }
      continue;
    }
    const BaseUnit unit = base_unit(m.unit);
    std::string name;
    std::string help;
    if (const ServingName* serving = serving_name(c.family, m)) {
      name = std::string(serving->name);
      help = concat(what, ": ", serving->what, ", per repetition (the median over repetitions); ",
                    better_text, kLabelsHelp);
    } else {
      name = concat("pathbench_", sanitize(c.family), "_", metric_stem(m.name, m.unit));
      // The unit once: a metric already named for its unit ("ratio" in %) is not suffixed again.
      if (!unit.suffix.empty() && !name.ends_with("_" + unit.suffix)) {
        name += "_" + unit.suffix;
      }
      std::string in_unit = "a plain number";
      if (!unit.suffix.empty()) {
        in_unit = unit.suffix;
        std::replace(in_unit.begin(), in_unit.end(), '_', ' ');
      }
      help = concat(what, ": median of the case's samples, in ", in_unit,
                    m.unit.empty() ? std::string() : concat(" (result unit ", m.unit, ")"), "; ",
                    better_text, kLabelsHelp);
    }
    if (MetricFamily* f = family(name, FamilyType::kGauge, help)) {
      f->add(labels, m.stats.median * unit.scale);
    }
  }
}

std::string PrometheusExposition::render(const Result& run, const RunContext& context) const {
  const std::string gpu = run_device(context);
  const SlotValues slots(context_label(context.node_type), context_label(context.hostname), gpu,
                         context.gpus);
  // The run's own series belong to the run's GPU (none on a machine without one).
  Labels run_labels;
  add_gpu_labels(run_labels, "");
  add_run_labels(run_labels);
  std::vector<MetricFamily> head;
  head.push_back(info_family(context, gpu));
  if (const auto t = parse_utc(run.start_time)) {
    head.emplace_back("pathbench_result_start_timestamp_seconds",
                      "Unix time at which the pathbench run started.");
    head.back().add(run_labels, *t);
  }
  if (const auto t = parse_utc(run.end_time)) {
    head.emplace_back("pathbench_result_end_timestamp_seconds",
                      "Unix time at which the pathbench run ended (or last wrote its result).");
    head.back().add(run_labels, *t);
  }
  // An interrupted or killed run exports what it finished; a dashboard must not read its
  // missing cases as gone from the fleet.
  head.emplace_back("pathbench_result_complete",
                    "1 when the run finished every planned case, 0 when it was interrupted or "
                    "killed (its cases are the finished ones).");
  head.back().add(run_labels, run.complete ? 1.0 : 0.0);

  // One allocation for the whole text: a large result's exposition is hundreds of MB.
  std::size_t bound = families_->status.size_bound(slots);
  for (const auto& f : head) bound += f.size_bound(slots);
  for (const auto& f : families_->values) bound += f.size_bound(slots);
  std::string out;
  out.reserve(bound);
  for (const auto& f : head) f.render(out, slots);
  families_->status.render(out, slots);
  for (const auto& f : families_->values) f.render(out, slots);
  return out;
}

std::string prometheus_exposition(const Result& result) {
  PrometheusExposition exposition;
  for (const auto& c : result.cases) exposition.add(c);
  return exposition.render(result, RunContext::from_json(result.context, "result"));
}

}  // namespace pathbench
