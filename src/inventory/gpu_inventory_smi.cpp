// The nvidia-smi fallback of the GPU inventory: the query (PCIe link, clocks, modes), `topo -m`
// (the link map) and `nvlink -s`, each a fixed argument vector, parsed by nvidia_smi.cpp,
// topology.cpp and nvlink.cpp.
#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "inventory/gpu_inventory.hpp"
#include "inventory/nvidia_smi_run.hpp"
#include "inventory/nvlink.hpp"

namespace pathbench {
namespace {

// Runs the nvidia-smi query; returns its rows and sets `status` to "ok" or the reason it has none.
std::vector<NvidiaSmiGpu> query_nvidia_smi(std::string& status) {
  SmiRun run = run_nvidia_smi(nvidia_smi_query_argv());
  if (!run.text) {
    status = run.error;
    return {};
  }
  try {
    auto rows = parse_nvidia_smi_query(*run.text);
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
  SmiRun run = run_nvidia_smi(argv, what);
  if (!run.text) status = run.error;
  return std::move(run.text);
}

// Runs `nvidia-smi topo -m` and the link map; sets topo_status to "ok" or why there are no links.
void collect_links(Inventory& inventory, const CudaProbe& probe,
                   const std::vector<NvidiaSmiGpu>& rows) {
  if (inventory.nvidia_smi_status != "ok") {
    inventory.topo_status =
        "no topology: nvidia-smi unavailable (" + inventory.nvidia_smi_status + ")";
    return;
  }
  if (inventory.gpus.size() < 2) {
    apply_topology(inventory, probe, rows, {}, "nvidia-smi topo -m");  // says why not
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

  apply_topology(inventory, probe, rows, std::move(topo), "nvidia-smi topo -m");
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

}  // namespace

std::vector<NvidiaSmiGpu> collect_gpus_smi(Inventory& inventory, const CudaProbe& probe) {
  auto rows = query_nvidia_smi(inventory.nvidia_smi_status);
  if (!rows.empty()) inventory.driver_version = rows.front().driver_version;
  inventory.gpus = merge_gpu_sources(probe.devices, rows, inventory.warnings);
  inventory.inventory_source = rows.empty() ? "none" : "nvidia-smi";
  collect_links(inventory, probe, rows);
  collect_nvlink(inventory, rows);
  for (auto& link : inventory.links) link.topology_source = "nvidia-smi";
  return rows;
}

}  // namespace pathbench
