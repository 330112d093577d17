#pragma once

// The `ipc` family: two processes share one buffer. pathbench starts a child of itself
// (`pathbench ipc-child --fd 3`, a hidden helper mode) and hands it the parent's buffer as a CUDA
// IPC handle (cudaIpcGetMemHandle), as a VMM allocation exported to a POSIX file descriptor
// (cuMemExportToShareableHandle, the descriptor passed with SCM_RIGHTS), or as shared host memory
// (memfd, mmap and cudaHostRegister in both processes). The child opens it, reads it (a copy into
// its own device buffer, or a kernel), verifies the parent's pattern and reports over the channel
// (core/ipc_channel.hpp). Every repetition is one round trip: the parent exports, the child opens,
// reads N times, verifies, closes.
//
// Without the optional `pair` axis both processes use --device. With pair "S-D" the parent's
// buffer lives on GPU S (host memory for shared_pinned) and the child imports it on GPU D, where
// its own destination buffer and kernel are: cuda_ipc and vmm_fd then read S's memory over peer
// access from D.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/ipc_child.hpp"
#include "measure/family.hpp"

namespace pathbench {

struct IpcRequest {
  enum class Method { kCudaIpc, kVmmFd, kSharedPinned };
  enum class Access { kCopy, kKernel };
  Method method = Method::kCudaIpc;
  Access access = Access::kCopy;
  std::uint64_t bytes = 0;
  std::string pair;                         // the pair axis: "S-D", "none"; empty without it
  std::optional<std::pair<int, int>> gpus;  // {S, D}; empty without the axis or for "none"

  bool has_pair() const { return !pair.empty(); }
  // The parent's (exporter's) GPU and the child's (importer's): the pair's, else `device`.
  int exporter_gpu(int device) const { return gpus ? gpus->first : device; }
  int importer_gpu(int device) const { return gpus ? gpus->second : device; }
  // The child maps GPU memory of another GPU: cuda_ipc and vmm_fd across a pair.
  bool needs_peer_access() const { return gpus && method != Method::kSharedPinned; }
};
IpcRequest decode_ipc_request(const CaseSpec& spec);
std::string_view to_string(IpcRequest::Method m);
std::string_view to_string(IpcRequest::Access a);
std::optional<IpcRequest::Method> ipc_method_from(std::string_view name);
std::optional<IpcRequest::Access> ipc_access_from(std::string_view name);

// The metrics an ipc case records, in order: export_time, open_time, close_time, bandwidth.
std::vector<MetricSpec> ipc_metrics();

// What needs peer access from the importer's GPU to the exporter's (a method that maps the
// exporter's GPU memory in the child): the end of the requirement's reason, and of the bench's
// when the driver refuses what the inventory did not know.
std::string ipc_peer_access_need(const IpcRequest& r);
// Where the shared buffer lives and where the child reads it: "GPU 0's memory, read by the child
// on GPU 1", "host memory, read by the child on GPU 1".
std::string ipc_placement(const IpcRequest& r, int device);

// How the parent starts its child: the program and its leading arguments ("--fd 3" follows).
// The default is the running pathbench binary (/proc/self/exe, resolved) in its helper mode; a
// test binary, whose /proc/self/exe is itself, passes the pathbench binary's path instead, and the
// unit tests pass fake children (a crash, a hang, junk).
struct IpcChildCommand {
  std::vector<std::string> argv;
  IpcChildOptions options;
};
IpcChildCommand default_ipc_child_command();

std::unique_ptr<Family> make_ipc_family(IpcChildCommand child = default_ipc_child_command());

// The commands the parent sends and the child's reply to a sample, host-side (unit-tested). The
// setup names the child's GPU (`device`: the importer's, r.importer_gpu of --device) and the
// exporter's (`exporter_device`; the same GPU without a pair).
std::string ipc_setup_command(const IpcRequest& r, int device, std::uint64_t seed);
// What a setup command asks of the child, decoded; throws CaseFailure naming what is wrong.
struct IpcChildSetup {
  IpcRequest request;
  int device = 0;           // the child's GPU: it imports, copies and reads there
  int exporter_device = 0;  // the GPU whose memory the parent shares (the same without a pair)
  std::uint64_t seed = 1;
};
IpcChildSetup parse_ipc_setup_command(const nlohmann::json& command);
std::string ipc_sample_command(std::uint64_t accesses);
struct IpcSampleReply {
  double open_time = 0;       // s, the child's open/import/register of the shared buffer
  double close_time = 0;      // s, its close/unmap/unregister
  double access_seconds = 0;  // s, CUDA events around `accesses` reads, latched
  std::uint64_t accesses = 0;
  std::string verified;  // what the child checked
};
// Throws CaseFailure naming what is missing or wrong in the child's reply.
IpcSampleReply parse_ipc_sample_reply(const std::string& json, std::uint64_t accesses_asked);

// The CUDA bench (bench/ipc.cu).
std::unique_ptr<CaseBench> make_ipc_bench(const IpcRequest& r, const Machine& machine, int device,
                                          const IpcChildCommand& child);

// The child's side (`pathbench ipc-child --fd N`): serves the parent until told to exit or until
// the channel closes. Returns the process exit status. bench/ipc_child.cu; a build without CUDA
// answers every command with an error (bench/ipc_child_none.cpp).
int run_ipc_child(int argc, char** argv);

}  // namespace pathbench
