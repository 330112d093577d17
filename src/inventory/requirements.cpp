#include "inventory/requirements.hpp"

#ifdef PATHBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/text.hpp"
#include "core/units.hpp"
#include "inventory/cpulist.hpp"
#include "inventory/gpu_selection.hpp"

namespace pathbench {

namespace {

using Judge = std::function<std::optional<std::string>(const Machine&, int)>;

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::uint64_t hugetlb_page_bytes(const Machine& m) {
  return m.hugetlb_page_bytes > 0 ? m.hugetlb_page_bytes : std::uint64_t{2} << 20;
}

std::optional<std::string> unknown_gpu_node(const Machine& m, int gpu) {
  if (m.gpu_local_node(gpu)) return std::nullopt;
  return "the NUMA node of GPU " + std::to_string(gpu) +
         " is unknown (hwloc and sysfs report none) on a machine with " +
         std::to_string(m.numa_nodes.size()) +
         " NUMA nodes, so host memory cannot be placed relative to it";
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

int built_cuda_runtime() {
#ifdef PATHBENCH_HAVE_CUDA
  return CUDART_VERSION;
#else
  return 0;
#endif
}

std::vector<int> gpus_in_use(const Machine& machine) {
  std::vector<int> gpus = machine.selected_gpus;
  if (gpus.empty()) {
    for (const auto& g : machine.gpus) gpus.push_back(g.index);
  }
  return sorted_unique(std::move(gpus));
}

std::string describe_gpus(const Machine& machine) {
  if (machine.gpus.empty()) return "none";
  std::string list;
  for (const auto& g : machine.gpus) {
    list += concat(list.empty() ? "GPU " : ", GPU ", std::to_string(g.index),
                   g.name.empty() ? "" : ": ", g.name);
  }
  return std::to_string(machine.gpus.size()) + " (" + list + ")";
}

std::string join_ids(const std::vector<int>& ids) {
  std::string text;
  for (const int v : ids) text += concat(text.empty() ? "" : ",", std::to_string(v));
  return text.empty() ? "none" : text;
}

std::string no_peer_access_reason(int accessor, int peer, const GpuLink* link,
                                  const std::string& needed_by) {
  const std::string via =
      link == nullptr ? "" : concat("; link ", link_type_name(link->type), ", ", link->param);
  return concat("GPU ", std::to_string(accessor), " cannot access GPU ", std::to_string(peer),
                "'s memory (cudaDeviceCanAccessPeer = 0", via, "): ", needed_by,
                " (`nvidia-smi topo -p2p r` shows the driver's answer for every pair)");
}

std::string memlock_fix() {
  return "raise the limit with `ulimit -l unlimited` (or `memlock` in /etc/security/limits.conf, "
         "LimitMEMLOCK=infinity for a systemd unit, --ulimit memlock=-1 for a container)";
}

bool process_has_ipc_lock() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    std::uint64_t caps = 0;
    std::istringstream(line.substr(7)) >> std::hex >> caps;
    constexpr int kCapIpcLock = 14;  // linux/capability.h
    return (caps >> kCapIpcLock) & 1U;
  }
  return false;
}

Requirements& Requirements::custom(Judge judge) {
  judges_.push_back(std::move(judge));
  return *this;
}

Requirements& Requirements::gpu() {
  return custom([](const Machine& m, int device) { return m.gpu_unavailable_reason(device); });
}

Requirements& Requirements::every_selected_gpu(std::uint64_t bytes_each) {
  return custom([bytes_each](const Machine& m, int) -> std::optional<std::string> {
    const std::vector<int> gpus = gpus_in_use(m);
    if (gpus.empty()) return m.gpu_unavailable_reason(0);
    for (int gpu : gpus) {
      if (auto why = m.gpu_unavailable_reason(gpu)) return why;
      for (const auto& g : m.gpus) {
        if (g.index == gpu && g.memory_bytes > 0 && g.memory_bytes < bytes_each) {
          return "GPU " + std::to_string(gpu) + " has " + format_bytes(g.memory_bytes) +
                 " of memory, less than one " + format_bytes(bytes_each) + " buffer";
        }
      }
    }
    return std::nullopt;
  });
}

Requirements& Requirements::two_gpus() {
  return custom([](const Machine& m, int) -> std::optional<std::string> {
    if (!m.has_gpu()) {
      return "needs two GPUs; this machine has none usable (" +
             (m.cuda_unavailable_reason.empty() ? std::string("no CUDA device")
                                                : m.cuda_unavailable_reason) +
             ")";
    }
    if (m.gpus.size() < 2) return "needs two GPUs; this machine has " + describe_gpus(m);
    if (m.selected_gpus.size() < 2) {
      return "needs two GPUs; --devices selected " +
             (m.selected_gpus.empty() ? std::string("none")
                                      : "only GPU " + join_indexes(m.selected_gpus)) +
             " of this machine's " + describe_gpus(m);
    }
    return std::nullopt;
  });
}

Requirements& Requirements::named_gpus(std::vector<int> gpus, std::string who) {
  return custom([gpus = std::move(gpus), who = std::move(who)](const Machine& m,
                                                               int) -> std::optional<std::string> {
    for (int gpu : gpus) {
      const auto known = std::find_if(m.gpus.begin(), m.gpus.end(),
                                      [gpu](const MachineGpu& g) { return g.index == gpu; });
      if (known == m.gpus.end()) {
        return concat(who, ": GPU ", std::to_string(gpu), " does not exist; this machine has ",
                      describe_gpus(m));
      }
      if (!contains(m.selected_gpus, gpu)) {
        return concat(who, ": GPU ", std::to_string(gpu),
                      " is not selected (--devices selects GPU ", join_indexes(m.selected_gpus),
                      ")");
      }
    }
    return std::nullopt;
  });
}

Requirements& Requirements::gpu_numa_node(bool remote) {
  return custom([remote](const Machine& m, int device) -> std::optional<std::string> {
    if (auto why = unknown_gpu_node(m, device)) return why;
    if (remote && !m.gpu_remote_node(device)) {
      return "host_node=remote needs a second NUMA node with memory; this machine has " +
             std::to_string(m.numa_nodes.size()) + " (the GPU's node is " +
             std::to_string(*m.gpu_local_node(device)) + ")";
    }
    return std::nullopt;
  });
}

Requirements& Requirements::gpu_remote_cpus() {
  return custom([](const Machine& m, int device) -> std::optional<std::string> {
    if (auto why = unknown_gpu_node(m, device)) return why;
    if (!m.gpu_remote_cpu_node(device)) {
      return "threads=remote needs a second NUMA node with CPUs this process may run on; this "
             "machine has " +
             std::to_string(m.numa_nodes.size()) + " (the GPU's node is " +
             std::to_string(*m.gpu_local_node(device)) + ")";
    }
    return std::nullopt;
  });
}

Requirements& Requirements::numa_balancing_change(int value) {
  return custom([value](const Machine& m, int) -> std::optional<std::string> {
    const std::string axis = std::string("numa_balancing=") + (value != 0 ? "on" : "off");
    if (m.numa_nodes.size() < 2) {
      return axis +
             " needs two NUMA nodes with memory (automatic NUMA balancing moves pages "
             "between nodes); this machine has " +
             std::to_string(m.numa_nodes.size());
    }
    if (!m.numa_balancing) {
      return axis +
             ": /proc/sys/kernel/numa_balancing is not readable here (a kernel without "
             "CONFIG_NUMA_BALANCING, or a container that hides it)";
    }
    if (!m.numa_balancing_change_allowed) {
      return axis + " sets /proc/sys/kernel/numa_balancing (now " +
             std::to_string(*m.numa_balancing) +
             ", system-wide) for the case and restores it after: pass "
             "--allow-numa-balancing-change (as root) to let pathbench do so";
    }
    return std::nullopt;
  });
}

Requirements& Requirements::numa_node_of_every_selected_gpu() {
  return custom([](const Machine& m, int) -> std::optional<std::string> {
    for (int gpu : gpus_in_use(m)) {
      if (auto why = unknown_gpu_node(m, gpu)) return why;
    }
    return std::nullopt;
  });
}

Requirements& Requirements::numa_node(int node, bool cpus) {
  return custom([node, cpus](const Machine& m, int) -> std::optional<std::string> {
    if (!contains(m.numa_nodes, node)) {
      return "NUMA node " + std::to_string(node) +
             " does not exist on this machine (nodes: " + join_ids(m.numa_nodes) + ")";
    }
    const auto* allowed = m.cpus_of_node(node);
    if (cpus && (allowed == nullptr || allowed->empty())) {
      return "NUMA node " + std::to_string(node) +
             " has no CPUs this process may run on (check the cpuset)";
    }
    return std::nullopt;
  });
}

Requirements& Requirements::transparent_huge_pages() {
  return custom([](const Machine& m, int) -> std::optional<std::string> {
    if (m.thp_enabled != "never") return std::nullopt;
    return std::string(
        "transparent huge pages are disabled (/sys/kernel/mm/transparent_hugepage/enabled is "
        "'never'); enable them with `echo madvise | sudo tee "
        "/sys/kernel/mm/transparent_hugepage/enabled`");
  });
}

Requirements& Requirements::hugetlb_pages(std::uint64_t bytes, std::uint64_t buffers,
                                          bool per_gpu) {
  return custom([bytes, buffers, per_gpu](const Machine& m, int) -> std::optional<std::string> {
    const std::uint64_t page = hugetlb_page_bytes(m);
    const std::uint64_t copies = per_gpu ? buffers * gpus_in_use(m).size() : buffers;
    const std::uint64_t need = (bytes + page - 1) / page * copies;
    if (m.hugetlb_free_pages >= need) return std::nullopt;
    const std::uint64_t more = need - m.hugetlb_free_pages;
    return "needs " + std::to_string(need) + " free hugetlb pages of " + format_bytes(page) +
           ", HugePages_Free=" + std::to_string(m.hugetlb_free_pages) + "; reserve " +
           std::to_string(more) + " more with `echo $(( $(cat /proc/sys/vm/nr_hugepages) + " +
           std::to_string(more) + " )) | sudo tee /proc/sys/vm/nr_hugepages`";
  });
}

namespace {

std::optional<std::string> memlock_unmet(const Machine& m, std::uint64_t bytes) {
  if (m.memlock_limit_bytes == UINT64_MAX || m.memlock_limit_bytes >= bytes ||
      process_has_ipc_lock()) {
    return std::nullopt;
  }
  return "mlock of " + format_bytes(bytes) + " exceeds RLIMIT_MEMLOCK (" +
         format_bytes(m.memlock_limit_bytes) + "); " + memlock_fix();
}

}  // namespace

Requirements& Requirements::memlock(std::uint64_t bytes) {
  return custom([bytes](const Machine& m, int) { return memlock_unmet(m, bytes); });
}

std::uint64_t pinned_share_bytes(const Machine& machine, int pct) {
  const std::uint64_t pages = machine.mem_total_bytes / 4096;
  return pages * static_cast<std::uint64_t>(std::max(pct, 0)) / 100 * 4096;
}

Requirements& Requirements::pinned_share(int pct, std::uint64_t other_bytes) {
  custom([pct](const Machine& m, int) -> std::optional<std::string> {
    if (pct <= m.pin_cap_pct) return std::nullopt;
    return "pinning " + std::to_string(pct) + " % of RAM exceeds the run's cap of " +
           std::to_string(m.pin_cap_pct) + " % (raise it with `pathbench run --max-pinned-pct " +
           std::to_string(pct) + "`, at most " + std::to_string(kMaxPinCapPct) + ")";
  });
  custom([pct](const Machine& m, int) -> std::optional<std::string> {
    if (m.mem_total_bytes > 0) return std::nullopt;
    return "pinning " + std::to_string(pct) +
           " % of RAM needs MemTotal, and /proc/meminfo did not give it";
  });
  custom([pct, other_bytes](const Machine& m, int) -> std::optional<std::string> {
    const std::uint64_t pinned = pinned_share_bytes(m, pct);
    const std::uint64_t need = pinned + other_bytes + kPinningHeadroomBytes;
    if (m.mem_available_bytes == 0 || need <= m.mem_available_bytes) return std::nullopt;
    return "pinning " + std::to_string(pct) + " % of RAM (" + format_bytes(pinned) + ") beside " +
           format_bytes(other_bytes) + " of buffers and " + format_bytes(kPinningHeadroomBytes) +
           " left to the system needs " + format_bytes(need) + ", MemAvailable is " +
           format_bytes(m.mem_available_bytes);
  });
  return custom(
      [pct](const Machine& m, int) { return memlock_unmet(m, pinned_share_bytes(m, pct)); });
}

Requirements& Requirements::host_memory_per_gpu(std::uint64_t bytes) {
  return custom([bytes](const Machine& m, int) -> std::optional<std::string> {
    const std::uint64_t gpus = gpus_in_use(m).size();
    const std::uint64_t total = bytes * gpus;
    if (m.mem_available_bytes == 0 || total <= m.mem_available_bytes) return std::nullopt;
    return "needs " + format_bytes(total) + " of host memory (one " + format_bytes(bytes) +
           " buffer for each of " + std::to_string(gpus) + " GPUs); this machine has " +
           format_bytes(m.mem_available_bytes) + " available";
  });
}

Requirements& Requirements::peer_access(int accessor, int peer, std::string needed_by) {
  return custom(
      [=, why = std::move(needed_by)](const Machine& m, int) -> std::optional<std::string> {
        const GpuLink* link = m.link(accessor, peer);
        if (link == nullptr || !link->peer_access || *link->peer_access) return std::nullopt;
        return no_peer_access_reason(accessor, peer, link, why);
      });
}

Requirements& Requirements::cuda_runtime(int version, std::string feature, int built) {
  // The build decides, not the machine: judged once, here.
  if (built == 0 || built >= version) return *this;
  const std::string needed = cuda_version_text(version);
  std::string why = feature + " needs CUDA " + needed + " or newer; pathbench was built against " +
                    "CUDA runtime " + cuda_version_text(built) + ": rebuild it with a CUDA " +
                    needed + "+ toolkit (cmake -DCMAKE_CUDA_COMPILER=<toolkit>/bin/nvcc)";
  return custom([why = std::move(why)](const Machine&, int) { return std::optional(why); });
}

std::optional<std::string> Requirements::unmet(const Machine& machine, int device) const {
  for (const auto& judge : judges_) {
    if (auto why = judge(machine, device)) return why;
  }
  return std::nullopt;
}

}  // namespace pathbench
