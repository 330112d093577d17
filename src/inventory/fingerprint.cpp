#include "inventory/fingerprint.hpp"

#include <algorithm>
#include <cstdint>
#include <regex>
#include <sstream>
#include <tuple>
#include <utility>

#include "core/sha256.hpp"
#include "inventory/cpulist.hpp"

namespace pathbench {
namespace {

// Nearest whole GiB: the kernel's and the driver's reservations move totals by a few MiB between
// versions, which must not change the fingerprint.
std::uint64_t round_gib(std::uint64_t bytes) {
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  return (bytes + kGiB / 2) / kGiB;
}

std::string optional_text(const std::optional<int>& value) {
  return value ? std::to_string(*value) : std::string("?");
}

// Keeps one field from forging another's line: newlines would otherwise start a new "fact".
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

std::size_t numa_count(const Inventory& inventory) {
  // Nodes with CPUs: memory-only nodes (CXL, HBM, Grace-Hopper's GPU memory) are not what people
  // mean by "2 NUMA".
  auto with_cpus = static_cast<std::size_t>(
      std::count_if(inventory.numa_nodes.begin(), inventory.numa_nodes.end(),
                    [](const NumaNodeInventory& node) { return !node.cpus.empty(); }));
  return with_cpus != 0 ? with_cpus : inventory.numa_nodes.size();
}

bool is_subset(const std::vector<int>& small, std::vector<int> big) {
  std::sort(big.begin(), big.end());
  std::vector<int> sorted_small = small;
  std::sort(sorted_small.begin(), sorted_small.end());
  return std::includes(big.begin(), big.end(), sorted_small.begin(), sorted_small.end());
}

}  // namespace

std::string topology_canonical_text(const Inventory& inventory) {
  std::ostringstream out;
  out << "pathbench-topology/v1\n";
  out << "cpu_model=" << one_line(inventory.cpu_model) << "\n";
  out << "logical_cpus=" << inventory.logical_cpus << "\n";

  std::vector<const NumaNodeInventory*> nodes;
  for (const auto& node : inventory.numa_nodes) nodes.push_back(&node);
  std::sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) { return a->id < b->id; });
  for (const auto* node : nodes) {
    // Node memory is left out: virtual machines grow and shrink it while they run (balloon,
    // hot-plug), and two runs minutes apart on the same VM must still compare.
    out << "numa id=" << node->id << " cpus=" << format_cpu_list(node->cpus) << "\n";
  }

  // By bus id, not CUDA index: CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES reorder indexes.
  std::vector<const GpuInventory*> gpus;
  for (const auto& gpu : inventory.gpus) gpus.push_back(&gpu);
  std::sort(gpus.begin(), gpus.end(), [](auto* a, auto* b) {
    return std::tie(a->pci_bus_id, a->name) < std::tie(b->pci_bus_id, b->name);
  });
  for (const auto* gpu : gpus) {
    out << "gpu name=" << one_line(gpu->name) << " bus=" << one_line(gpu->pci_bus_id)
        << " pcie_gen_max=" << optional_text(gpu->pcie_gen_max)
        << " pcie_width_max=" << optional_text(gpu->pcie_width_max)
        << " numa=" << optional_text(gpu->numa_node) << " mem_gib=" << round_gib(gpu->memory_bytes)
        << "\n";
  }

  // Link type and NVLink count only: the driver's attributes (peer access, rank, atomics) change
  // with driver versions and settings, not with the hardware. GPUs are named by their position
  // in the bus-id order above, so CUDA's device order does not matter here either.
  auto position = [&](int index) {
    for (std::size_t p = 0; p < gpus.size(); ++p) {
      if (gpus[p]->index == index) return static_cast<int>(p);
    }
    return index;
  };
  std::vector<std::string> link_lines;
  for (const auto& link : inventory.links) {
    link_lines.push_back("link " + std::to_string(position(link.from)) + "->" +
                         std::to_string(position(link.to)) + " type=" + link_type_name(link.type) +
                         " nvlinks=" + std::to_string(link.nvlinks) + "\n");
  }
  std::sort(link_lines.begin(), link_lines.end());
  for (const auto& line : link_lines) out << line;
  return out.str();
}

std::string topology_fingerprint(const Inventory& inventory) {
  return sha256_hex(topology_canonical_text(inventory));
}

std::string condense_cpu_model(const std::string& model) {
  static const std::regex kNoise(
      R"(\((R|TM|tm|r)\)|\bCPU\b|\bProcessor\b|@.*$|\b\d+-Core\b|\bwith Radeon Graphics\b)");
  std::string condensed = std::regex_replace(model, kNoise, " ");
  static const std::regex kSpaces(R"(\s+)");
  condensed = std::regex_replace(condensed, kSpaces, " ");
  auto first = condensed.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  auto last = condensed.find_last_not_of(' ');
  return condensed.substr(first, last - first + 1);
}

std::string derive_node_type(const Inventory& inventory) {
  const std::size_t numa = numa_count(inventory);
  const std::string numa_text =
      numa == 0 ? std::string("unknown NUMA") : std::to_string(numa) + " NUMA";

  if (inventory.gpus.empty()) {
    std::string cpu = condense_cpu_model(inventory.cpu_model);
    return "cpu-only / " + (cpu.empty() ? std::string() : cpu + " / ") + numa_text;
  }

  // Models in order of first appearance, so a mixed node reads "A x4 + B x4".
  std::vector<std::pair<std::string, int>> models;
  for (const auto& gpu : inventory.gpus) {
    std::string name = gpu.name.empty() ? std::string("unknown GPU") : gpu.name;
    auto it = std::find_if(models.begin(), models.end(),
                           [&](const auto& model) { return model.first == name; });
    if (it == models.end()) {
      models.emplace_back(name, 1);
    } else {
      ++it->second;
    }
  }
  std::string label;
  for (const auto& [name, count] : models) {
    if (!label.empty()) label += " + ";
    label += name + " x" + std::to_string(count);
  }

  const GpuInventory& first = inventory.gpus.front();
  std::string pcie;
  if (!first.pcie_gen_max && !first.pcie_width_max) {
    pcie = "PCIe unknown";
  } else {
    pcie =
        "PCIe Gen" + optional_text(first.pcie_gen_max) + " x" + optional_text(first.pcie_width_max);
  }
  return label + " / " + pcie + " / " + numa_text;
}

void check_gpu_alignment(Inventory& inventory) {
  if (inventory.gpus.empty()) {
    inventory.cpuset_aligned_with_gpu.reset();
    return;
  }
  const GpuInventory& gpu = inventory.gpus.front();
  const std::string who = "GPU " + std::to_string(gpu.index) +
                          (gpu.pci_bus_id.empty() ? std::string() : " (" + gpu.pci_bus_id + ")");
  std::optional<bool> cpus_ok, mems_ok;
  if (!gpu.local_cpus.empty() && !inventory.cpuset.empty()) {
    cpus_ok = is_subset(inventory.cpuset, gpu.local_cpus);
    if (!*cpus_ok) {
      inventory.warnings.push_back(
          "process CPU set " + format_cpu_list(inventory.cpuset) + " is not within " + who +
          "'s local CPUs " + format_cpu_list(gpu.local_cpus) +
          ": host threads may run on a remote NUMA node; bind with taskset or numactl "
          "--cpunodebind" +
          (gpu.numa_node ? "=" + std::to_string(*gpu.numa_node) : std::string()));
    }
  }
  if (gpu.numa_node && !inventory.mems_allowed.empty()) {
    mems_ok = is_subset(inventory.mems_allowed, std::vector<int>{*gpu.numa_node});
    if (!*mems_ok) {
      inventory.warnings.push_back("process memory nodes " +
                                   format_cpu_list(inventory.mems_allowed) +
                                   " (Mems_allowed) are not limited to " + who + "'s NUMA node " +
                                   std::to_string(*gpu.numa_node) +
                                   ": unbound host buffers may land on a remote node; bind with "
                                   "numactl --membind=" +
                                   std::to_string(*gpu.numa_node));
    }
  }
  if (!cpus_ok && !mems_ok) {
    inventory.cpuset_aligned_with_gpu.reset();
    inventory.warnings.push_back(who +
                                 " has no known NUMA locality (firmware or VM hides it): "
                                 "whether this process runs next to it cannot be checked");
    return;
  }
  inventory.cpuset_aligned_with_gpu = cpus_ok.value_or(true) && mems_ok.value_or(true);
}

}  // namespace pathbench
