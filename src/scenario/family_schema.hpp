#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inventory/machine.hpp"
#include "inventory/requirements.hpp"
#include "scenario/axis_schema.hpp"
#include "scenario/scenario.hpp"

namespace pathbench {

struct MemoryNeeds {
  std::uint64_t host_bytes = 0;
  std::uint64_t device_bytes = 0;
};

// What scenario validation and expansion know of a family (one file in bench/): its name, axes
// and their rules, and what a case asks of the machine. The measuring side (measure/family.hpp)
// adds how a case is prepared. Families are stateless.
class FamilySchema {
 public:
  virtual ~FamilySchema() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual const std::vector<AxisSchema>& axes() const = 0;
  // Axes a scenario must give (the rest are optional).
  virtual std::vector<std::string> required_axes() const = 0;
  // A combination of axis values that makes no sense (bad input, exit 3): why, else nothing.
  virtual std::optional<std::string> invalid_combination(const CaseSpec& /*spec*/) const {
    return std::nullopt;
  }
  // What is wrong with a case built without the scenario parser (tests, tools): a missing
  // required axis, a value the axis schema refuses, then invalid_combination. Nothing: it is a
  // case of this family.
  std::optional<std::string> case_error(const CaseSpec& spec) const;
  virtual MemoryNeeds memory_needs(const CaseSpec& spec) const = 0;
  // What the case needs from the machine (GPUs, NUMA nodes, huge pages, limits). The core judges
  // it before prepare, with one wording for every family.
  virtual Requirements requirements(const CaseSpec& spec) const = 0;
  // Why the case cannot run on this machine (and how to fix it), else nothing.
  std::optional<std::string> skip_reason(const CaseSpec& spec, const Machine& machine,
                                         int device) const {
    return requirements(spec).unmet(machine, device);
  }
  // The family's metrics come from a CUPTI timeline of every sample: the run lets NVTX ranges
  // reach CUPTI (overlap). The CLI asks this instead of a family's name.
  virtual bool measures_on_timeline() const { return false; }
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
  // Those of them timed operation by operation (MetricSpec::per_operation): the only ones with
  // percentiles a gate entry's "statistic" can name. Default: none.
  virtual std::vector<std::string> per_operation_metric_names(const CaseSpec& /*spec*/) const {
    return {};
  }
};

// The families a scenario file may name.
class FamilyCatalog {
 public:
  virtual ~FamilyCatalog() = default;
  virtual const FamilySchema* find_schema(std::string_view name) const = 0;
  virtual std::vector<std::string> names() const = 0;
};

}  // namespace pathbench
