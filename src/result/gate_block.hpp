#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace pathbench {

// A gate block, {"threshold_pct": 5, "metrics": {"round_trip_time": 20}}: the percentages a
// median may move the bad way before the gate calls it a regression. It is written in a scenario,
// travels inside each case of a result and of a baseline, and is checked by this one function
// wherever it is read, so that no reader takes a typo, a string or a negative threshold as "no
// gate" or "always noise":
//   - an object with only the fields threshold_pct and metrics;
//   - threshold_pct: a number in (0, kMaxGatePercent];
//   - metrics: a non-empty object of metric name -> a number in (0, kMaxGatePercent].
// Anything else is an InputError(file, pointer of the offending field). (Which metric names a
// scenario's cases record is the scenario reader's own check.)
inline constexpr double kMaxGatePercent = 1000;
void check_gate_block(const nlohmann::ordered_json& gate, const std::string& file,
                      const std::string& pointer);

}  // namespace pathbench
