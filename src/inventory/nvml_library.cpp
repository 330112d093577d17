#include "inventory/nvml_library.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "inventory/nvml_api.hpp"

namespace pathbench {
namespace {

template <typename Fn>
void look_up(void* library, Fn& member, const char* name) {
  member = reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

NvmlApi load_nvml_api(void* library) {
  NvmlApi api;
#define PATHBENCH_NVML_LOOK_UP(member, symbol) look_up(library, api.member, #symbol);
  PATHBENCH_NVML_FUNCTIONS(PATHBENCH_NVML_LOOK_UP)
#undef PATHBENCH_NVML_LOOK_UP
  if (api.clocks_event_reasons == nullptr) {
    look_up(library, api.clocks_event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  // nvmlProcessInfo_v2_t is nvmlProcessInfo_t: the _v2 query fills the same elements.
  if (api.compute_processes == nullptr) {
    look_up(library, api.compute_processes, "nvmlDeviceGetComputeRunningProcesses_v2");
  }
  return api;
}

std::string missing_required_nvml_functions(const NvmlApi& api) {
  std::string missing;
  auto require = [&](auto fn, const char* name) {
    if (fn != nullptr) return;
    if (!missing.empty()) missing += ", ";
    missing += name;
  };
  require(api.init, "nvmlInit_v2");
  require(api.shutdown, "nvmlShutdown");
  require(api.device_count, "nvmlDeviceGetCount_v2");
  require(api.handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
  require(api.handle_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  return missing;
}

std::string nvml_error_text(const NvmlApi& api, nvmlReturn_t code) {
  const char* text = api.error_string != nullptr ? api.error_string(code) : nullptr;
  return text != nullptr ? std::string(text) : "NVML error " + std::to_string(code);
}

void NvmlSession::LibraryCloser::operator()(void* handle) const {
  if (handle != nullptr) dlclose(handle);
}

NvmlSession::NvmlSession() {
  // The versioned name: the unversioned .so is a development link that runtime nodes lack.
  library_.reset(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL));
  if (!library_) {
    const char* why = dlerror();
    throw std::runtime_error(std::string("libnvidia-ml.so.1 cannot be loaded") +
                             (why != nullptr ? std::string(": ") + why : std::string()));
  }
  api_ = std::make_unique<NvmlApi>(load_nvml_api(library_.get()));
  start();
}

NvmlSession::NvmlSession(const NvmlApi& api) : api_(std::make_unique<NvmlApi>(api)) { start(); }

void NvmlSession::start() {
  if (const std::string missing = missing_required_nvml_functions(*api_); !missing.empty()) {
    throw std::runtime_error("libnvidia-ml.so.1 lacks " + missing + " (driver too old)");
  }
  if (const nvmlReturn_t rc = api_->init(); rc != NVML_SUCCESS) {
    throw std::runtime_error("nvmlInit_v2 failed: " + nvml_error_text(*api_, rc));
  }
}

NvmlSession::~NvmlSession() {
  // Only a constructed session exists, and construction ends with a successful init.
  if (api_ && api_->shutdown != nullptr) api_->shutdown();
}

}  // namespace pathbench
