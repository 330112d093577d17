#include "measure/host_placement.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "placement/thread_placement.hpp"

namespace pathbench {

const EnumAxis<bool>& host_node_axis() {
  static const EnumAxis<bool> axis{
      "host_node",
      {{"local", false}, {"remote", true}},
      "the case's host memory (request buffers, staging slots, pinned buffers) on the GPU's NUMA "
      "node or on another one, every buffer's pages checked (default local)"};
  return axis;
}

const EnumAxis<ThreadBinding>& threads_axis() {
  static const EnumAxis<ThreadBinding> axis{
      "threads",
      {{"local", ThreadBinding::kLocal},
       {"remote", ThreadBinding::kRemote},
       {"one_cpu", ThreadBinding::kOneCpu},
       {"unbound", ThreadBinding::kUnbound}},
      "the case's host threads bound to the CPUs of the GPU's NUMA node (default), of another "
      "node, all to one CPU of the GPU's node, or unbound (any CPU this process may use); each "
      "thread's CPU is checked"};
  return axis;
}

HostPlacementRequest decode_host_placement(const CaseSpec& spec) {
  return {host_node_axis().decode_or(spec, false),
          threads_axis().decode_or(spec, ThreadBinding::kLocal)};
}

void require_host_placement(Requirements& needs, const HostPlacementRequest& r) {
  if (r.remote_memory) needs.gpu_numa_node(true);
  if (r.threads == ThreadBinding::kRemote) needs.gpu_remote_cpus();
  if (r.threads == ThreadBinding::kOneCpu) needs.gpu_numa_node(false);
}

namespace {

std::vector<int> all_cpus(const Machine& machine) {
  std::vector<int> cpus;
  for (const auto& node : machine.node_cpus) cpus.insert(cpus.end(), node.begin(), node.end());
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

}  // namespace

ResolvedHostPlacement resolve_host_placement(const Machine& machine, int device,
                                             const HostPlacementRequest& r) {
  ResolvedHostPlacement out;
  const std::optional<int> local = machine.gpu_local_node(device);
  out.memory_node = r.remote_memory ? host_node_for(machine, device, true) : local;
  const auto cpus_of = [&](std::optional<int> node) {
    const auto* cpus = node ? machine.cpus_of_node(*node) : nullptr;
    return cpus == nullptr ? std::vector<int>{} : *cpus;
  };
  if (!local && r.threads == ThreadBinding::kOneCpu) {
    throw SkipCase("threads=one_cpu needs the GPU's NUMA node, which this machine does not report");
  }
  switch (r.threads) {
    case ThreadBinding::kLocal:
      out.thread_node = local;
      out.cpus = cpus_of(local);
      if (local) out.where = "node " + std::to_string(*local);
      break;
    case ThreadBinding::kRemote: {
      const auto remote = machine.gpu_remote_cpu_node(device);
      if (!remote) throw SkipCase("threads=remote needs a second NUMA node with CPUs");
      out.thread_node = *remote;
      out.cpus = cpus_of(*remote);
      out.where = "node " + std::to_string(*remote) + " (remote)";
      break;
    }
    case ThreadBinding::kOneCpu: {
      out.thread_node = local;
      const auto cpus = cpus_of(local);
      // The node's last CPU: the first ones tend to take the most interrupts.
      if (!cpus.empty()) out.cpus = {cpus.back()};
      out.where = "CPU " + (cpus.empty() ? std::string("?") : std::to_string(cpus.back())) +
                  " of node " + std::to_string(*local);
      break;
    }
    case ThreadBinding::kUnbound:
      out.cpus = all_cpus(machine);
      out.where = "unbound";
      break;
  }
  return out;
}

}  // namespace pathbench
