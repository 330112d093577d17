#include "inventory/inventory.hpp"
#include "core/json_text.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "build_info.hpp"
#include "core/subprocess.hpp"
#include "cuda/cuda_probe.hpp"
#include "inventory/cpulist.hpp"
#include "inventory/fingerprint.hpp"
#include "inventory/hwloc_topology.hpp"
#include "inventory/nvidia_smi.hpp"
#include "inventory/sysfs.hpp"
#include "inventory/topology.hpp"

namespace pathbench {

// ---------------------------------------------------------------------------------------------
// Machine

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

const GpuLink* Machine::link(int from, int to) const {
  for (const auto& l : links) {
    if (l.from == from && l.to == to) return &l;
  }
  return nullptr;
}

namespace {

std::vector<int> sorted_unique(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<int> intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::string first_line(std::string_view text) {
  auto start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return {};
  text = text.substr(start);
  auto end = text.find_first_of("\r\n");
  return std::string(text.substr(0, end));
}

std::vector<int> process_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Runs the nvidia-smi query; returns its rows and sets `status` to "ok" or the reason it has none.
std::vector<NvidiaSmiGpu> query_nvidia_smi(std::string& status) {
  SubprocessOptions options;
  options.timeout = std::chrono::seconds(10);
  SubprocessResult run;
  try {
    run = run_subprocess(nvidia_smi_query_argv(), options);
  } catch (const std::exception& e) {
    status = std::string("could not run nvidia-smi: ") + e.what();
    return {};
  }
  if (!run.ok()) {
    status = run.error;
    // nvidia-smi explains itself on stdout ("NVIDIA-SMI has failed because ...").
    std::string detail = first_line(run.stdout_text);
    if (detail.empty()) detail = first_line(run.stderr_text);
    if (!detail.empty() && run.outcome == SubprocessOutcome::kExited) status += ": " + detail;
    return {};
  }
  try {
    auto rows = parse_nvidia_smi_query(run.stdout_text);
    status = rows.empty() ? "nvidia-smi listed no GPUs" : "ok";
    return rows;
  } catch (const std::invalid_argument& e) {
    status = std::string("nvidia-smi output not understood: ") + e.what();
    return {};
  }
}

// Runs a fixed nvidia-smi subcommand (`what`, e.g. "topo -m", names it in messages). Returns its
// standard output, or sets `status` to why there is none.
std::optional<std::string> run_nvidia_smi_subcommand(const std::vector<std::string>& argv,
                                                     const std::string& what, std::string& status) {
  SubprocessOptions options;
  options.timeout = std::chrono::seconds(10);
  SubprocessResult run;
  try {
    run = run_subprocess(argv, options);
  } catch (const std::exception& e) {
    status = "could not run nvidia-smi " + what + ": " + e.what();
    return std::nullopt;
  }
  if (!run.ok()) {
    status = "nvidia-smi " + what + ": " + run.error;
    std::string detail = first_line(run.stdout_text);
    if (detail.empty()) detail = first_line(run.stderr_text);
    if (!detail.empty() && run.outcome == SubprocessOutcome::kExited) status += ": " + detail;
    return std::nullopt;
  }
  return std::move(run.stdout_text);
}

// Runs `nvidia-smi topo -m` and the link map; sets topo_status to "ok" or why there are no links.
// The matrix names GPUs by nvidia-smi index (PCI order); links use CUDA indexes (what the
// benchmarks pass to cudaSetDevice), so GPUs are matched by PCI bus id when CUDA sees devices.
void collect_links(Inventory& inventory, const CudaProbe& probe,
                   const std::vector<NvidiaSmiGpu>& rows) {
  if (inventory.nvidia_smi_status != "ok") {
    inventory.topo_status =
        "no topology: nvidia-smi unavailable (" + inventory.nvidia_smi_status + ")";
    return;
  }
  if (inventory.gpus.size() < 2) {
    inventory.topo_status =
        inventory.gpus.empty() ? "no GPU: no GPU pairs" : "one GPU: no GPU pairs";
    return;
  }
  const auto text =
      run_nvidia_smi_subcommand(nvidia_smi_topo_argv(), "topo -m", inventory.topo_status);
  if (!text) return;
  TopoMatrix topo;
  try {
    topo = parse_nvidia_smi_topo(*text);
  } catch (const std::invalid_argument& e) {
    inventory.topo_status = std::string("nvidia-smi topo -m output not understood: ") + e.what();
    return;
  }

  if (!probe.devices.empty()) {
    // nvidia-smi index -> CUDA index, through the bus id; GPUs CUDA does not see
    // (CUDA_VISIBLE_DEVICES) are dropped, since no case can use them.
    auto cuda_index_of = [&](std::size_t position) -> std::optional<int> {
      const std::string label = topo.gpus[position];
      auto row = std::find_if(rows.begin(), rows.end(), [&](const NvidiaSmiGpu& r) {
        return "GPU" + std::to_string(r.index) == label;
      });
      if (row == rows.end() || row->pci_bus_id.empty()) return std::nullopt;
      for (const auto& device : probe.devices) {
        try {
          if (normalize_pci_bus_id(device.pci_bus_id) == row->pci_bus_id) return device.index;
        } catch (const std::invalid_argument&) {
        }
      }
      return std::nullopt;
    };
    TopoMatrix visible;
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < topo.gpus.size(); ++i) {
      if (auto cuda = cuda_index_of(i)) {
        kept.push_back(i);
        visible.gpus.push_back("GPU" + std::to_string(*cuda));
      }
    }
    for (std::size_t i : kept) {
      std::vector<std::string> cells;
      for (std::size_t j : kept) cells.push_back(topo.cells[i][j]);
      visible.cells.push_back(std::move(cells));
    }
    if (visible.gpus.size() < probe.devices.size()) {
      inventory.warnings.push_back(
          "nvidia-smi topo -m: " + std::to_string(probe.devices.size() - visible.gpus.size()) +
          " CUDA device(s) not matched by PCI bus id; their links are not recorded");
    }
    if (visible.gpus.size() < 2) {
      inventory.topo_status =
          "fewer than two GPUs of the topology are visible to CUDA: no GPU pairs";
      return;
    }
    topo = std::move(visible);
  }
  try {
    inventory.links = build_link_map(topo, probe.peers);
  } catch (const std::invalid_argument& e) {
    inventory.topo_status = std::string("nvidia-smi topo -m output not understood: ") + e.what();
    return;
  }
  inventory.topo_status = "ok";
}

// Runs `nvidia-smi nvlink -s` and records each GPU's active links and per-link rate; sets
// nvlink_status to "ok" or why there is nothing. A node without NVLink is no error: its GPUs get
// active_links 0 (or no entry when the driver lists nothing for them).
void collect_nvlink(Inventory& inventory, const std::vector<NvidiaSmiGpu>& rows) {
  if (inventory.nvidia_smi_status != "ok") {
    inventory.nvlink_status =
        "not read: nvidia-smi unavailable (" + inventory.nvidia_smi_status + ")";
    return;
  }
  const auto text =
      run_nvidia_smi_subcommand(nvidia_smi_nvlink_argv(), "nvlink -s", inventory.nvlink_status);
  if (!text) return;
  std::vector<NvlinkGpuStatus> blocks;
  try {
    blocks = parse_nvidia_smi_nvlink(*text);
  } catch (const std::invalid_argument& e) {
    inventory.nvlink_status =
        std::string("nvidia-smi nvlink -s output not understood: ") + e.what();
    return;
  }
  apply_nvlink_status(inventory.gpus, blocks, rows);
  inventory.nvlink_status =
      blocks.empty() ? "ok: the driver lists no NVLink for any GPU" : std::string("ok");
}

void collect_numa_nodes(Inventory& inventory, const HwlocTopology* topology) {
  if (topology != nullptr) {
    for (auto& node : topology->numa_nodes()) {
      inventory.numa_nodes.push_back(
          NumaNodeInventory{node.os_index, std::move(node.cpus), node.memory_bytes});
    }
  }
  if (inventory.numa_nodes.empty()) {
    for (auto& node : read_sysfs_numa_nodes()) {
      inventory.numa_nodes.push_back(
          NumaNodeInventory{node.id, std::move(node.cpus), node.memory_bytes});
    }
  }
}

// ---------------------------------------------------------------------------------------------
// JSON

nlohmann::ordered_json gpu_json(const GpuInventory& gpu) {
  nlohmann::ordered_json j;
  j["index"] = gpu.index;
  j["name"] = gpu.name;
  j["uuid"] = gpu.uuid;
  j["pci_bus_id"] = gpu.pci_bus_id;
  j["pcie_gen_current"] = optional_json(gpu.pcie_gen_current);
  j["pcie_gen_max"] = optional_json(gpu.pcie_gen_max);
  j["pcie_width_current"] = optional_json(gpu.pcie_width_current);
  j["pcie_width_max"] = optional_json(gpu.pcie_width_max);
  j["numa_node"] = optional_json(gpu.numa_node);
  j["local_cpus"] = gpu.local_cpus;
  j["clock_sm_mhz"] = optional_json(gpu.clock_sm_mhz);
  j["clock_mem_mhz"] = optional_json(gpu.clock_mem_mhz);
  j["clock_sm_max_mhz"] = optional_json(gpu.clock_sm_max_mhz);
  j["clock_mem_max_mhz"] = optional_json(gpu.clock_mem_max_mhz);
  j["memory_bytes"] = gpu.memory_bytes;
  j["vbios"] = gpu.vbios;
  j["compute_capability"] = gpu.compute_capability;
  j["ecc_mode"] = optional_json(gpu.ecc_mode);
  j["persistence_mode"] = optional_json(gpu.persistence_mode);
  j["mig_mode"] = optional_json(gpu.mig_mode);
  if (gpu.nvlink) {
    nlohmann::ordered_json n;
    n["active_links"] = gpu.nvlink->active_links;
    n["link_gb_per_s"] = optional_json(gpu.nvlink->link_gb_per_s);
    j["nvlink"] = std::move(n);
  } else {
    j["nvlink"] = nullptr;
  }
  return j;
}

nlohmann::ordered_json link_json(const GpuLink& link) {
  nlohmann::ordered_json j;
  j["from"] = link.from;
  j["to"] = link.to;
  j["type"] = link_type_name(link.type);
  j["nvlinks"] = link.nvlinks;
  j["peer_access"] = optional_json(link.peer_access);
  j["performance_rank"] = optional_json(link.performance_rank);
  j["native_atomics"] = optional_json(link.native_atomics);
  j["param"] = link.param;
  return j;
}

// Reads `key` of `object` into `out` when present; a missing key keeps the default so older
// result files still load. A present key of the wrong type is an error naming its JSON pointer.
class JsonReader {
 public:
  JsonReader(const nlohmann::json& object, std::string pointer)
      : object_(object), pointer_(std::move(pointer)) {
    if (!object_.is_object()) {
      throw std::invalid_argument("inventory JSON " + where() + ": expected an object");
    }
  }

  template <typename T>
  void get(const char* key, T& out) const {
    auto it = object_.find(key);
    if (it == object_.end()) return;
    const std::string field = pointer_ + "/" + key;
    // nlohmann converts 3.7 to 3 and -1 to 18446744073709551615 without complaint; a context
    // that says so is corrupt, not approximately right.
    if constexpr (std::is_same_v<T, bool>) {
      if (!it->is_boolean()) throw type_error(field, "a boolean", *it);
    } else if constexpr (std::is_integral_v<T>) {
      check_integer<T>(field, *it);
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      if (!it->is_array()) throw type_error(field, "an array of integers", *it);
      for (std::size_t i = 0; i < it->size(); ++i) {
        check_integer<int>(field + "/" + std::to_string(i), (*it)[i]);
      }
    }
    try {
      out = it->template get<T>();
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument("inventory JSON " + field + ": " + e.what());
    }
  }

  template <typename T>
  void get(const char* key, std::optional<T>& out) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) {
      out.reset();
      return;
    }
    T value{};
    get(key, value);
    out = value;
  }

  const nlohmann::json* child(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  std::string where() const { return pointer_.empty() ? "/" : pointer_; }

 private:
  static std::invalid_argument type_error(const std::string& field, const char* expected,
                                          const nlohmann::json& value) {
    return std::invalid_argument("inventory JSON " + field + ": expected " + expected + ", got " +
                                 value.dump());
  }

  template <typename T>
  static void check_integer(const std::string& field, const nlohmann::json& value) {
    if (!value.is_number_integer()) throw type_error(field, "an integer", value);
    if (value.is_number_unsigned()) {
      if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        throw type_error(field, "a smaller integer", value);
      }
    } else {
      auto v = value.get<std::int64_t>();
      if constexpr (std::is_unsigned_v<T>) {
        if (v < 0) throw type_error(field, "a non-negative integer", value);
      } else {
        if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
          throw type_error(field, "a smaller integer", value);
        }
      }
    }
  }

  const nlohmann::json& object_;
  std::string pointer_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Inventory

Inventory collect_inventory(const InventoryOptions& options) {
  Inventory inventory;
  inventory.tool_version = build_info::kVersion;
  inventory.git_sha = build_info::kGitSha;
  inventory.hostname = host_name();
  inventory.kernel = kernel_description();
  inventory.cpu_model = read_cpu_model();

  auto online = read_online_cpus();
  inventory.logical_cpus = online.empty() ? static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))
                                          : static_cast<int>(online.size());

  try {
    ProcStatus status = read_proc_self_status();
    inventory.cpuset = status.cpus_allowed;
    inventory.mems_allowed = status.mems_allowed;
  } catch (const std::invalid_argument& e) {
    inventory.warnings.push_back(std::string("/proc/self/status not understood: ") + e.what());
  }
  if (inventory.cpuset.empty()) inventory.cpuset = process_affinity();

  inventory.thp_enabled = read_thp_enabled();
  inventory.thp_defrag = read_thp_defrag();
  inventory.numa_balancing = read_numa_balancing();
  try {
    MemInfo memory = read_meminfo();
    inventory.mem_total_bytes = memory.mem_total_bytes;
    inventory.mem_available_bytes = memory.mem_available_bytes;
    inventory.hugepages_total = memory.hugepages_total;
    inventory.hugepages_free = memory.hugepages_free;
    inventory.hugepage_bytes = memory.hugepage_bytes;
  } catch (const std::invalid_argument& e) {
    inventory.warnings.push_back(std::string("/proc/meminfo not understood: ") + e.what());
  }
  inventory.memlock_limit_bytes = memlock_limit_bytes();
  DmiBios bios = read_dmi_bios();
  inventory.bios_vendor = bios.vendor;
  inventory.bios_version = bios.version;
  inventory.bios_date = bios.date;
  inventory.iommu = read_iommu();

  std::optional<HwlocTopology> topology;
  try {
    topology.emplace();
  } catch (const std::exception& e) {
    inventory.warnings.push_back(std::string(e.what()) +
                                 "; NUMA layout read from sysfs, GPU locality from sysfs only");
  }
  const HwlocTopology* topology_ptr = topology ? &*topology : nullptr;
  collect_numa_nodes(inventory, topology_ptr);
  if (inventory.numa_nodes.size() == 1 && inventory.mem_total_bytes != 0) {
    // One node holds all memory. Some VMs (memory hot-added after boot) under-report the node's
    // own MemTotal and let it drift between runs, which would make the fingerprint drift too;
    // /proc/meminfo's total is the steady figure.
    inventory.numa_nodes.front().memory_bytes = inventory.mem_total_bytes;
  }

  CudaProbe probe;
  try {
    probe = probe_cuda();
  } catch (const std::exception& e) {
    probe.unavailable_reason = std::string("CUDA probe failed: ") + e.what();
  }
  inventory.cuda_runtime_version = probe.runtime_version;
  inventory.cuda_driver_version = probe.driver_version;
  inventory.cuda_unavailable_reason = probe.unavailable_reason;
  if (probe.devices.empty() && inventory.cuda_unavailable_reason.empty()) {
    inventory.cuda_unavailable_reason = "no CUDA device found";
  }

  auto rows = query_nvidia_smi(inventory.nvidia_smi_status);
  if (!rows.empty()) inventory.driver_version = rows.front().driver_version;
  inventory.gpus = merge_gpu_sources(probe.devices, rows, inventory.warnings);
  locate_gpus(inventory, topology_ptr);
  check_gpu_alignment(inventory);
  collect_links(inventory, probe, rows);
  collect_nvlink(inventory, rows);

  if (!options.node_type_override.empty()) {
    inventory.node_type = options.node_type_override;
    inventory.node_type_derived = false;
  } else {
    inventory.node_type = derive_node_type(inventory);
    inventory.node_type_derived = true;
  }
  inventory.topology_fingerprint = topology_fingerprint(inventory);
  return inventory;
}

Machine machine_from(const Inventory& inventory) {
  Machine machine;
  const std::vector<int> cpuset = sorted_unique(inventory.cpuset);
  const std::vector<int> mems = sorted_unique(inventory.mems_allowed);
  std::vector<const NumaNodeInventory*> nodes;
  for (const auto& node : inventory.numa_nodes) nodes.push_back(&node);
  std::sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) { return a->id < b->id; });
  for (const auto* node : nodes) {
    // Only nodes this process may allocate on; an empty list means "not known", not "none".
    if (node->memory_bytes == 0) continue;
    if (!mems.empty() && !std::binary_search(mems.begin(), mems.end(), node->id)) continue;
    machine.numa_nodes.push_back(node->id);
    std::vector<int> cpus = sorted_unique(node->cpus);
    machine.node_cpus.push_back(cpuset.empty() ? cpus : intersect(cpus, cpuset));
  }
  machine.mem_available_bytes = inventory.mem_available_bytes;
  machine.hugetlb_free_pages = inventory.hugepages_free;
  if (inventory.hugepage_bytes != 0) machine.hugetlb_page_bytes = inventory.hugepage_bytes;
  machine.thp_enabled = inventory.thp_enabled;
  machine.memlock_limit_bytes = inventory.memlock_limit_bytes;
  machine.cuda_unavailable_reason = inventory.cuda_unavailable_reason;
  for (const auto& gpu : inventory.gpus) {
    machine.gpus.push_back(
        MachineGpu{gpu.index, gpu.name, gpu.pci_bus_id, gpu.numa_node, gpu.memory_bytes});
    machine.selected_gpus.push_back(gpu.index);
  }
  std::sort(machine.selected_gpus.begin(), machine.selected_gpus.end());
  machine.links = inventory.links;
  return machine;
}

nlohmann::ordered_json to_json(const Inventory& inventory) {
  nlohmann::ordered_json j;
  j["tool_version"] = inventory.tool_version;
  j["git_sha"] = inventory.git_sha;
  j["hostname"] = inventory.hostname;
  j["node_type"] = inventory.node_type;
  j["node_type_derived"] = inventory.node_type_derived;
  j["topology_fingerprint"] = inventory.topology_fingerprint;
  j["cpu_model"] = inventory.cpu_model;
  j["logical_cpus"] = inventory.logical_cpus;
  auto& nodes = j["numa_nodes"] = nlohmann::ordered_json::array();
  for (const auto& node : inventory.numa_nodes) {
    nlohmann::ordered_json n;
    n["id"] = node.id;
    n["cpus"] = node.cpus;
    n["memory_bytes"] = node.memory_bytes;
    nodes.push_back(std::move(n));
  }
  j["cpuset"] = inventory.cpuset;
  j["mems_allowed"] = inventory.mems_allowed;
  j["cpuset_aligned_with_gpu"] = inventory.cpuset_aligned_with_gpu
                                     ? nlohmann::ordered_json(*inventory.cpuset_aligned_with_gpu)
                                     : nlohmann::ordered_json(nullptr);
  j["thp_enabled"] = inventory.thp_enabled;
  j["thp_defrag"] = inventory.thp_defrag;
  j["numa_balancing"] = optional_json(inventory.numa_balancing);
  j["hugepages_total"] = inventory.hugepages_total;
  j["hugepages_free"] = inventory.hugepages_free;
  j["hugepage_bytes"] = inventory.hugepage_bytes;
  j["mem_total_bytes"] = inventory.mem_total_bytes;
  j["mem_available_bytes"] = inventory.mem_available_bytes;
  j["memlock_limit_bytes"] = inventory.memlock_limit_bytes;
  j["kernel"] = inventory.kernel;
  j["bios_vendor"] = inventory.bios_vendor;
  j["bios_version"] = inventory.bios_version;
  j["bios_date"] = inventory.bios_date;
  nlohmann::ordered_json iommu;
  iommu["mode"] = inventory.iommu.mode;
  iommu["groups"] = inventory.iommu.groups;
  iommu["cmdline"] = inventory.iommu.cmdline;
  j["iommu"] = std::move(iommu);
  j["cuda_runtime_version"] = optional_json(inventory.cuda_runtime_version);
  j["cuda_driver_version"] = optional_json(inventory.cuda_driver_version);
  j["driver_version"] = inventory.driver_version;
  j["cuda_unavailable_reason"] = inventory.cuda_unavailable_reason;
  j["nvidia_smi_status"] = inventory.nvidia_smi_status;
  auto& gpus = j["gpus"] = nlohmann::ordered_json::array();
  for (const auto& gpu : inventory.gpus) gpus.push_back(gpu_json(gpu));
  j["topo_status"] = inventory.topo_status;
  auto& links = j["links"] = nlohmann::ordered_json::array();
  for (const auto& link : inventory.links) links.push_back(link_json(link));
  j["nvlink_status"] = inventory.nvlink_status;
  j["warnings"] = inventory.warnings;
  return j;
}

Inventory inventory_from_json(const nlohmann::json& json) {
  Inventory inventory;
  JsonReader r(json, "");
  r.get("tool_version", inventory.tool_version);
  r.get("git_sha", inventory.git_sha);
  r.get("hostname", inventory.hostname);
  r.get("node_type", inventory.node_type);
  r.get("node_type_derived", inventory.node_type_derived);
  r.get("topology_fingerprint", inventory.topology_fingerprint);
  r.get("cpu_model", inventory.cpu_model);
  r.get("logical_cpus", inventory.logical_cpus);
  if (const auto* nodes = r.child("numa_nodes")) {
    if (!nodes->is_array())
      throw std::invalid_argument("inventory JSON /numa_nodes: expected an array");
    for (std::size_t i = 0; i < nodes->size(); ++i) {
      JsonReader n((*nodes)[i], "/numa_nodes/" + std::to_string(i));
      NumaNodeInventory node;
      n.get("id", node.id);
      n.get("cpus", node.cpus);
      n.get("memory_bytes", node.memory_bytes);
      inventory.numa_nodes.push_back(std::move(node));
    }
  }
  r.get("cpuset", inventory.cpuset);
  r.get("mems_allowed", inventory.mems_allowed);
  r.get("cpuset_aligned_with_gpu", inventory.cpuset_aligned_with_gpu);
  r.get("thp_enabled", inventory.thp_enabled);
  r.get("thp_defrag", inventory.thp_defrag);
  r.get("numa_balancing", inventory.numa_balancing);
  r.get("hugepages_total", inventory.hugepages_total);
  r.get("hugepages_free", inventory.hugepages_free);
  r.get("hugepage_bytes", inventory.hugepage_bytes);
  r.get("mem_total_bytes", inventory.mem_total_bytes);
  r.get("mem_available_bytes", inventory.mem_available_bytes);
  r.get("memlock_limit_bytes", inventory.memlock_limit_bytes);
  r.get("kernel", inventory.kernel);
  r.get("bios_vendor", inventory.bios_vendor);
  r.get("bios_version", inventory.bios_version);
  r.get("bios_date", inventory.bios_date);
  if (const auto* iommu = r.child("iommu"); iommu != nullptr && !iommu->is_null()) {
    JsonReader i(*iommu, "/iommu");
    i.get("mode", inventory.iommu.mode);
    i.get("groups", inventory.iommu.groups);
    i.get("cmdline", inventory.iommu.cmdline);
  }
  r.get("cuda_runtime_version", inventory.cuda_runtime_version);
  r.get("cuda_driver_version", inventory.cuda_driver_version);
  r.get("driver_version", inventory.driver_version);
  r.get("cuda_unavailable_reason", inventory.cuda_unavailable_reason);
  r.get("nvidia_smi_status", inventory.nvidia_smi_status);
  if (const auto* gpus = r.child("gpus")) {
    if (!gpus->is_array()) throw std::invalid_argument("inventory JSON /gpus: expected an array");
    for (std::size_t i = 0; i < gpus->size(); ++i) {
      JsonReader g((*gpus)[i], "/gpus/" + std::to_string(i));
      GpuInventory gpu;
      g.get("index", gpu.index);
      g.get("name", gpu.name);
      g.get("uuid", gpu.uuid);
      g.get("pci_bus_id", gpu.pci_bus_id);
      g.get("pcie_gen_current", gpu.pcie_gen_current);
      g.get("pcie_gen_max", gpu.pcie_gen_max);
      g.get("pcie_width_current", gpu.pcie_width_current);
      g.get("pcie_width_max", gpu.pcie_width_max);
      g.get("numa_node", gpu.numa_node);
      g.get("local_cpus", gpu.local_cpus);
      g.get("clock_sm_mhz", gpu.clock_sm_mhz);
      g.get("clock_mem_mhz", gpu.clock_mem_mhz);
      g.get("clock_sm_max_mhz", gpu.clock_sm_max_mhz);
      g.get("clock_mem_max_mhz", gpu.clock_mem_max_mhz);
      g.get("memory_bytes", gpu.memory_bytes);
      g.get("vbios", gpu.vbios);
      g.get("compute_capability", gpu.compute_capability);
      g.get("ecc_mode", gpu.ecc_mode);
      g.get("persistence_mode", gpu.persistence_mode);
      g.get("mig_mode", gpu.mig_mode);
      if (const auto* nvlink = g.child("nvlink"); nvlink != nullptr && !nvlink->is_null()) {
        JsonReader n(*nvlink, "/gpus/" + std::to_string(i) + "/nvlink");
        GpuNvlink value;
        n.get("active_links", value.active_links);
        n.get("link_gb_per_s", value.link_gb_per_s);
        gpu.nvlink = value;
      }
      inventory.gpus.push_back(std::move(gpu));
    }
  }
  r.get("topo_status", inventory.topo_status);
  if (const auto* links = r.child("links")) {
    if (!links->is_array()) throw std::invalid_argument("inventory JSON /links: expected an array");
    for (std::size_t i = 0; i < links->size(); ++i) {
      const std::string pointer = "/links/" + std::to_string(i);
      JsonReader l((*links)[i], pointer);
      GpuLink link;
      l.get("from", link.from);
      l.get("to", link.to);
      std::string type = link_type_name(LinkType::kUnknown);
      l.get("type", type);
      auto parsed = link_type_from_name(type);
      if (!parsed) {
        throw std::invalid_argument("inventory JSON " + pointer + "/type: unknown link type \"" +
                                    type + "\"");
      }
      link.type = *parsed;
      l.get("nvlinks", link.nvlinks);
      l.get("peer_access", link.peer_access);
      l.get("performance_rank", link.performance_rank);
      l.get("native_atomics", link.native_atomics);
      l.get("param", link.param);
      inventory.links.push_back(std::move(link));
    }
  }
  r.get("nvlink_status", inventory.nvlink_status);
  r.get("warnings", inventory.warnings);
  return inventory;
}

}  // namespace pathbench
