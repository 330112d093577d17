#pragma once

// One case of a family run the way the case runner runs it, for the families' GPU tests: the
// skip reason, prepare (a SkipCase skips), warm-up, then (measure, verify) per sample, then the
// checks and the timing method, read after the samples as the runner reads them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "inventory/machine.hpp"
#include "measure/family.hpp"
#include "scenario/scenario.hpp"

namespace pathbench {

struct MeasuredCase {
  std::vector<MetricSpec> metrics;
  std::vector<Sample> samples;
  std::vector<Check> checks;
  TimingMethod method = TimingMethod::kCudaEventsLatched;
  std::uint64_t operations_per_sample = 0;
  // Why the case did not run here, empty when it ran: the family's skip_reason, or the SkipCase
  // prepare() threw (then skipped_in_prepare).
  std::string skipped;
  bool skipped_in_prepare = false;

  // Median of one metric over the samples (0 without samples); a failure when there is no such
  // metric.
  double median(const std::string& name) const {
    const auto it = std::find_if(metrics.begin(), metrics.end(),
                                 [&](const MetricSpec& m) { return m.name == name; });
    if (it == metrics.end()) {
      ADD_FAILURE() << "no metric " << name;
      return 0;
    }
    const auto i = static_cast<std::size_t>(it - metrics.begin());
    std::vector<double> v;
    for (const auto& s : samples) v.push_back(s.values.at(i));
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }

  // The check of that name, else null.
  const Check* check(const std::string& name) const {
    for (const auto& c : checks) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }
};

inline MeasuredCase run_family_case(const Family& family, const CaseSpec& spec,
                                    const Machine& machine, int samples = 3, int device = 0) {
  // A reason that names nothing still marks the case skipped.
  auto skip_text = [](const std::string& why) {
    return why.empty() ? std::string("skipped without a reason") : why;
  };
  MeasuredCase m;
  EXPECT_FALSE(family.invalid_combination(spec).has_value()) << spec.id;
  if (auto why = family.skip_reason(spec, machine, device)) {
    m.skipped = skip_text(*why);
    return m;
  }
  std::unique_ptr<CaseBench> bench;
  try {
    bench = family.prepare(spec, machine, device);
    m.metrics = bench->metrics();
    bench->warm_up(spec.min_time);
    m.operations_per_sample = bench->operations_per_sample();
  } catch (const SkipCase& e) {
    m = MeasuredCase{};
    m.skipped = skip_text(e.what());
    m.skipped_in_prepare = true;
    return m;
  }
  for (int i = 0; i < samples; ++i) {
    m.samples.push_back(bench->measure());
    EXPECT_EQ(m.samples.back().values.size(), m.metrics.size()) << spec.id;
    bench->verify();  // throws CaseFailure on a wrong destination
  }
  m.checks = bench->checks();
  // After the samples: a timer that found the latch blocked switched to the host clock.
  m.method = bench->timing_method();
  return m;
}

}  // namespace pathbench
