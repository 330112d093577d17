#pragma once

// Two-GPU machines whose link maps come from recorded `nvidia-smi topo -m` output
// (tests/fixtures/nvidia-smi) and a driver answer for peer access, as the inventory builds them:
// the GPU-pair rules of a family judged on what real machines report.

#include <string>

#include "fake_nvidia_smi.hpp"
#include "inventory/topology.hpp"
#include "test_machines.hpp"

namespace pathbench::testing {

// Two H200s (h200_machine(2)) linked as `topo_fixture` records, the driver answering
// `peer_access` for both directions.
inline Machine recorded_two_gpu_machine(const std::string& topo_fixture, bool peer_access) {
  Machine m = h200_machine(2);
  P2PMatrix p2p;
  for (int from = 0; from < 2; ++from) {
    p2p.push_back(PeerInfo{from, 1 - from, peer_access, peer_access ? 0 : 1, peer_access});
  }
  m.links = build_link_map(parse_nvidia_smi_topo(read_nvidia_smi_fixture(topo_fixture)), p2p);
  return m;
}

// The second validation machine: 18 NVLinks between two H200s (topo_2gpu_nv18.txt).
inline Machine recorded_nvlink_pair() {
  return recorded_two_gpu_machine("topo_2gpu_nv18.txt", true);
}

// Two GPUs behind one PCIe switch (topo_2gpu_pcie.txt) whose driver refuses peer access, as in a
// virtual machine without P2P: the pair is host-staged.
inline Machine recorded_pcie_pair_without_p2p() {
  return recorded_two_gpu_machine("topo_2gpu_pcie.txt", false);
}

}  // namespace pathbench::testing
