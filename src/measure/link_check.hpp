#pragma once

#include "inventory/machine.hpp"
#include "result/vocabulary.hpp"

namespace pathbench {

// "peer_link": the driver's answer to whether GPU `s` may access GPU `d`'s memory and back
// (cudaDeviceCanAccessPeer, `s_to_d` and `d_to_s`) against the inventory's link map, which names
// the pair's link in the case id: passes unless the inventory recorded a different answer.
Check peer_link_check(const Machine& machine, int s, int d, bool s_to_d, bool d_to_s);

}  // namespace pathbench
