#include "placement/thread_placement.hpp"

#include <sched.h>

#include <algorithm>
#include <utility>

#include "core/errors.hpp"

namespace pathbench {

ThreadPlacement::ThreadPlacement(const Machine& machine, std::optional<int> node) {
  if (!node) return;
  const auto* cpus = machine.cpus_of_node(*node);
  if (cpus == nullptr || cpus->empty()) return;
  node_ = node;
  cpus_ = *cpus;
  where_ = "node " + std::to_string(*node);
  scope_.emplace(cpus_);
}

ThreadPlacement::ThreadPlacement(std::vector<int> cpus, std::optional<int> node, std::string where)
    : node_(node), cpus_(std::move(cpus)), where_(std::move(where)) {
  if (!cpus_.empty()) scope_.emplace(cpus_);
}

Check ThreadPlacement::check(const std::string& who) const {
  if (!bound()) {
    return {"thread_placement", true,
            "the NUMA node is unknown or has no usable CPUs: the " + who +
                " was left where the OS puts it",
            nullptr};
  }
  const int cpu = sched_getcpu();
  const bool on_node = std::find(cpus_.begin(), cpus_.end(), cpu) != cpus_.end();
  return {"thread_placement", on_node,
          who + " runs on CPU " + std::to_string(cpu) + " (" + where_ + ")", cpu};
}

int host_node_for(const Machine& machine, int device, bool remote) {
  const auto local = machine.gpu_local_node(device);
  const auto other = machine.gpu_remote_node(device);
  if (!local || (remote && !other)) {
    throw SkipCase("the GPU's local or a remote NUMA node is not available on this machine");
  }
  return remote ? *other : *local;
}

}  // namespace pathbench
