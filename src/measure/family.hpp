#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/machine.hpp"
#include "scenario/axis_schema.hpp"
#include "scenario/scenario.hpp"
#include "timeline/timeline.hpp"

namespace pathbench {

enum class Better { kHigher, kLower };
enum class TimingMethod {
  kCudaEventsLatched,  // CUDA events around a block of operations released by a latch kernel
  kHostSteadyClock,    // std::chrono::steady_clock around calls the host performs synchronously
};
std::string_view to_string(Better b);
std::string_view to_string(TimingMethod m);

struct MetricSpec {
  std::string name;  // "bandwidth", "time_per_copy", ...
  std::string unit;  // "GB/s", "s", "s/GiB"
  Better better = Better::kHigher;
};

// The names of `metrics`, in order (for Family::metric_names).
inline std::vector<std::string> metric_names_of(const std::vector<MetricSpec>& metrics) {
  std::vector<std::string> names;
  names.reserve(metrics.size());
  for (const auto& m : metrics) names.push_back(m.name);
  return names;
}

// Something the case verified instead of assuming (placement, page backing, memory kind, copy
// correctness). A check that did not pass fails the case.
struct Check {
  std::string name;
  bool passed = true;
  std::string detail;
  nlohmann::ordered_json value;  // the measured quantity, when there is one
};

// One repetition's values, one per metric in metrics() order. `seconds` is the timed duration
// handed to Google Benchmark as manual time.
struct Sample {
  double seconds = 0.0;
  std::vector<double> values;
};

// A prepared case: owns its buffers and streams (RAII) for the duration of the case.
class CaseBench {
 public:
  virtual ~CaseBench() = default;
  virtual TimingMethod timing_method() const = 0;
  virtual std::vector<MetricSpec> metrics() const = 0;
  // Not counted. Also sizes the block of operations per sample so a sample lasts min_time.
  virtual void warm_up(double min_time) = 0;
  // One timed sample. Throws CaseFailure when the measurement cannot be trusted.
  virtual Sample measure() = 0;
  // After each sample: checks that the operations really did what they claim; throws CaseFailure.
  virtual void verify() = 0;
  // Verification results to record (placement, page backing, memory kind, ...).
  virtual std::vector<Check> checks() const = 0;
  // Operations in one sample and bytes they moved (for the result and NVTX payloads).
  virtual std::uint64_t operations_per_sample() const = 0;
  virtual std::uint64_t bytes_per_sample() const = 0;
  // The timeline a case captured itself during its last sample (a family whose metrics come
  // from the timeline), else null.
  virtual const Timeline* captured_timeline() const { return nullptr; }
  // What a timeline of one sample proves or refutes about the case (memory kinds the driver
  // saw, copies issued per sample), for `run --timeline`.
  virtual std::vector<Check> timeline_checks(const Timeline&, const TimelineAnalysis&) const {
    return {};
  }
};

struct MemoryNeeds {
  std::uint64_t host_bytes = 0;
  std::uint64_t device_bytes = 0;
};

// A scenario family (one file in bench/). Families are stateless; a case's state lives in the
// CaseBench it prepares.
class Family {
 public:
  virtual ~Family() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual const std::vector<AxisSchema>& axes() const = 0;
  // Axes a scenario must give (the rest are optional).
  virtual std::vector<std::string> required_axes() const = 0;
  // A combination of axis values that makes no sense (bad input, exit 3): why, else nothing.
  virtual std::optional<std::string> invalid_combination(const CaseSpec& spec) const = 0;
  virtual MemoryNeeds memory_needs(const CaseSpec& spec) const = 0;
  // Why the case cannot run on this machine (and how to fix it), else nothing.
  virtual std::optional<std::string> skip_reason(const CaseSpec& spec, const Machine& machine,
                                                 int device) const = 0;
  // Parameters the machine decides rather than the scenario file (the peer family's `link`, from
  // the topology of the case's GPU pair), added to spec.params after expansion; the caller
  // recomputes spec.id from the params, so they are part of the stable case id. Default: none.
  virtual void derive_params(CaseSpec& /*spec*/, const Machine& /*machine*/) const {}
  // The names of the metrics a case with these parameters records — the names of its prepared
  // bench's metrics(), from the same source — known without preparing it, so a scenario's
  // `gate.metrics` can be checked before anything runs. A part of a name that the machine decides
  // is a placeholder in angle brackets that matches any run of letters and digits:
  // "bandwidth_gpu<N>" (one metric per GPU), "time_per_page_<page>" ("4k", "2m"). Nothing: the
  // family does not say, and gate metric names are not checked against it.
  virtual std::optional<std::vector<std::string>> metric_names(const CaseSpec& /*spec*/) const {
    return std::nullopt;
  }
  // Allocates and places everything the case needs. May throw SkipCase or CaseFailure.
  virtual std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                             int device) const = 0;
};

class FamilyRegistry {
 public:
  void add(std::unique_ptr<Family> family);
  const Family* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, std::unique_ptr<Family>, std::less<>> families_;
};

// Defined in bench/families.cpp: every built-in family.
FamilyRegistry builtin_families();

}  // namespace pathbench
