#include "measure/link_check.hpp"

#include <string>

namespace pathbench {

Check peer_link_check(const Machine& machine, int s, int d, bool s_to_d, bool d_to_s) {
  const GpuLink* link = machine.link(s, d);
  std::string detail = "cudaDeviceCanAccessPeer: " + std::to_string(s) + "->" + std::to_string(d) +
                       " " + (s_to_d ? "yes" : "no") + ", " + std::to_string(d) + "->" +
                       std::to_string(s) + " " + (d_to_s ? "yes" : "no");
  if (link == nullptr) {
    detail += "; the inventory has no link for this pair (nvidia-smi topo -m unavailable)";
    return {"peer_link", true, detail, "unknown"};
  }
  detail += "; inventory link " + link_type_name(link->type) +
            (link->nvlinks > 0 ? " x" + std::to_string(link->nvlinks) : "") + " (" + link->param +
            ")";
  bool consistent = true;
  if (link->peer_access) {
    consistent = *link->peer_access == s_to_d;
    detail += consistent ? ", which agrees"
                         : ", which recorded peer access " +
                               std::string(*link->peer_access ? "yes" : "no");
  }
  return {"peer_link", consistent, detail, link->param};
}

}  // namespace pathbench
