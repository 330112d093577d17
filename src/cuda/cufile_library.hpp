#pragma once

// GPUDirect Storage (cuFile) loaded at run time: dlopen("libcufile.so.0"), so pathbench has no
// link-time dependency on it and runs where it is absent (the cufile cases skip, saying why).
// The few types used are declared here with the ABI of NVIDIA's cufile.h (which a toolkit
// without GDS lacks): CUfileError_t {CUfileOpError err; CUresult cu_err;}, CUfileDescr_t
// {type; union {int fd; void* handle;}; const CUfileFSOps_t* fs_ops;}.

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "core/gds_state.hpp"

namespace pathbench {

struct CufileError {
  int err = 0;     // CUfileOpError; 0 is CU_FILE_SUCCESS
  int cu_err = 0;  // CUresult, when err is a CUDA driver error
};

struct CufileDescr {
  int type = 1;  // CU_FILE_HANDLE_TYPE_OPAQUE_FD
  union {
    int fd;
    void* handle;
  } handle{};
  const void* fs_ops = nullptr;
};

using CufileHandle = void*;

struct CufileApi {
  CufileError (*driver_open)() = nullptr;
  CufileError (*driver_close)() = nullptr;  // cuFileDriverClose_v2 (reference counted)
  CufileError (*handle_register)(CufileHandle*, CufileDescr*) = nullptr;
  void (*handle_deregister)(CufileHandle) = nullptr;
  CufileError (*buf_register)(const void*, std::size_t, int) = nullptr;
  CufileError (*buf_deregister)(const void*) = nullptr;
  ssize_t (*read)(CufileHandle, void*, std::size_t, off_t, off_t) = nullptr;
};

// The node's GDS state (also in the run's context) plus this case's cuFileDriverOpen result, for
// the case's `gds_status` check or skip reason.
struct GdsStatus : GdsState {
  std::optional<CufileError> driver_open;  // set once cuFileDriverOpen was called

  std::string describe() const;
};

// The library, loaded once per process and never unloaded (libcufile keeps threads and state
// that must outlive every handle); `status` says what was found.
class CufileLibrary {
 public:
  static CufileLibrary& instance();
  bool loaded() const { return status_.library_found; }
  const CufileApi& api() const { return api_; }
  GdsStatus status() const { return status_; }

 private:
  CufileLibrary();
  CufileApi api_;
  GdsStatus status_;
};

// cuFileDriverOpen for the case's lifetime, closed (reference counted) on destruction. Throws
// SkipCase with the GDS status when the library is absent or the driver does not open.
class CufileDriver {
 public:
  CufileDriver();
  CufileDriver(const CufileDriver&) = delete;
  CufileDriver& operator=(const CufileDriver&) = delete;
  ~CufileDriver();
  const CufileApi& api() const { return lib_.api(); }
  const GdsStatus& status() const { return status_; }

 private:
  CufileLibrary& lib_;
  GdsStatus status_;
};

// cuFileHandleRegister of an open file descriptor; deregistered on destruction. Throws SkipCase
// (with the driver's status) when cuFile refuses the file.
class CufileFile {
 public:
  CufileFile(const CufileDriver& driver, int fd);
  CufileFile(const CufileFile&) = delete;
  CufileFile& operator=(const CufileFile&) = delete;
  ~CufileFile();
  CufileHandle get() const { return handle_; }

 private:
  const CufileApi& api_;
  CufileHandle handle_ = nullptr;
};

// cuFileBufRegister of a device buffer (optional for cuFileRead: it spares a bounce buffer);
// deregistered on destruction. `ok()` says whether the registration took.
class CufileBuffer {
 public:
  CufileBuffer(const CufileDriver& driver, const void* device_ptr, std::size_t bytes);
  CufileBuffer(const CufileBuffer&) = delete;
  CufileBuffer& operator=(const CufileBuffer&) = delete;
  ~CufileBuffer();
  bool ok() const { return registered_; }
  const CufileError& error() const { return error_; }

 private:
  const CufileApi& api_;
  const void* ptr_;
  bool registered_ = false;
  CufileError error_;
};

std::string describe_cufile_error(const CufileError& e);

}  // namespace pathbench
