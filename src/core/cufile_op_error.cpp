#include "core/cufile_op_error.hpp"

#include <array>

namespace pathbench {

namespace {

struct Entry {
  int code;
  CufileOpErrorName text;
};

// cufile.h's CUFILEOP_STATUS_ENTRIES (CUFILEOP_BASE_ERR 5000; 5021 and 5032 are unassigned).
constexpr std::array kEntries{
    Entry{5001, {"CU_FILE_DRIVER_NOT_INITIALIZED", "nvidia-fs driver is not loaded"}},
    Entry{5002, {"CU_FILE_DRIVER_INVALID_PROPS", "invalid property"}},
    Entry{5003, {"CU_FILE_DRIVER_UNSUPPORTED_LIMIT", "property range error"}},
    Entry{5004, {"CU_FILE_DRIVER_VERSION_MISMATCH", "nvidia-fs driver version mismatch"}},
    Entry{5005, {"CU_FILE_DRIVER_VERSION_READ_ERROR", "nvidia-fs driver version read error"}},
    Entry{5006, {"CU_FILE_DRIVER_CLOSING", "driver shutdown in progress"}},
    Entry{
        5007,
        {"CU_FILE_PLATFORM_NOT_SUPPORTED", "GPUDirect Storage not supported on current platform"}},
    Entry{5008, {"CU_FILE_IO_NOT_SUPPORTED", "GPUDirect Storage not supported on current file"}},
    Entry{5009, {"CU_FILE_DEVICE_NOT_SUPPORTED", "GPUDirect Storage not supported on current GPU"}},
    Entry{5010, {"CU_FILE_NVFS_DRIVER_ERROR", "nvidia-fs driver ioctl error"}},
    Entry{5011, {"CU_FILE_CUDA_DRIVER_ERROR", "CUDA Driver API error"}},
    Entry{5012, {"CU_FILE_CUDA_POINTER_INVALID", "invalid device pointer"}},
    Entry{5013, {"CU_FILE_CUDA_MEMORY_TYPE_INVALID", "invalid pointer memory type"}},
    Entry{5014,
          {"CU_FILE_CUDA_POINTER_RANGE_ERROR", "pointer range exceeds allocated address range"}},
    Entry{5015, {"CU_FILE_CUDA_CONTEXT_MISMATCH", "cuda context mismatch"}},
    Entry{5016, {"CU_FILE_INVALID_MAPPING_SIZE", "access beyond maximum pinned size"}},
    Entry{5017, {"CU_FILE_INVALID_MAPPING_RANGE", "access beyond mapped size"}},
    Entry{5018, {"CU_FILE_INVALID_FILE_TYPE", "unsupported file type"}},
    Entry{5019, {"CU_FILE_INVALID_FILE_OPEN_FLAG", "unsupported file open flags"}},
    Entry{5020, {"CU_FILE_DIO_NOT_SET", "fd direct IO not set"}},
    Entry{5022, {"CU_FILE_INVALID_VALUE", "invalid arguments"}},
    Entry{5023, {"CU_FILE_MEMORY_ALREADY_REGISTERED", "device pointer already registered"}},
    Entry{5024, {"CU_FILE_MEMORY_NOT_REGISTERED", "device pointer lookup failure"}},
    Entry{5025, {"CU_FILE_PERMISSION_DENIED", "driver or file access error"}},
    Entry{5026, {"CU_FILE_DRIVER_ALREADY_OPEN", "driver is already open"}},
    Entry{5027, {"CU_FILE_HANDLE_NOT_REGISTERED", "file descriptor is not registered"}},
    Entry{5028, {"CU_FILE_HANDLE_ALREADY_REGISTERED", "file descriptor is already registered"}},
    Entry{5029, {"CU_FILE_DEVICE_NOT_FOUND", "GPU device not found"}},
    Entry{5030, {"CU_FILE_INTERNAL_ERROR", "internal error"}},
    Entry{5031, {"CU_FILE_GETNEWFD_FAILED", "failed to obtain new file descriptor"}},
    Entry{5033, {"CU_FILE_NVFS_SETUP_ERROR", "NVFS driver initialization error"}},
    Entry{5034, {"CU_FILE_IO_DISABLED", "GPUDirect Storage disabled by config on current file"}},
    Entry{5035, {"CU_FILE_BATCH_SUBMIT_FAILED", "failed to submit batch operation"}},
    Entry{5036, {"CU_FILE_GPU_MEMORY_PINNING_FAILED", "failed to allocate pinned GPU memory"}},
    Entry{5037, {"CU_FILE_BATCH_FULL", "queue full for batch operation"}},
    Entry{5038, {"CU_FILE_ASYNC_NOT_SUPPORTED", "cuFile stream operation not supported"}},
};

}  // namespace

CufileOpErrorName cufile_op_error_name(int err) {
  if (err == 0) return {"CU_FILE_SUCCESS", "cufile success"};
  for (const Entry& e : kEntries) {
    if (e.code == err) return e.text;
  }
  return {};
}

std::string describe_cufile_op_error(int err, int cu_err) {
  std::string text = "CUfileOpError " + std::to_string(err);
  const CufileOpErrorName n = cufile_op_error_name(err);
  if (!n.name.empty()) {
    text += ' ';
    text += n.name;
    text += " (";
    text += n.meaning;
    text += ')';
  }
  if (cu_err != 0) text += " (CUresult " + std::to_string(cu_err) + ")";
  return text;
}

}  // namespace pathbench
