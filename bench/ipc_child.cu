// The child's side of the ipc family (`pathbench ipc-child --fd N`): it receives the parent's
// buffer (a CUDA IPC handle, a VMM export's file descriptor, or a memfd of shared host memory),
// and for every sample command opens it (timed), reads it `accesses` times behind a latch (CUDA
// events), verifies the parent's pattern, closes it (timed) and replies with the numbers. It works
// on the GPU the setup command names, which differs from the exporter's for a GPU pair: the
// imported memory is then another GPU's, read over peer access.
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "bench/ipc.hpp"
#include "core/errors.hpp"
#include "core/ipc_channel.hpp"
#include "core/pattern_word.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/kernel_loading.hpp"
#include "cuda/latch.hpp"
#include "cuda/vmm_driver_api.hpp"

namespace pathbench {

namespace {

using Method = IpcRequest::Method;
using Access = IpcRequest::Access;
using Clock = std::chrono::steady_clock;

constexpr double kLatchTimeout = 20.0;  // s: enqueueing a block never takes this long

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Reads every 8-byte word of the shared buffer and counts those that differ from the parent's
// pattern: the read is the measurement, the count its verification.
__global__ void read_and_compare(const unsigned long long* words, std::size_t count,
                                 std::uint64_t seed, unsigned long long* mismatches) {
  unsigned long long differ = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    if (words[i] != pattern_word(seed, i)) ++differ;
  }
  if (differ != 0) atomicAdd(mismatches, differ);
}

// A mapping of the parent's memfd (shared host memory), unmapped on destruction.
class SharedMapping {
 public:
  SharedMapping(int fd, std::size_t bytes) : bytes_(bytes) {
    ptr_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ptr_ == MAP_FAILED) {
      ptr_ = nullptr;
      throw SystemError("mmap of the parent's shared memory", errno);
    }
  }
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;
  ~SharedMapping() {
    if (ptr_) ::munmap(ptr_, bytes_);
  }
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

// What the child holds open during one sample; close() is timed, the destructor closes whatever
// an exception left open.
class Opened {
 public:
  virtual ~Opened() = default;
  virtual const std::byte* device_pointer() const = 0;
  virtual void close() = 0;
};

class OpenedIpcHandle final : public Opened {
 public:
  explicit OpenedIpcHandle(const cudaIpcMemHandle_t& h) {
    PB_CUDA(cudaIpcOpenMemHandle(&ptr_, h, cudaIpcMemLazyEnablePeerAccess));
  }
  ~OpenedIpcHandle() override {
    if (ptr_) cudaIpcCloseMemHandle(ptr_);
  }
  const std::byte* device_pointer() const override { return static_cast<std::byte*>(ptr_); }
  void close() override {
    void* p = std::exchange(ptr_, nullptr);
    PB_CUDA(cudaIpcCloseMemHandle(p));
  }

 private:
  void* ptr_ = nullptr;
};

class OpenedVmmImport final : public Opened {
 public:
  OpenedVmmImport(const VmmDriverApi& api, int fd, std::size_t bytes, std::size_t alignment,
                  int device) {
    CUmemGenericAllocationHandle h{};
    PB_CU(api, import_handle(&h, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    handle_ = std::make_unique<VmmHandle>(api, h);
    mapping_ = std::make_unique<VmmMapping>(api, h, bytes, alignment, device);
  }
  const std::byte* device_pointer() const override { return mapping_->get(); }
  void close() override {
    mapping_.reset();
    handle_.reset();
  }

 private:
  std::unique_ptr<VmmHandle> handle_;  // destroyed after the mapping
  std::unique_ptr<VmmMapping> mapping_;
};

class OpenedRegistration final : public Opened {
 public:
  OpenedRegistration(void* host, std::size_t bytes) {
    PB_CUDA(cudaHostRegister(host, bytes, cudaHostRegisterMapped));
    host_ = host;
    void* device = nullptr;
    PB_CUDA(cudaHostGetDevicePointer(&device, host, 0));
    device_ = static_cast<std::byte*>(device);
  }
  ~OpenedRegistration() override {
    if (host_) cudaHostUnregister(host_);
  }
  const std::byte* device_pointer() const override { return device_; }
  void close() override { PB_CUDA(cudaHostUnregister(std::exchange(host_, nullptr))); }

 private:
  void* host_ = nullptr;
  std::byte* device_ = nullptr;
};

// Everything the child allocates for a case, made by the setup command.
class ChildCase {
 public:
  explicit ChildCase(const IpcChildSetup& setup)
      : r_(setup.request),
        device_(make_current(setup.device)),
        seed_(setup.seed),
        read_where_(read_where(setup)) {
    PB_CUDA(cudaFree(nullptr));  // the context now, not inside the first timed open
    PB_CUDA(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_));
    if (r_.access == Access::kCopy) destination_ = DeviceMemory(r_.bytes);
    mismatches_ = DeviceMemory(sizeof(unsigned long long));
    // Loaded now: lazily loaded at its first launch, inside the latched block, it would block the
    // enqueueing thread until the latch gives up (cuda/kernel_loading.hpp).
    load_kernel(read_and_compare);
  }

  void take_handle(const std::string& blob) {
    std::memcpy(handle_.reserved, blob.data(), sizeof(handle_.reserved));
    have_handle_ = true;
  }

  void take_descriptor(const nlohmann::json& what, UniqueFd fd) {
    const std::string kind = what.value("kind", "");
    const std::uint64_t bytes = what.value("bytes", std::uint64_t{0});
    if (kind == "memfd" && r_.method == Method::kSharedPinned && bytes == r_.bytes) {
      shared_ = std::make_unique<SharedMapping>(fd.get(), bytes);
    } else if (kind == "vmm" && r_.method == Method::kVmmFd && bytes >= r_.bytes) {
      vmm_fd_ = std::move(fd);
      vmm_bytes_ = bytes;
      vmm_alignment_ = what.value("alignment", std::uint64_t{0});
    } else {
      throw CaseFailure("the child did not expect a descriptor " + what.dump() + " for method " +
                        std::string(to_string(r_.method)));
    }
  }

  nlohmann::json sample(std::uint64_t accesses) {
    const auto t_open = Clock::now();
    std::unique_ptr<Opened> opened = open();
    const double open_time = since(t_open);

    const std::byte* source = opened->device_pointer();
    if (r_.access == Access::kCopy) {
      PB_CUDA(cudaMemsetAsync(destination_.get(), 0, r_.bytes, stream_.get()));
    } else {
      PB_CUDA(cudaMemsetAsync(mismatches_.get(), 0, sizeof(unsigned long long), stream_.get()));
    }
    stream_.synchronize();
    latch_.hold(stream_.get(), kLatchTimeout);
    PB_CUDA(cudaEventRecord(start_.get(), stream_.get()));
    for (std::uint64_t i = 0; i < accesses; ++i) {
      if (r_.access == Access::kCopy) {
        PB_CUDA(cudaMemcpyAsync(destination_.get(), source, r_.bytes, cudaMemcpyDefault,
                                stream_.get()));
      } else {
        read_and_compare<<<sms_ * 8, 256, 0, stream_.get()>>>(
            reinterpret_cast<const unsigned long long*>(source), r_.bytes / 8, seed_,
            reinterpret_cast<unsigned long long*>(mismatches_.get()));
        PB_CUDA(cudaGetLastError());
      }
    }
    PB_CUDA(cudaEventRecord(stop_.get(), stream_.get()));
    latch_.release();
    stream_.synchronize();
    if (latch_.timed_out()) {
      throw CaseFailure("the child's latch timed out: enqueueing the accesses blocked");
    }
    float ms = 0;
    PB_CUDA(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));

    std::string verified;
    if (r_.access == Access::kCopy) {
      checker_.verify(destination_.get(), r_.bytes, seed_, stream_.get(),
                      "the child's copy of the shared buffer");
      verified = "the child's copy matched the parent's pattern byte for byte";
    } else {
      unsigned long long differ = 0;
      PB_CUDA(cudaMemcpy(&differ, mismatches_.get(), sizeof(differ), cudaMemcpyDeviceToHost));
      if (differ != 0) {
        throw CaseFailure("the child's kernel read " + std::to_string(differ) +
                          " words of the shared buffer that differ from the parent's pattern");
      }
      verified = "the child's kernel read every 8-byte word and found the parent's pattern";
    }
    verified += read_where_;

    const auto t_close = Clock::now();
    opened->close();
    const double close_time = since(t_close);
    return {{"open_time", open_time},
            {"close_time", close_time},
            {"access_seconds", static_cast<double>(ms) * 1e-3},
            {"accesses", accesses},
            {"verified", verified}};
  }

 private:
  std::unique_ptr<Opened> open() {
    switch (r_.method) {
      case Method::kCudaIpc: {
        if (!have_handle_) throw CaseFailure("a sample without a CUDA IPC handle before it");
        have_handle_ = false;  // the parent exports one per sample
        return std::make_unique<OpenedIpcHandle>(handle_);
      }
      case Method::kVmmFd: {
        if (!vmm_fd_) throw CaseFailure("a sample without a VMM file descriptor before it");
        UniqueFd fd = std::move(vmm_fd_);  // imported once; the import holds the allocation
        return std::make_unique<OpenedVmmImport>(VmmDriverApi::get(), fd.get(), vmm_bytes_,
                                                 vmm_alignment_, device_);
      }
      case Method::kSharedPinned:
        if (!shared_) throw CaseFailure("a sample before the shared memory's descriptor");
        return std::make_unique<OpenedRegistration>(shared_->get(), r_.bytes);
    }
    throw CaseFailure("unknown method");
  }

  // " (GPU 1 reading GPU 0's memory)" across a pair; nothing on one GPU, as before pairs.
  static std::string read_where(const IpcChildSetup& setup) {
    if (setup.device == setup.exporter_device) return {};
    const std::string exported = setup.request.method == Method::kSharedPinned
                                     ? std::string("host memory")
                                     : "GPU " + std::to_string(setup.exporter_device) + "'s memory";
    return " (GPU " + std::to_string(setup.device) + " reading " + exported + ")";
  }

  IpcRequest r_;
  int device_;
  std::uint64_t seed_;
  std::string read_where_;
  int sms_ = 1;
  Stream stream_;
  Event start_, stop_;
  Latch latch_;
  DevicePatternChecker checker_;
  DeviceMemory destination_, mismatches_;
  cudaIpcMemHandle_t handle_{};
  bool have_handle_ = false;
  UniqueFd vmm_fd_;
  std::uint64_t vmm_bytes_ = 0, vmm_alignment_ = 0;
  std::unique_ptr<SharedMapping> shared_;
};

}  // namespace

int run_ipc_child(int argc, char** argv) {
  int fd = -1;
  for (int i = 0; i + 1 < argc; ++i) {
    if (std::string_view(argv[i]) == "--fd") fd = std::atoi(argv[i + 1]);
  }
  if (fd < 0) {
    std::fprintf(stderr, "pathbench ipc-child: --fd N is required (started by the ipc family)\n");
    return 3;
  }
  IpcChannel channel{UniqueFd(fd)};
  std::unique_ptr<ChildCase> state;
  try {
    channel.send(IpcMessageType::kHello,
                 nlohmann::json{{"protocol", kIpcProtocolVersion}, {"pid", ::getpid()}}.dump());
  } catch (const IpcError&) {
    return 2;
  }
  for (;;) {
    IpcMessage m;
    try {
      // The parent waits for us, never the other way round for long: a parent gone is our end.
      m = channel.receive(std::chrono::minutes(10));
    } catch (const IpcError& e) {
      return e.kind() == IpcError::Kind::kEof ? 1 : 2;
    }
    try {
      if (m.type == IpcMessageType::kIpcHandle) {
        if (!state) throw CaseFailure("an ipc_handle before setup");
        state->take_handle(m.payload);
        continue;
      }
      if (m.type == IpcMessageType::kDescriptor) {
        if (!state) throw CaseFailure("a descriptor before setup");
        state->take_descriptor(nlohmann::json::parse(m.payload), std::move(m.fd));
        continue;
      }
      if (m.type != IpcMessageType::kCommand) {
        throw CaseFailure("the child does not take " + std::string(to_string(m.type)) +
                          " messages");
      }
      const auto j = nlohmann::json::parse(m.payload);
      const std::string op = j.value("op", "");
      if (op == "exit") return 0;
      if (op == "setup") {
        state.reset();
        state = std::make_unique<ChildCase>(parse_ipc_setup_command(j));
        channel.send(IpcMessageType::kResult, R"({"ready":true})");
      } else if (op == "sample") {
        if (!state) throw CaseFailure("a sample before setup");
        channel.send(IpcMessageType::kResult,
                     state->sample(j.value("accesses", std::uint64_t{1})).dump());
      } else {
        throw CaseFailure("unknown command " + j.dump());
      }
    } catch (const IpcError&) {
      return 2;
    } catch (const std::exception& e) {
      // Told to the parent, which fails the case; the child keeps serving until told to exit.
      try {
        channel.send(IpcMessageType::kError, shortened_text(e.what()));
      } catch (const IpcError&) {
        return 2;
      }
    }
  }
}

}  // namespace pathbench
