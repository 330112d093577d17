#pragma once

// The `ipc` family: two processes share one buffer. pathbench starts a child of itself
// (`pathbench ipc-child --fd 3`, a hidden helper mode) and hands it the parent's buffer as a CUDA
// IPC handle (cudaIpcGetMemHandle), as a VMM allocation exported to a POSIX file descriptor
// (cuMemExportToShareableHandle, the descriptor passed with SCM_RIGHTS), or as shared host memory
// (memfd, mmap and cudaHostRegister in both processes). The child opens it, reads it (a copy into
// its own device buffer, or a kernel), verifies the parent's pattern and reports over the channel
// (core/ipc_channel.hpp). Every repetition is one round trip: the parent exports, the child opens,
// reads N times, verifies, closes.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ipc_child.hpp"
#include "measure/family.hpp"

namespace pathbench {

struct IpcRequest {
  enum class Method { kCudaIpc, kVmmFd, kSharedPinned };
  enum class Access { kCopy, kKernel };
  Method method = Method::kCudaIpc;
  Access access = Access::kCopy;
  std::uint64_t bytes = 0;
};
IpcRequest decode_ipc_request(const CaseSpec& spec);
std::string_view to_string(IpcRequest::Method m);
std::string_view to_string(IpcRequest::Access a);
std::optional<IpcRequest::Method> ipc_method_from(std::string_view name);
std::optional<IpcRequest::Access> ipc_access_from(std::string_view name);

// The metrics an ipc case records, in order: export_time, open_time, close_time, bandwidth.
std::vector<MetricSpec> ipc_metrics();

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

// The commands the parent sends and the child's reply to a sample, host-side (unit-tested).
std::string ipc_setup_command(const IpcRequest& r, int device, std::uint64_t seed);
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
