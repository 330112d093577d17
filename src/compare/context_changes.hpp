#pragma once

#include <string>
#include <vector>

#include "result/run_context.hpp"

namespace pathbench {

// One difference between the baseline's and the result's node context that matters for an
// upgrade gate (driver, firmware, kernel, memory settings, link state ...).
struct ContextChange {
  std::string field;  // JSON-pointer-like path into the context: "driver_version", "gpus/0/vbios"
  std::string label;  // what a CI engineer reads: "driver", "GPU 0 VBIOS"
  std::string baseline;  // value as text ("" when absent)
  std::string result;
  std::string note;          // why the change may be harmless, e.g. an idle GPU's lowered link
  std::string text() const;  // "driver 570.86.15 → 580.159.04"
};

// The changes, in the order of importance for an upgrade gate: driver and CUDA first, then
// firmware, kernel, host memory settings, GPUs (matched by PCI bus id, else index).
std::vector<ContextChange> context_changes(const RunContext& baseline, const RunContext& result);

}  // namespace pathbench
