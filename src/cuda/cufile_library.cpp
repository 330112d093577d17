#include "cuda/cufile_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.hpp"

namespace pathbench {

namespace {

template <typename Fn>
bool load(void* lib, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  return out != nullptr;
}

// "allow_compat_mode" in the cuFile configuration (CUFILE_ENV_PATH_JSON, else /etc/cufile.json),
// which has comments and so is searched, not parsed; CUFILE_ALLOW_COMPAT_MODE overrides it.
void read_compat_mode(GdsStatus& s) {
  if (const char* env = std::getenv("CUFILE_ALLOW_COMPAT_MODE")) {
    const std::string v = env;
    s.compat_mode = v == "true" || v == "1" ? "allowed" : "not allowed";
    s.compat_source = "CUFILE_ALLOW_COMPAT_MODE";
    return;
  }
  const char* env_path = std::getenv("CUFILE_ENV_PATH_JSON");
  const std::string path = env_path ? env_path : "/etc/cufile.json";
  std::ifstream in(path);
  if (!in) return;
  std::ostringstream text;
  text << in.rdbuf();
  const std::string t = text.str();
  const auto key = t.find("\"allow_compat_mode\"");
  if (key == std::string::npos) return;
  const auto colon = t.find(':', key);
  const auto value = colon == std::string::npos ? colon : t.find_first_not_of(" \t\r\n", colon + 1);
  if (value == std::string::npos) return;
  if (t.compare(value, 4, "true") == 0) s.compat_mode = "allowed";
  if (t.compare(value, 5, "false") == 0) s.compat_mode = "not allowed";
  if (!s.compat_mode.empty()) s.compat_source = path;
}

}  // namespace

std::string describe_cufile_error(const CufileError& e) {
  std::string text = "CUfileOpError " + std::to_string(e.err);
  if (e.cu_err != 0) text += " (CUresult " + std::to_string(e.cu_err) + ")";
  return text;
}

std::string GdsStatus::describe() const {
  std::string text = library_found ? "libcufile found (" + library + ")"
                                   : "libcufile.so.0 not found (" + library + ")";
  if (driver_open) {
    text += driver_open->err == 0
                ? "; cuFileDriverOpen succeeded"
                : "; cuFileDriverOpen failed: " + describe_cufile_error(*driver_open);
  }
  text += nvidia_fs ? "; nvidia-fs module loaded (" + nvidia_fs_where + ")"
                    : "; nvidia-fs module not loaded (no /proc/driver/nvidia-fs or "
                      "/sys/module/nvidia_fs)";
  if (!compat_mode.empty())
    text += "; compatibility mode " + compat_mode + " (" + compat_source + ")";
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
  for (const char* where : {"/proc/driver/nvidia-fs", "/sys/module/nvidia_fs"}) {
    std::error_code ec;
    if (std::filesystem::exists(where, ec)) {
      status_.nvidia_fs = true;
      status_.nvidia_fs_where = where;
      break;
    }
  }
  read_compat_mode(status_);
  void* lib = dlopen("libcufile.so.0", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    status_.library = why ? why : "dlopen failed";
    return;
  }
  bool all = load(lib, "cuFileDriverOpen", api_.driver_open) &&
             (load(lib, "cuFileDriverClose_v2", api_.driver_close) ||
              load(lib, "cuFileDriverClose", api_.driver_close)) &&
             load(lib, "cuFileHandleRegister", api_.handle_register) &&
             load(lib, "cuFileHandleDeregister", api_.handle_deregister) &&
             load(lib, "cuFileBufRegister", api_.buf_register) &&
             load(lib, "cuFileBufDeregister", api_.buf_deregister) &&
             load(lib, "cuFileRead", api_.read);
  if (!all) {
    status_.library = "libcufile.so.0 lacks a cuFile entry point";
    return;
  }
  status_.library_found = true;
  status_.library = "libcufile.so.0";
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
