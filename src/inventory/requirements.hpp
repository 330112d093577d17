#pragma once

// What a case needs from the machine, declared by its family and judged in one place: one
// wording per requirement, each with the command that fixes it where there is one. The first
// unmet requirement is the case's skip reason.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "inventory/machine.hpp"

namespace pathbench {

// CUDART_VERSION of the CUDA runtime pathbench was built against (12080 is 12.8); 0 without CUDA.
int built_cuda_runtime();

class Requirements {
 public:
  // The --device GPU (`device`), usable by CUDA.
  Requirements& gpu();
  // Every GPU in use (gpus_in_use), usable, each with `bytes_each` of memory.
  Requirements& every_selected_gpu(std::uint64_t bytes_each = 0);
  // At least two selected GPUs (GPU pairs).
  Requirements& two_gpus();
  // The GPUs a case names (a peer pair) exist and are selected by --devices; `who` starts each
  // reason ("pair 0-1").
  Requirements& named_gpus(std::vector<int> gpus, std::string who);
  // The NUMA node of the --device GPU is known (host memory placed relative to it); with
  // `remote`, another node with memory exists too.
  Requirements& gpu_numa_node(bool remote = false);
  // A NUMA node other than the --device GPU's has CPUs this process may run on (threads=remote).
  Requirements& gpu_remote_cpus();
  // Likewise for every GPU in use (each GPU's host buffer on its own node).
  Requirements& numa_node_of_every_selected_gpu();
  // NUMA node `node` exists; with `cpus`, this process may run on some of its CPUs.
  Requirements& numa_node(int node, bool cpus = false);
  // The case may set /proc/sys/kernel/numa_balancing to `value` for its duration: two NUMA nodes
  // with memory (nothing to balance otherwise), the setting present, and the run allowed to
  // change it (--allow-numa-balancing-change).
  Requirements& numa_balancing_change(int value);
  // Transparent huge pages are not disabled.
  Requirements& transparent_huge_pages();
  // `buffers` buffers of `bytes` each in free hugetlb pages of the default size; with
  // `per_gpu`, that many for each GPU in use.
  Requirements& hugetlb_pages(std::uint64_t bytes, std::uint64_t buffers = 1, bool per_gpu = false);
  // RLIMIT_MEMLOCK admits locking `bytes` (or the process holds CAP_IPC_LOCK).
  Requirements& memlock(std::uint64_t bytes);
  // `pct` % of MemTotal may be locked to put the host under pinning pressure: within the run's
  // cap (Machine::pin_cap_pct, `--max-pinned-pct`), RLIMIT_MEMLOCK, and MemAvailable less the
  // case's own `other_bytes` and a margin for the system.
  Requirements& pinned_share(int pct, std::uint64_t other_bytes);
  // One host buffer of `bytes` for each GPU in use, within MemAvailable.
  Requirements& host_memory_per_gpu(std::uint64_t bytes);
  // GPU `accessor` may access GPU `peer`'s memory, as far as the inventory's link map knows (an
  // unknown answer passes: the bench asks the driver). `needed_by` says what needs it.
  Requirements& peer_access(int accessor, int peer, std::string needed_by);
  // The CUDA runtime pathbench was built against (`built`) has `feature`, added in `version`
  // (CUDART_VERSION form). A build without CUDA (0) is left to gpu(), which says so.
  Requirements& cuda_runtime(int version, std::string feature, int built = built_cuda_runtime());
  // A condition only the family can judge: its reason, else nothing.
  Requirements& custom(std::function<std::optional<std::string>(const Machine&, int)> judge);

  // The first unmet requirement's reason, in declaration order; nothing when all are met.
  std::optional<std::string> unmet(const Machine& machine, int device) const;

 private:
  std::vector<std::function<std::optional<std::string>(const Machine&, int)>> judges_;
};

// The GPUs the multi-GPU cases use: the selection (run --devices), or every GPU of a machine
// built without one; sorted.
std::vector<int> gpus_in_use(const Machine& machine);
// "2 (GPU 0: NVIDIA H200, GPU 1: NVIDIA H200)", "none": the machine's GPUs, for reasons.
std::string describe_gpus(const Machine& machine);
// "0,1"; "none" when empty.
std::string join_ids(const std::vector<int>& ids);
// Why GPU `accessor` cannot access GPU `peer`'s memory: the wording of the peer_access
// requirement, also for a bench that finds the driver refusing what the inventory did not know.
std::string no_peer_access_reason(int accessor, int peer, const GpuLink* link,
                                  const std::string& needed_by);
// The bytes `pct` % of the machine's MemTotal is, in whole 4 KiB pages.
std::uint64_t pinned_share_bytes(const Machine& machine, int pct);
// What pinning `pct` % leaves of MemAvailable for everything else at the least.
inline constexpr std::uint64_t kPinningHeadroomBytes = std::uint64_t{1} << 30;
// How to raise RLIMIT_MEMLOCK, for every reason that names it.
std::string memlock_fix();
// Whether this process holds CAP_IPC_LOCK (mlock beyond RLIMIT_MEMLOCK).
bool process_has_ipc_lock();

}  // namespace pathbench
