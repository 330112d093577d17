#include "inventory/nvlink_domains.hpp"

#include <algorithm>
#include <map>

namespace pathbench {

namespace {

const GpuLink* find_link(const std::vector<GpuLink>& links, int from, int to) {
  for (const auto& l : links) {
    if ((l.from == from && l.to == to) || (l.from == to && l.to == from)) return &l;
  }
  return nullptr;
}

bool nvlinked(const std::vector<GpuLink>& links, int a, int b) {
  const GpuLink* l = find_link(links, a, b);
  return l != nullptr && l->type == LinkType::kNvlink;
}

std::string path_text(const GpuLink* l) {
  if (l == nullptr) return "no link recorded";
  switch (l->type) {
    case LinkType::kPix:
      return "PIX (one PCIe switch)";
    case LinkType::kPxb:
      return "PXB (several PCIe switches)";
    case LinkType::kPhb:
      return "PHB (a PCIe host bridge)";
    case LinkType::kNode:
      return "NODE (host bridges of one NUMA node)";
    case LinkType::kSys:
      return "SYS (through the CPUs' interconnect)";
    default:
      return link_type_name(l->type);
  }
}

}  // namespace

std::vector<std::vector<int>> nvlink_domains(const std::vector<int>& gpus,
                                             const std::vector<GpuLink>& links) {
  std::vector<int> sorted = gpus;
  std::sort(sorted.begin(), sorted.end());
  std::map<int, int> domain_of;  // GPU -> its domain's first GPU
  std::vector<std::vector<int>> out;
  for (const int gpu : sorted) {
    if (domain_of.count(gpu) > 0) continue;
    std::vector<int> group = {gpu};
    domain_of[gpu] = gpu;
    for (std::size_t i = 0; i < group.size(); ++i) {
      for (const int other : sorted) {
        if (domain_of.count(other) == 0 && nvlinked(links, group[i], other)) {
          domain_of[other] = gpu;
          group.push_back(other);
        }
      }
    }
    std::sort(group.begin(), group.end());
    out.push_back(std::move(group));
  }
  return out;
}

std::optional<std::string> tp_group_problem(const std::vector<int>& group,
                                            const std::vector<GpuLink>& links) {
  std::vector<int> sorted = group;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    for (std::size_t j = i + 1; j < sorted.size(); ++j) {
      if (!nvlinked(links, sorted[i], sorted[j])) {
        return "GPUs " + std::to_string(sorted[i]) + " and " + std::to_string(sorted[j]) + ": " +
               path_text(find_link(links, sorted[i], sorted[j])) +
               ", not NVLink: a tensor-parallel all-reduce over this group crosses the host";
      }
    }
  }
  return std::nullopt;
}

}  // namespace pathbench
