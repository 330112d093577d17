#include "cuda/cufile_library.hpp"

#include <dlfcn.h>

#include "core/cufile_op_error.hpp"
#include "core/errors.hpp"

namespace pathbench {

namespace {

template <typename Fn>
bool load(void* lib, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  return out != nullptr;
}

}  // namespace

std::string describe_cufile_error(const CufileError& e) {
  return describe_cufile_op_error(e.err, e.cu_err);
}

std::string GdsStatus::describe() const {
  std::string text = describe_gds_state(*this);
  if (driver_open) {
    text += driver_open->err == 0
                ? "; cuFileDriverOpen succeeded"
                : "; cuFileDriverOpen failed: " + describe_cufile_error(*driver_open);
  }
  if (!nvidia_fs && driver_open && driver_open->err == 0) {
    text +=
        ": without nvidia-fs cuFile reads only in compatibility mode (POSIX reads through a "
        "host bounce buffer), not GPUDirect";
  }
  return text;
}

CufileLibrary& CufileLibrary::instance() {
  static CufileLibrary lib;
  return lib;
}

CufileLibrary::CufileLibrary() {
  static_cast<GdsState&>(status_) = read_gds_node_state();
  void* lib = load_cufile_library(status_);
  if (lib == nullptr) return;
  bool all = load(lib, "cuFileDriverOpen", api_.driver_open) &&
             (load(lib, "cuFileDriverClose_v2", api_.driver_close) ||
              load(lib, "cuFileDriverClose", api_.driver_close)) &&
             load(lib, "cuFileHandleRegister", api_.handle_register) &&
             load(lib, "cuFileHandleDeregister", api_.handle_deregister) &&
             load(lib, "cuFileBufRegister", api_.buf_register) &&
             load(lib, "cuFileBufDeregister", api_.buf_deregister) &&
             load(lib, "cuFileRead", api_.read);
  if (!all) {
    status_.library_found = false;
    status_.library = "libcufile.so.0 lacks a cuFile entry point";
  }
}

CufileDriver::CufileDriver() : lib_(CufileLibrary::instance()), status_(lib_.status()) {
  if (!lib_.loaded()) throw SkipCase("GPUDirect Storage unavailable: " + status_.describe());
  status_.driver_open = lib_.api().driver_open();
  if (status_.driver_open->err != 0) {
    throw SkipCase("GPUDirect Storage unavailable: " + status_.describe());
  }
}

CufileDriver::~CufileDriver() { lib_.api().driver_close(); }

CufileFile::CufileFile(const CufileDriver& driver, int fd) : api_(driver.api()) {
  CufileDescr descr;
  descr.handle.fd = fd;
  const CufileError e = api_.handle_register(&handle_, &descr);
  if (e.err != 0) {
    handle_ = nullptr;
    throw SkipCase("cuFileHandleRegister refused the file: " + describe_cufile_error(e) + "; " +
                   driver.status().describe());
  }
}

CufileFile::~CufileFile() {
  if (handle_) api_.handle_deregister(handle_);
}

CufileBuffer::CufileBuffer(const CufileDriver& driver, const void* device_ptr, std::size_t bytes)
    : api_(driver.api()), ptr_(device_ptr) {
  error_ = api_.buf_register(device_ptr, bytes, 0);
  registered_ = error_.err == 0;
}

CufileBuffer::~CufileBuffer() {
  if (registered_) api_.buf_deregister(ptr_);
}

}  // namespace pathbench
