// The parent's side of the ipc family: it owns the shared buffer (cudaMalloc, cuMemCreate, or a
// memfd), filled with a seeded pattern, and the child (core/ipc_child.hpp). Each sample it
// exports the buffer (timed here), hands it over and asks the child for one sample. With a GPU
// pair the buffer is on the exporter's GPU and the setup command sends the child to the other.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "bench/ipc.hpp"
#include "core/errors.hpp"
#include "core/ipc_channel.hpp"
#include "core/units.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/peer_access.hpp"
#include "cuda/vmm_driver_api.hpp"
#include "inventory/requirements.hpp"
#include "measure/link_check.hpp"
#include "measure/pattern.hpp"

namespace pathbench {

namespace {

using Method = IpcRequest::Method;
using Access = IpcRequest::Access;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kMaxAccesses = 256;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A memfd of `bytes` mapped shared: what the parent fills and the child maps too.
class SharedHostMemory {
 public:
  explicit SharedHostMemory(std::size_t bytes) : bytes_(bytes) {
    fd_ = UniqueFd(::memfd_create("pathbench-ipc", MFD_CLOEXEC));
    if (!fd_) throw SystemError("memfd_create", errno);
    if (::ftruncate(fd_.get(), static_cast<off_t>(bytes)) != 0) {
      throw SystemError("ftruncate of the shared memory", errno);
    }
    ptr_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0);
    if (ptr_ == MAP_FAILED) {
      ptr_ = nullptr;
      throw SystemError("mmap of the shared memory", errno);
    }
  }
  SharedHostMemory(const SharedHostMemory&) = delete;
  SharedHostMemory& operator=(const SharedHostMemory&) = delete;
  ~SharedHostMemory() {
    if (ptr_) ::munmap(ptr_, bytes_);
  }
  std::byte* get() const { return static_cast<std::byte*>(ptr_); }
  int fd() const { return fd_.get(); }

 private:
  std::size_t bytes_;
  UniqueFd fd_;
  void* ptr_ = nullptr;
};

// The parent's VMM allocation, exportable as a POSIX fd, mapped here for the pattern fill.
struct VmmExport {
  const VmmDriverApi& api;
  std::size_t granularity = 0, bytes = 0;
  std::unique_ptr<VmmHandle> handle;
  std::unique_ptr<VmmMapping> mapping;
};

std::unique_ptr<VmmExport> make_vmm_export(std::uint64_t bytes, int device) {
  const VmmDriverApi& api = VmmDriverApi::get();
  int vmm = 0, fd_ok = 0;
  PB_CU(api,
        device_attribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device));
  PB_CU(api, device_attribute(
                 &fd_ok, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, device));
  if (!vmm) throw SkipCase("the device does not support virtual memory management (cuMemCreate)");
  if (!fd_ok) {
    throw SkipCase("the device cannot export VMM allocations as POSIX file descriptors");
  }
  auto e = std::make_unique<VmmExport>(VmmExport{api});
  const CUmemAllocationProp prop = vmm_fd_properties(device);
  PB_CU(api, granularity(&e->granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  e->bytes = (bytes + e->granularity - 1) / e->granularity * e->granularity;
  CUmemGenericAllocationHandle h{};
  PB_CU(api, mem_create(&h, e->bytes, &prop, 0));
  e->handle = std::make_unique<VmmHandle>(api, h);
  e->mapping = std::make_unique<VmmMapping>(api, h, e->bytes, e->granularity, device);
  return e;
}

class IpcBench final : public CaseBench {
 public:
  IpcBench(const IpcRequest& r, const Machine& machine, int device, const IpcChildCommand& command)
      : r_(r), device_(make_current(r.exporter_gpu(device))) {
    if (r.gpus) check_pair(machine);
    switch (r.method) {
      case Method::kCudaIpc:
        device_buffer_ = DeviceMemory(r.bytes);
        fill_pattern_on_device(device_buffer_.get(), r.bytes, seed_, nullptr);
        PB_CUDA(cudaDeviceSynchronize());
        shared_what_ = "cudaMalloc buffer of " + format_bytes(r.bytes);
        break;
      case Method::kVmmFd:
        vmm_ = make_vmm_export(r.bytes, device_);
        fill_pattern_on_device(vmm_->mapping->get(), r.bytes, seed_, nullptr);
        PB_CUDA(cudaDeviceSynchronize());
        shared_what_ = "cuMemCreate allocation of " + format_bytes(vmm_->bytes) + " (granularity " +
                       format_bytes(vmm_->granularity) + ") exported as a POSIX file descriptor";
        break;
      case Method::kSharedPinned:
        host_ = std::make_unique<SharedHostMemory>(r.bytes);
        fill_pattern({host_->get(), r.bytes}, seed_);
        shared_what_ = "memfd of " + format_bytes(r.bytes) + " mapped shared in both processes";
        break;
    }
    shared_what_ += "; " + ipc_placement(r, device);
    child_ = std::make_unique<IpcChild>(command.argv, command.options);
    child_->request(ipc_setup_command(r, device, seed_));
    if (r.method == Method::kSharedPinned) {
      child_->send(IpcMessageType::kDescriptor,
                   nlohmann::json{{"kind", "memfd"}, {"bytes", r.bytes}}.dump(), host_->fd());
    }
  }

  TimingMethod timing_method() const override { return TimingMethod::kCudaEventsLatched; }
  std::vector<MetricSpec> metrics() const override { return ipc_metrics(); }

  // One round trip (not counted) warms both sides; its access time sizes the block.
  void warm_up(double min_time) override {
    accesses_ = 1;
    const Sample s = round_trip();
    const double per_access = s.seconds;
    accesses_ = per_access > 0 ? std::clamp<std::uint64_t>(
                                     static_cast<std::uint64_t>(std::ceil(min_time / per_access)),
                                     1, kMaxAccesses)
                               : 1;
  }

  Sample measure() override { return round_trip(); }

  void verify() override {
    if (last_verified_.empty()) throw CaseFailure("the ipc child did not verify the sample");
    ++verified_samples_;
  }

  std::vector<Check> checks() const override {
    std::vector<Check> c = pair_checks_;
    c.push_back({"shared_buffer", true, shared_what_, {}});
    c.push_back({"child_process",
                 true,
                 "child pid " + std::to_string(child_->pid()) + " said hello " + child_->hello(),
                 {}});
    c.push_back({"child_verified", verified_samples_ > 0,
                 last_verified_ + " (seed " + std::to_string(seed_) + ") in " +
                     std::to_string(verified_samples_) + " samples",
                 verified_samples_});
    return c;
  }

  std::uint64_t operations_per_sample() const override { return accesses_; }
  std::uint64_t bytes_per_sample() const override { return accesses_ * r_.bytes; }

  std::string timing_detail() const override {
    const char* exported = r_.method == Method::kCudaIpc ? "cudaIpcGetMemHandle"
                           : r_.method == Method::kVmmFd ? "cuMemExportToShareableHandle"
                                                         : "cudaHostRegister";
    const char* opened = r_.method == Method::kCudaIpc ? "cudaIpcOpenMemHandle"
                         : r_.method == Method::kVmmFd
                             ? "cuMemImportFromShareableHandle + cuMemAddressReserve/Map/SetAccess"
                             : "cudaHostRegister of its own mapping";
    return std::string(
               "one round trip per sample: export_time is the parent's steady clock "
               "around ") +
           exported + ", open_time and close_time the child's around " + opened +
           " and its undoing; bandwidth is " + std::to_string(accesses_) +
           " accesses timed by CUDA events in the child behind a latch";
  }

 private:
  // The driver's answer for the pair against the inventory's link; a method that maps the
  // exporter's memory on the importer's GPU skips where the driver refuses peer access, as the
  // requirement would have had the inventory known.
  void check_pair(const Machine& machine) {
    const int s = r_.gpus->first, d = r_.gpus->second;
    const bool d_to_s = can_access_peer(d, s);
    pair_checks_.push_back(peer_link_check(machine, s, d, can_access_peer(s, d), d_to_s));
    if (r_.needs_peer_access() && !d_to_s) {
      throw SkipCase(no_peer_access_reason(d, s, machine.link(d, s), ipc_peer_access_need(r_)));
    }
  }

  Sample round_trip() {
    double export_time = 0;
    switch (r_.method) {
      case Method::kCudaIpc: {
        cudaIpcMemHandle_t h{};
        const auto t0 = Clock::now();
        PB_CUDA(cudaIpcGetMemHandle(&h, device_buffer_.get()));
        export_time = since(t0);
        child_->send(IpcMessageType::kIpcHandle, std::string(h.reserved, sizeof(h.reserved)));
        break;
      }
      case Method::kVmmFd: {
        int fd = -1;
        const auto t0 = Clock::now();
        PB_CU(vmm_->api,
              export_handle(&fd, vmm_->handle->get(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        export_time = since(t0);
        UniqueFd owned(fd);  // the child gets its own; ours closes after the send
        child_->send(IpcMessageType::kDescriptor,
                     nlohmann::json{
                         {"kind", "vmm"}, {"bytes", vmm_->bytes}, {"alignment", vmm_->granularity}}
                         .dump(),
                     owned.get());
        break;
      }
      case Method::kSharedPinned: {
        registration_.reset();
        const auto t0 = Clock::now();
        registration_.emplace(host_->get(), r_.bytes, cudaHostRegisterDefault);
        export_time = since(t0);
        break;
      }
    }
    const IpcSampleReply reply =
        parse_ipc_sample_reply(child_->request(ipc_sample_command(accesses_)), accesses_);
    last_verified_ = reply.verified;
    const double bandwidth =
        static_cast<double>(reply.accesses * r_.bytes) / reply.access_seconds / 1e9;
    return Sample(reply.access_seconds,
                  {export_time, reply.open_time, reply.close_time, bandwidth});
  }

  IpcRequest r_;
  int device_;
  std::uint64_t seed_ = 0x1BC0FFEEull;
  DeviceMemory device_buffer_;
  std::unique_ptr<VmmExport> vmm_;
  std::unique_ptr<SharedHostMemory> host_;
  std::optional<HostRegistration> registration_;
  std::vector<Check> pair_checks_;
  std::string shared_what_;
  std::uint64_t accesses_ = 1;
  std::string last_verified_;
  std::uint64_t verified_samples_ = 0;
  // Last: destroyed first, so that the child has exited before the memory it maps is freed.
  std::unique_ptr<IpcChild> child_;
};

}  // namespace

std::unique_ptr<CaseBench> make_ipc_bench(const IpcRequest& r, const Machine& machine, int device,
                                          const IpcChildCommand& child) {
  return std::make_unique<IpcBench>(r, machine, device, child);
}

}  // namespace pathbench
