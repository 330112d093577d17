#include "inventory/machine.hpp"

#include <algorithm>

namespace pathbench {

const std::vector<int>* Machine::cpus_of_node(int node) const {
  for (std::size_t i = 0; i < numa_nodes.size() && i < node_cpus.size(); ++i) {
    if (numa_nodes[i] == node) return &node_cpus[i];
  }
  return nullptr;
}

std::optional<std::string> Machine::gpu_unavailable_reason(int device) const {
  if (!has_gpu()) {
    return cuda_unavailable_reason.empty() ? "no CUDA device on this machine"
                                           : cuda_unavailable_reason;
  }
  if (device < 0 || device >= static_cast<int>(gpus.size())) {
    return "GPU " + std::to_string(device) + " does not exist (this machine has " +
           std::to_string(gpus.size()) + ")";
  }
  return std::nullopt;
}

std::optional<int> Machine::gpu_local_node(int gpu_index) const {
  auto gpu = std::find_if(gpus.begin(), gpus.end(),
                          [&](const MachineGpu& g) { return g.index == gpu_index; });
  if (gpu == gpus.end()) return std::nullopt;
  // hwloc's answer even when that node is not usable by this process: the caller must then skip
  // with "local node not allowed", not pretend the GPU's node is unknown.
  if (gpu->numa_node) return gpu->numa_node;
  if (numa_nodes.size() == 1) return numa_nodes.front();
  return std::nullopt;
}

std::optional<int> Machine::gpu_remote_node(int gpu_index) const {
  auto local = gpu_local_node(gpu_index);
  if (!local) return std::nullopt;  // "remote" means nothing without a known local node
  std::optional<int> memory_only;
  for (std::size_t i = 0; i < numa_nodes.size(); ++i) {
    if (numa_nodes[i] == *local) continue;
    // Prefer a node with CPUs, so the copying thread can be bound next to the remote buffer.
    if (i < node_cpus.size() && !node_cpus[i].empty()) return numa_nodes[i];
    if (!memory_only) memory_only = numa_nodes[i];
  }
  return memory_only;
}

std::optional<int> Machine::gpu_remote_cpu_node(int gpu_index) const {
  const auto remote = gpu_remote_node(gpu_index);
  // gpu_remote_node prefers a node with CPUs: it has none only when no other node has any.
  if (!remote) return std::nullopt;
  const auto* cpus = cpus_of_node(*remote);
  if (cpus == nullptr || cpus->empty()) return std::nullopt;
  return remote;
}

const GpuLink* Machine::link(int from, int to) const {
  for (const auto& l : links) {
    if (l.from == from && l.to == to) return &l;
  }
  return nullptr;
}

}  // namespace pathbench
