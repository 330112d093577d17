#pragma once

#include <cstdint>

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

}  // namespace pathbench::testing
