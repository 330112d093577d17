#pragma once

// The driver API's virtual memory management calls (the device_memory family's vmm allocator, the
// ipc family's vmm_fd method), reached through the runtime's cudaGetDriverEntryPointByVersion:
// pathbench links only the static runtime and never libcuda (a binary linked to it would not
// start on a machine without the driver, where the CPU-only tests run), and a driver without an
// entry point is a precise skip, not a load failure. Included by CUDA sources only.

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

#include "core/errors.hpp"

namespace pathbench {

struct VmmDriverApi {
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuMemCreate) mem_create = nullptr;
  decltype(&::cuMemRelease) mem_release = nullptr;
  decltype(&::cuMemExportToShareableHandle) export_handle = nullptr;
  decltype(&::cuMemImportFromShareableHandle) import_handle = nullptr;
  decltype(&::cuMemAddressReserve) address_reserve = nullptr;
  decltype(&::cuMemAddressFree) address_free = nullptr;
  decltype(&::cuMemMap) map = nullptr;
  decltype(&::cuMemUnmap) unmap = nullptr;
  decltype(&::cuMemSetAccess) set_access = nullptr;
  decltype(&::cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&::cuDeviceGetAttribute) device_attribute = nullptr;
  decltype(&::cuGetErrorName) error_name = nullptr;

  // Throws SkipCase naming the entry point the driver does not have.
  static const VmmDriverApi& get() {
    static const VmmDriverApi api = load();
    if (!api.missing.empty()) {
      throw SkipCase("the CUDA driver has no entry point " + api.missing +
                     " (cudaGetDriverEntryPointByVersion, CUDA 12.0 ABI)");
    }
    return api;
  }

  // The driver's name for `rc` (CUDA_ERROR_OUT_OF_MEMORY), else its number.
  std::string name_of(CUresult rc) const {
    const char* name = nullptr;
    return error_name && error_name(rc, &name) == CUDA_SUCCESS && name != nullptr
               ? std::string(name)
               : "CUresult " + std::to_string(static_cast<int>(rc));
  }

  // Throws CaseFailure naming the call and the driver's error.
  void check(CUresult rc, const char* call) const {
    if (rc != CUDA_SUCCESS) throw CaseFailure(std::string(call) + ": " + name_of(rc));
  }

  std::string missing;

 private:
  template <typename F>
  static void find(const char* symbol, F& fn, std::string& missing) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
    // The ABI of CUDA 12.0: every function here has had one signature since 10.2.
#if CUDART_VERSION >= 12050
    const cudaError_t rc =
        cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &status);
#else
    const cudaError_t rc = cudaGetDriverEntryPoint(symbol, &p, cudaEnableDefault, &status);
#endif
    if (rc != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr) {
      if (missing.empty()) missing = symbol;
      return;
    }
    fn = reinterpret_cast<F>(p);
  }
  static VmmDriverApi load() {
    VmmDriverApi a;
    find("cuDeviceGet", a.device_get, a.missing);
    find("cuMemCreate", a.mem_create, a.missing);
    find("cuMemRelease", a.mem_release, a.missing);
    find("cuMemExportToShareableHandle", a.export_handle, a.missing);
    find("cuMemImportFromShareableHandle", a.import_handle, a.missing);
    find("cuMemAddressReserve", a.address_reserve, a.missing);
    find("cuMemAddressFree", a.address_free, a.missing);
    find("cuMemMap", a.map, a.missing);
    find("cuMemUnmap", a.unmap, a.missing);
    find("cuMemSetAccess", a.set_access, a.missing);
    find("cuMemGetAllocationGranularity", a.granularity, a.missing);
    find("cuDeviceGetAttribute", a.device_attribute, a.missing);
    find("cuGetErrorName", a.error_name, a.missing);
    return a;
  }
};

#define PB_CU(api, call) (api).check((api).call, #call)

// A VMM mapping of `handle` into a fresh address range, read-write for `device`: reserve, map,
// set access; undone in reverse order. The allocation handle stays the caller's.
class VmmMapping {
 public:
  VmmMapping(const VmmDriverApi& api, CUmemGenericAllocationHandle handle, std::size_t bytes,
             std::size_t alignment, int device)
      : api_(&api), bytes_(bytes) {
    PB_CU(api, address_reserve(&ptr_, bytes, alignment, 0, 0));
    try {
      PB_CU(api, map(ptr_, bytes, 0, handle, 0));
      mapped_ = true;
      CUmemAccessDesc access{};
      access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access.location.id = device;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      PB_CU(api, set_access(ptr_, bytes, &access, 1));
    } catch (...) {
      release();
      throw;
    }
  }
  VmmMapping(const VmmMapping&) = delete;
  VmmMapping& operator=(const VmmMapping&) = delete;
  ~VmmMapping() { release(); }
  std::byte* get() const { return reinterpret_cast<std::byte*>(ptr_); }

 private:
  void release() {
    if (mapped_) api_->unmap(ptr_, bytes_);
    mapped_ = false;
    if (ptr_) api_->address_free(ptr_, bytes_);
    ptr_ = 0;
  }
  const VmmDriverApi* api_;
  std::size_t bytes_;
  CUdeviceptr ptr_ = 0;
  bool mapped_ = false;
};

// Owns one allocation handle (cuMemCreate or cuMemImportFromShareableHandle).
class VmmHandle {
 public:
  VmmHandle(const VmmDriverApi& api, CUmemGenericAllocationHandle h) : api_(&api), h_(h) {}
  VmmHandle(const VmmHandle&) = delete;
  VmmHandle& operator=(const VmmHandle&) = delete;
  ~VmmHandle() { api_->mem_release(h_); }
  CUmemGenericAllocationHandle get() const { return h_; }

 private:
  const VmmDriverApi* api_;
  CUmemGenericAllocationHandle h_;
};

// The allocation properties of a pinned device allocation exportable as a POSIX fd.
inline CUmemAllocationProp vmm_fd_properties(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

}  // namespace pathbench
