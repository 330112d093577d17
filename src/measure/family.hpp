#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/machine.hpp"
#include "result/vocabulary.hpp"
#include "scenario/family_schema.hpp"
#include "scenario/scenario.hpp"
#include "timeline/timeline.hpp"

namespace pathbench {

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
  // How the samples were timed, in words, read after the samples: the core records it in every
  // case's `timing` check. Empty: the timing method's name says it all.
  virtual std::string timing_detail() const { return {}; }
};

// A scenario family: its schema, and how a case of it is prepared. A case's state lives in the
// CaseBench it prepares.
class Family : public FamilySchema {
 public:
  // Allocates and places everything the case needs. May throw SkipCase or CaseFailure.
  virtual std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                             int device) const = 0;
};

// What a family states once and never computes: its name, what it measures, its axes and the
// ones a scenario must give.
struct FamilyDeclaration {
  std::string_view name, description;
  std::vector<AxisSchema> axes;
  std::vector<std::string> required_axes;
};

// A family whose fixed facts are its declaration; it supplies the rules and the bench.
class DeclaredFamily : public Family {
 public:
  explicit DeclaredFamily(FamilyDeclaration d) : d_(std::move(d)) {}
  std::string_view name() const final { return d_.name; }
  std::string_view description() const final { return d_.description; }
  const std::vector<AxisSchema>& axes() const final { return d_.axes; }
  std::vector<std::string> required_axes() const final { return d_.required_axes; }

 private:
  FamilyDeclaration d_;
};

class FamilyRegistry final : public FamilyCatalog {
 public:
  void add(std::unique_ptr<Family> family);
  const Family* find(std::string_view name) const;
  const FamilySchema* find_schema(std::string_view name) const override { return find(name); }
  std::vector<std::string> names() const override;

 private:
  std::map<std::string, std::unique_ptr<Family>, std::less<>> families_;
};

}  // namespace pathbench
