#pragma once

#include <string>

#include "inventory/inventory.hpp"

namespace pathbench {

// The text the fingerprint hashes: one line per topology-relevant fact, in a fixed order, so two
// nodes with the same hardware layout agree however the job was bound or clocked. Exposed so a
// mismatch can be explained by diffing two of them.
std::string topology_canonical_text(const Inventory& inventory);

// Lower-case hex SHA-256 of topology_canonical_text.
std::string topology_fingerprint(const Inventory& inventory);

// "NVIDIA H200 x1 / PCIe Gen5 x16 / 1 NUMA"; without GPUs "cpu-only / AMD EPYC 9654 / 2 NUMA".
std::string derive_node_type(const Inventory& inventory);

// Whether this process runs next to GPU 0: sets cpuset_aligned_with_gpu (empty without GPUs or
// when GPU 0's locality is unknown) and pushes a sentence to `warnings` for a cpuset that is not
// within GPU 0's local CPUs, for Mems_allowed not limited to its node, and for unknown locality.
void check_gpu_alignment(Inventory& inventory);

// "Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz" -> "Intel Xeon Platinum 8480+".
std::string condense_cpu_model(const std::string& model);

}  // namespace pathbench
