#pragma once

#include <cstdint>
#include <optional>

#include "inventory/machine.hpp"

namespace pathbench::testing {

// `gpus` H200s on one NUMA node of four CPUs with 64 GiB available, memlock unlimited and THP on
// madvise; every GPU selected, as `run` selects them without --devices. No GPU links.
inline Machine h200_machine(int gpus = 1) {
  Machine m;
  m.numa_nodes = {0};
  m.node_cpus = {{0, 1, 2, 3}};
  m.mem_available_bytes = 64ull << 30;
  m.memlock_limit_bytes = UINT64_MAX;
  m.thp_enabled = "madvise";
  for (int i = 0; i < gpus; ++i) {
    MachineGpu g;
    g.index = i;
    g.name = "NVIDIA H200";
    g.numa_node = 0;
    g.memory_bytes = 141ull << 30;
    m.gpus.push_back(g);
    m.selected_gpus.push_back(i);
  }
  return m;
}

// The link from GPU `from` to GPU `to` as the inventory records it (`access`: the driver's
// cudaDeviceCanAccessPeer answer, when known).
inline GpuLink make_link(int from, int to, LinkType type, int nvlinks, std::optional<bool> access) {
  GpuLink l;
  l.from = from;
  l.to = to;
  l.type = type;
  l.nvlinks = nvlinks;
  l.peer_access = access;
  l.param = link_param(type, nvlinks, access);
  return l;
}

}  // namespace pathbench::testing
