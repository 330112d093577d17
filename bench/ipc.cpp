#include "bench/ipc.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "measure/gpu_bench.hpp"
#include "scenario/typed_axis.hpp"

namespace pathbench {

namespace {

using Method = IpcRequest::Method;
using Access = IpcRequest::Access;

const EnumAxis<Method> kMethod{
    "method",
    {{"cuda_ipc", Method::kCudaIpc},
     {"vmm_fd", Method::kVmmFd},
     {"shared_pinned", Method::kSharedPinned}},
    "cuda_ipc: cudaMalloc + cudaIpcGetMemHandle, the child cudaIpcOpenMemHandle; vmm_fd: "
    "cuMemCreate exported as a POSIX fd (SCM_RIGHTS), the child imports and maps it; "
    "shared_pinned: memfd mmap'ed and cudaHostRegister'ed in both processes"};
const EnumAxis<Access> kAccess{
    "access",
    {{"copy", Access::kCopy}, {"kernel", Access::kKernel}},
    "copy: the child cudaMemcpy's the shared buffer into its own device buffer; kernel: a kernel "
    "in the child reads every word of the shared buffer"};
const IntegerAxis kBytes{"bytes", std::int64_t{1} << 20, std::int64_t{16} << 30,
                         "size of the shared buffer (1 MiB .. 16 GiB, a multiple of 4 KiB)"};
const GpuPairAxis kPair{"pair",
                        "optional: the parent's (exporter's) GPU S, holding the buffer, and the "
                        "child's (importer's) GPU D, reading it; without it both use --device"};

class IpcFamily final : public DeclaredFamily {
 public:
  explicit IpcFamily(IpcChildCommand child)
      : DeclaredFamily({"ipc",
                        "cross-process GPU memory sharing: a child process opens the parent's "
                        "buffer through a CUDA IPC handle, a VMM allocation exported as a file "
                        "descriptor, or shared host memory registered in both; export, open and "
                        "close cost and the child's read bandwidth (copy or kernel), verified "
                        "against the parent's pattern in the child",
                        axis_schemas(kMethod, kAccess, kBytes, kPair),
                        {"method", "access", "bytes"}}),
        child_(std::move(child)) {}

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    if (kPair.present(spec)) {
      if (auto why = kPair.invalid(spec)) return why;
    }
    const IpcRequest r = decode_ipc_request(spec);
    if (r.bytes % 4096 != 0) {
      return "bytes " + std::to_string(r.bytes) +
             " is not a multiple of 4 KiB (shared memory is mapped in pages)";
    }
    return std::nullopt;
  }

  // The parent's buffer (device, or host for shared_pinned) and, for copy, the child's own
  // device buffer: on one GPU without a pair, on a GPU each with one (device_bytes is per GPU).
  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const IpcRequest r = decode_ipc_request(spec);
    const std::uint64_t copy = r.access == Access::kCopy ? r.bytes : 0;
    if (r.method == Method::kSharedPinned) return {r.bytes, copy};
    return {0, r.has_pair() ? std::max(r.bytes, copy) : r.bytes + copy};
  }

  // Without a pair the --device GPU; with one, the pair's GPUs (never --device) and, for a
  // method that maps the exporter's memory on the importer's GPU, peer access between them.
  Requirements requirements(const CaseSpec& spec) const override {
    const IpcRequest r = decode_ipc_request(spec);
    if (!r.has_pair()) return Requirements().gpu();
    Requirements needs = kPair.requirements(spec);
    if (r.needs_peer_access()) {
      needs.peer_access(r.gpus->second, r.gpus->first, ipc_peer_access_need(r));
    }
    return needs;
  }

  std::optional<std::vector<std::string>> metric_names(const CaseSpec&) const override {
    return metric_names_of(ipc_metrics());
  }

  void derive_params(CaseSpec& spec, const Machine& machine) const override {
    kPair.derive_link(spec, machine);
  }

  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    PATHBENCH_GPU_BENCH(make_ipc_bench(decode_ipc_request(spec), machine, device, child_));
  }

 private:
  IpcChildCommand child_;
};

double finite_seconds(const nlohmann::json& j, const char* key, bool positive) {
  if (!j.contains(key) || !j[key].is_number()) {
    throw CaseFailure(std::string("the ipc child's sample reply has no number \"") + key + "\"");
  }
  const double v = j[key].get<double>();
  if (!std::isfinite(v) || v < 0 || (positive && v == 0)) {
    throw CaseFailure(std::string("the ipc child's sample reply has an impossible \"") + key +
                      "\": " + j[key].dump());
  }
  return v;
}

}  // namespace

IpcRequest decode_ipc_request(const CaseSpec& spec) {
  IpcRequest r;
  r.method = kMethod.decode(spec);
  r.access = kAccess.decode(spec);
  r.bytes = static_cast<std::uint64_t>(kBytes.decode(spec));
  if (kPair.present(spec)) {
    r.pair = spec.str(kPair.name());
    r.gpus = kPair.decode(spec);
  }
  return r;
}

std::string_view to_string(Method m) {
  switch (m) {
    case Method::kCudaIpc:
      return "cuda_ipc";
    case Method::kVmmFd:
      return "vmm_fd";
    case Method::kSharedPinned:
      return "shared_pinned";
  }
  return "?";
}

std::string_view to_string(Access a) { return a == Access::kCopy ? "copy" : "kernel"; }

std::optional<Method> ipc_method_from(std::string_view name) {
  for (Method m : {Method::kCudaIpc, Method::kVmmFd, Method::kSharedPinned}) {
    if (to_string(m) == name) return m;
  }
  return std::nullopt;
}

std::optional<Access> ipc_access_from(std::string_view name) {
  for (Access a : {Access::kCopy, Access::kKernel}) {
    if (to_string(a) == name) return a;
  }
  return std::nullopt;
}

std::vector<MetricSpec> ipc_metrics() {
  return {{"export_time", "s", Better::kLower},
          {"open_time", "s", Better::kLower},
          {"close_time", "s", Better::kLower},
          {"bandwidth", "GB/s", Better::kHigher}};
}

std::string ipc_peer_access_need(const IpcRequest& r) {
  const std::string how = r.method == Method::kCudaIpc
                              ? "cudaIpcOpenMemHandle with cudaIpcMemLazyEnablePeerAccess"
                              : "cuMemSetAccess for its GPU on the imported allocation";
  return "method=" + std::string(to_string(r.method)) +
         " across GPUs maps the exporter's GPU memory in the child on the other GPU (" + how +
         "), which needs peer access; shared_pinned shares host memory across this pair";
}

std::string ipc_placement(const IpcRequest& r, int device) {
  const std::string where = r.method == Method::kSharedPinned
                                ? std::string("host memory")
                                : "GPU " + std::to_string(r.exporter_gpu(device)) + "'s memory";
  return where + ", read by the child on GPU " + std::to_string(r.importer_gpu(device));
}

IpcChildCommand default_ipc_child_command() {
  // Resolved now, in the parent: the helper is this very binary, whatever it was called as.
  std::string self(PATH_MAX, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  self.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (self.empty()) self = "/proc/self/exe";
  return {{self, "ipc-child"}, {}};
}

std::unique_ptr<Family> make_ipc_family(IpcChildCommand child) {
  return std::make_unique<IpcFamily>(std::move(child));
}

std::string ipc_setup_command(const IpcRequest& r, int device, std::uint64_t seed) {
  return nlohmann::json{{"op", "setup"},
                        {"method", to_string(r.method)},
                        {"access", to_string(r.access)},
                        {"bytes", r.bytes},
                        {"device", r.importer_gpu(device)},
                        {"exporter_device", r.exporter_gpu(device)},
                        {"seed", seed}}
      .dump();
}

IpcChildSetup parse_ipc_setup_command(const nlohmann::json& j) {
  const auto text = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  const auto device = [&](const char* key, int absent) {
    if (!j.contains(key)) return absent;
    if (!j[key].is_number_integer() || j[key].get<std::int64_t>() < 0 ||
        j[key].get<std::int64_t>() > INT_MAX) {
      throw CaseFailure(std::string("the child cannot set up ") + j.dump() + ": \"" + key +
                        "\" is not a CUDA device index");
    }
    return j[key].get<int>();
  };
  const auto method = ipc_method_from(text("method"));
  const auto access = ipc_access_from(text("access"));
  const std::uint64_t bytes =
      j.contains("bytes") && j["bytes"].is_number_unsigned() ? j["bytes"].get<std::uint64_t>() : 0;
  if (!method || !access || bytes == 0 || bytes % 8 != 0) {
    throw CaseFailure("the child cannot set up " + j.dump());
  }
  IpcChildSetup setup;
  setup.request.method = *method;
  setup.request.access = *access;
  setup.request.bytes = bytes;
  setup.device = device("device", 0);
  setup.exporter_device = device("exporter_device", setup.device);
  setup.seed = j.contains("seed") && j["seed"].is_number_unsigned() ? j["seed"].get<std::uint64_t>()
                                                                    : std::uint64_t{1};
  return setup;
}

std::string ipc_sample_command(std::uint64_t accesses) {
  return nlohmann::json{{"op", "sample"}, {"accesses", accesses}}.dump();
}

IpcSampleReply parse_ipc_sample_reply(const std::string& json, std::uint64_t accesses_asked) {
  const auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object()) {
    throw CaseFailure("the ipc child's sample reply is not a JSON object: " +
                      printable_text(shortened_text(json)));
  }
  IpcSampleReply r;
  r.open_time = finite_seconds(j, "open_time", false);
  r.close_time = finite_seconds(j, "close_time", false);
  r.access_seconds = finite_seconds(j, "access_seconds", true);
  if (!j.contains("accesses") || !j["accesses"].is_number_unsigned() ||
      j["accesses"].get<std::uint64_t>() != accesses_asked) {
    throw CaseFailure("the ipc child performed " +
                      (j.contains("accesses") ? j["accesses"].dump() : std::string("no")) +
                      " accesses, asked for " + std::to_string(accesses_asked));
  }
  r.accesses = accesses_asked;
  if (!j.contains("verified") || !j["verified"].is_string() ||
      j["verified"].get<std::string>().empty()) {
    throw CaseFailure("the ipc child's sample reply does not say what it verified");
  }
  r.verified = j["verified"].get<std::string>();
  return r;
}

}  // namespace pathbench
