#pragma once

// Where a request-level case's host side lives, as two scenario axes the families share:
// `host_node` (its host memory on the GPU's NUMA node or on another one, the pages of each
// buffer checked) and `threads` (its host threads bound to the GPU's node, to another node, all
// to one CPU, or left to the scheduler). Decoded once, judged against the machine by
// Requirements, and resolved into a memory node and a CPU set when the case is prepared.

#include <optional>
#include <string>
#include <vector>

#include "inventory/machine.hpp"
#include "inventory/requirements.hpp"
#include "scenario/typed_axis.hpp"

namespace pathbench {

enum class ThreadBinding {
  kLocal,    // the CPUs of the GPU's NUMA node (what a tuned server does)
  kRemote,   // the CPUs of another node: every touch of local memory crosses the interconnect
  kOneCpu,   // every host thread of the case on one CPU of the GPU's node (a tight cpuset)
  kUnbound,  // any CPU this process may use: where the scheduler puts them
};

struct HostPlacementRequest {
  bool remote_memory = false;
  ThreadBinding threads = ThreadBinding::kLocal;
};

const EnumAxis<bool>& host_node_axis();
const EnumAxis<ThreadBinding>& threads_axis();

// Both axes absent: local memory, local threads.
HostPlacementRequest decode_host_placement(const CaseSpec& spec);

// What the machine must have beyond the defaults (which run anywhere, unbound where the GPU's node
// is unknown): a second node with memory for remote memory, a second node with CPUs this process
// may use for remote threads, the GPU's node for one_cpu.
void require_host_placement(Requirements& needs, const HostPlacementRequest& r);

// A request resolved on this machine.
struct ResolvedHostPlacement {
  std::optional<int> memory_node;  // none: the GPU's node is unknown (first touch decides)
  std::optional<int> thread_node;  // none: unbound, across nodes
  std::vector<int> cpus;           // where the case's host threads may run; empty: not known
  std::string where;               // "node 0", "node 1 (remote)", "CPU 15 of node 0", "unbound"
};

// Throws SkipCase when the machine cannot place it (requirements() should have skipped first).
ResolvedHostPlacement resolve_host_placement(const Machine& machine, int device,
                                             const HostPlacementRequest& r);

}  // namespace pathbench
