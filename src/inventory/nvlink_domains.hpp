#pragma once

// Which GPUs can form a tensor-parallel group whose all-reduce never crosses the host: every
// pair joined by NVLink (directly, or through NVSwitch, which the driver reports as NVLink
// between every pair). An 8-GPU NVSwitch box is one domain; two 4-GPU NVLink islands are two; a
// PCIe-only box has none larger than one GPU.

#include <optional>
#include <string>
#include <vector>

#include "inventory/topology.hpp"

namespace pathbench {

// The groups of `gpus` connected by NVLink links (connected components), each sorted, by their
// first GPU. A GPU without NVLink is a group of its own.
std::vector<std::vector<int>> nvlink_domains(const std::vector<int>& gpus,
                                             const std::vector<GpuLink>& links);

// Why `group` is not one NVLink domain: the first pair (by index) with no NVLink link between
// them and what joins them instead ("GPUs 3 and 4: SYS (through the CPUs' interconnect), not
// NVLink"); nothing when every pair has NVLink. A group of fewer than two GPUs has no problem.
std::optional<std::string> tp_group_problem(const std::vector<int>& group,
                                            const std::vector<GpuLink>& links);

}  // namespace pathbench
