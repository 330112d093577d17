// TimelineCapture over the CUPTI Activity API.
//
// Record layouts: this file reads the struct versions that cupti_activity.h of CUDA 13 names for
// each activity kind: CUpti_ActivityMemcpy6 (MEMCPY), CUpti_ActivityMemcpyPtoP4 (MEMCPY2, peer
// copies), CUpti_ActivityMemset4 (MEMSET), CUpti_ActivityKernel10 (CONCURRENT_KERNEL),
// CUpti_ActivitySynchronization2 (SYNCHRONIZATION), CUpti_ActivityMarker2 (MARKER, NVTX) and
// CUpti_ActivityUnifiedMemoryCounter3 (UNIFIED_MEMORY_COUNTER). The struct names and layouts
// change between CUPTI releases, so with headers older than CUDA 13 (CUPTI_API_VERSION < 130000)
// this file builds an inert capture that says so instead of misreading records.
//
// Process-wide state: CUPTI delivers activity buffers through two C callbacks, possibly on its
// own thread and possibly during process exit, so the records live in a heap object that is
// never destroyed, guarded by a mutex. One TimelineCapture at a time owns the tracing.
//
// Timing: collect() flushes what CUPTI has; records of GPU work that has not finished come back
// without timestamps. Synchronise the work you want to see before collect(). Records without
// timestamps are not returned and are counted in Timeline::dropped_records (the timeline is
// incomplete, which is what that count means to its readers).
//
// Unified-memory counters (Options::unified_memory_counters) must be configured after the CUDA
// driver is initialised: create the context (cudaSetDevice + cudaFree(0)) before constructing
// the capture. Otherwise CUPTI refuses and the capture is inert with a reason that says so.
//
// NVTX: markers reach CUPTI only when NVTX_INJECTION64_PATH names libcupti before the process's
// first NVTX call (see timeline/cupti_library.hpp). Only push/pop and start/end ranges of the
// `pathbench` domain are kept; ranges still open at collect() are not returned.
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "timeline/cupti_library.hpp"
#include "timeline/cupti_timeline.hpp"

#if defined(CUPTI_API_VERSION) && CUPTI_API_VERSION >= 130000
#define PATHBENCH_CUPTI_RECORDS 1
#endif

namespace pathbench {

namespace {

// ---- library path -------------------------------------------------------------------------

bool looks_like_cupti(const char* path) {
  if (!path || !*path) return false;
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  return std::strncmp(base, "libcupti", 8) == 0;
}

std::string absolute(const char* path) {
  if (path[0] == '/') return path;
  char resolved[PATH_MAX];
  if (realpath(path, resolved)) return resolved;
  return path;
}

int find_cupti_object(struct dl_phdr_info* info, size_t, void* data) {
  if (looks_like_cupti(info->dlpi_name)) {
    *static_cast<std::string*>(data) = info->dlpi_name;
    return 1;
  }
  return 0;
}

#ifdef PATHBENCH_CUPTI_RECORDS

// ---- error sentences ----------------------------------------------------------------------

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string driver_hint() {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    return std::string("; no NVIDIA driver is usable here (libcuda.so.1 cannot be loaded") +
           (err ? std::string(": ") + err : std::string()) + ")";
  }
  dlclose(handle);
  return {};
}

std::string hint(CUptiResult result, bool unified_memory) {
  switch (result) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "; another CUPTI client (a profiler such as Nsight Systems or Nsight Compute) is "
             "attached to this process";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "; profiling is restricted on this machine (driver option "
             "NVreg_RestrictProfilingToAdminUsers, or the hypervisor)";
    case CUPTI_ERROR_NOT_INITIALIZED:
      if (unified_memory)
        return "; unified-memory counters need an initialised CUDA driver: create the CUDA "
               "context (cudaSetDevice + cudaFree(0)) before starting the capture";
      return driver_hint();
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED:
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE:
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES:
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS:
      return "; unified-memory counters are not supported on this platform, device or "
             "configuration";
    default:
      return driver_hint();
  }
}

std::string failure(const std::string& what, CUptiResult result, bool unified_memory = false) {
  const char* name = nullptr;
  if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS || !name) name = "unknown CUPTI error";
  std::string sentence = "no CUPTI timeline: " + what + " failed with " + name;
  const char* message = nullptr;
  if (cuptiGetErrorMessage(result, &message) == CUPTI_SUCCESS && message) {
    const std::string text = trimmed(message);
    if (!text.empty() && text != name) sentence += " (" + text + ")";
  }
  return sentence + hint(result, unified_memory);
}

// ---- process-wide state -------------------------------------------------------------------

constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
constexpr const char* kNvtxDomain = "pathbench";

struct OpenMarker {
  std::uint64_t start_ns = 0;
  std::string name;
};

// Filled by the buffer-completed callback.
struct Records {
  std::mutex mutex;
  bool accepting = false;
  std::vector<TimelineRecord> records;
  std::unordered_map<std::uint32_t, OpenMarker> open_markers;  // pathbench START markers by id
  std::uint64_t dropped = 0;                                   // CUPTI's count
  std::uint64_t untimed = 0;                                   // records without timestamps
};

// Who owns the tracing and what is enabled; serialises construction, collect and destruction.
struct Control {
  std::mutex mutex;
  const TimelineCapture* owner = nullptr;
  bool callbacks_registered = false;
  std::vector<CUpti_ActivityKind> enabled;
  bool unified_memory_configured = false;
  bool unified_memory_device_to_device = false;  // what was configured, to disable the same
};

// Never destroyed: CUPTI may hand back buffers from its at-exit flush after static destructors.
Records& records() {
  static Records* r = new Records;
  return *r;
}
Control& control() {
  static Control* c = new Control;
  return *c;
}

// ---- record conversion --------------------------------------------------------------------

MemoryKind memory_kind(unsigned kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return MemoryKind::kPageable;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return MemoryKind::kPinned;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return MemoryKind::kDevice;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return MemoryKind::kArray;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return MemoryKind::kManaged;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return MemoryKind::kDeviceStatic;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return MemoryKind::kManagedStatic;
    default:
      return MemoryKind::kUnknown;
  }
}

std::string copy_kind(unsigned kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "unknown";
  }
}

std::string synchronization_name(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "event_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return "stream_wait_event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "stream_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "context_synchronize";
    default:
      return "synchronization";
  }
}

std::string kernel_name(const char* mangled) {
  if (!mangled) return "unknown kernel";
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = (status == 0 && demangled) ? demangled : mangled;
  std::free(demangled);
  return name;
}

std::uint32_t gpu_id(std::uint32_t id) { return id == CUPTI_UNIFIED_MEMORY_CPU_DEVICE_ID ? 0 : id; }

// Appends `t` unless it carries no timestamps.
void keep(Records& r, TimelineRecord t) {
  if (t.start_ns == 0 && t.end_ns == 0) {
    ++r.untimed;
    return;
  }
  if (t.end_ns < t.start_ns) t.end_ns = t.start_ns;
  r.records.push_back(std::move(t));
}

// The fields every GPU-side activity record has, whatever its struct version.
template <typename Activity>
TimelineRecord gpu_record(ActivityKind kind, const Activity& a) {
  TimelineRecord t;
  t.kind = kind;
  t.start_ns = a.start;
  t.end_ns = a.end;
  t.device = a.deviceId;
  t.stream = a.streamId;
  t.correlation = a.correlationId;
  return t;
}

// Device-to-device and peer copies share the copy fields.
template <typename Copy>
TimelineRecord copy_record(const Copy& m) {
  TimelineRecord t = gpu_record(ActivityKind::kMemcpy, m);
  t.copy_kind = copy_kind(m.copyKind);
  t.src_kind = memory_kind(m.srcKind);
  t.dst_kind = memory_kind(m.dstKind);
  t.bytes = m.bytes;
  return t;
}

void convert_memcpy(Records& r, const CUpti_ActivityMemcpy6& m) { keep(r, copy_record(m)); }

void convert_peer_memcpy(Records& r, const CUpti_ActivityMemcpyPtoP4& m) {
  TimelineRecord t = copy_record(m);
  t.name =
      "device " + std::to_string(m.srcDeviceId) + " -> device " + std::to_string(m.dstDeviceId);
  keep(r, std::move(t));
}

void convert_memset(Records& r, const CUpti_ActivityMemset4& m) {
  TimelineRecord t = gpu_record(ActivityKind::kMemset, m);
  t.dst_kind = memory_kind(m.memoryKind);
  t.bytes = m.bytes;
  keep(r, std::move(t));
}

void convert_kernel(Records& r, const CUpti_ActivityKernel10& k) {
  TimelineRecord t = gpu_record(ActivityKind::kKernel, k);
  t.name = kernel_name(k.name);
  keep(r, std::move(t));
}

void convert_synchronization(Records& r, const CUpti_ActivitySynchronization2& s) {
  TimelineRecord t;
  t.kind = ActivityKind::kSynchronization;
  t.start_ns = s.start;
  t.end_ns = s.end;
  t.stream = s.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s.streamId;
  t.correlation = s.correlationId;
  t.name = synchronization_name(s.type);
  keep(r, std::move(t));
}

void convert_marker(Records& r, const CUpti_ActivityMarker2& m) {
  const unsigned flags = static_cast<unsigned>(m.flags);
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    // The domain is NULL for NVTX's default domain: only the pathbench domain is kept.
    if (m.domain && std::strcmp(m.domain, kNvtxDomain) == 0)
      r.open_markers[m.id] = OpenMarker{m.timestamp, m.name ? m.name : ""};
  } else if (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = r.open_markers.find(m.id);
    if (it == r.open_markers.end()) return;  // another domain, or started before the capture
    TimelineRecord t;
    t.kind = ActivityKind::kNvtxRange;
    t.start_ns = it->second.start_ns;
    t.end_ns = m.timestamp;
    t.name = std::move(it->second.name);
    r.open_markers.erase(it);
    keep(r, std::move(t));
  }
}

void convert_unified_memory(Records& r, const CUpti_ActivityUnifiedMemoryCounter3& u) {
  TimelineRecord t;
  t.kind = ActivityKind::kUnifiedMemory;
  t.start_ns = u.start;
  t.end_ns = u.end;
  t.value = u.value;
  switch (u.counterKind) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
      t.name = "bytes_transfer_htod";
      t.device = gpu_id(u.dstId);
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
      t.name = "bytes_transfer_dtoh";
      t.device = gpu_id(u.srcId);
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD:
      t.name = "bytes_transfer_dtod";
      t.device = gpu_id(u.dstId);
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
      // value: the number of page-fault groups for the same page.
      t.name = "gpu_page_fault_groups";
      t.device = gpu_id(u.srcId);
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
      // One record per CPU fault; CUPTI's value is the faulting program counter, not a count,
      // and its end timestamp is not defined.
      t.name = "cpu_page_fault_count";
      t.value = 1;
      t.end_ns = t.start_ns;
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING:
      t.name = "thrashing";
      t.end_ns = t.start_ns;
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING:
      t.name = "throttling";
      t.device = gpu_id(u.srcId);
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP:
      t.name = "remote_map";
      t.device = gpu_id(u.dstId);
      t.end_ns = t.start_ns;
      break;
    default:
      t.name = "unified_memory_counter_" + std::to_string(static_cast<int>(u.counterKind));
      break;
  }
  if (t.start_ns == 0) {
    ++r.untimed;
    return;
  }
  keep(r, std::move(t));
}

void convert(Records& r, const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      convert_memcpy(r, *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      convert_peer_memcpy(r, *reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      convert_memset(r, *reinterpret_cast<const CUpti_ActivityMemset4*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      convert_kernel(r, *reinterpret_cast<const CUpti_ActivityKernel10*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      convert_synchronization(r, *reinterpret_cast<const CUpti_ActivitySynchronization2*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MARKER:
      convert_marker(r, *reinterpret_cast<const CUpti_ActivityMarker2*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
      convert_unified_memory(r,
                             *reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3*>(record));
      break;
    default:
      break;  // kinds this capture does not enable (or marker data)
  }
}

// ---- CUPTI buffer callbacks ---------------------------------------------------------------

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many as fit
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;  // no buffer: CUPTI drops records and counts them
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t,
                               size_t valid_bytes) {
  Records& r = records();
  try {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.accepting && buffer) {
      CUpti_Activity* record = nullptr;
      while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS)
        convert(r, record);
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS &&
        r.accepting)
      r.dropped += dropped;
  } catch (...) {
    // Out of memory while converting: nothing may unwind into CUPTI. The records are lost.
  }
  std::free(buffer);
}

// ---- tracing on and off (Control::mutex held) ---------------------------------------------

constexpr CUpti_ActivityKind kTracedKinds[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY,          CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,          CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MARKER,
};

const char* kind_name(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return "MEMCPY2";
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return "MEMSET";
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return "SYNCHRONIZATION";
    case CUPTI_ACTIVITY_KIND_MARKER:
      return "MARKER";
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
      return "UNIFIED_MEMORY_COUNTER";
    default:
      return "?";
  }
}

// The counters every unified-memory capture configures, and with `device_to_device` the bytes
// moved between GPUs (which CUPTI supports on 64-bit Linux only).
CUptiResult configure_unified_memory_counters(std::uint32_t enable, bool device_to_device) {
  CUpti_ActivityUnifiedMemoryCounterConfig config[5] = {};
  const CUpti_ActivityUnifiedMemoryCounterKind kinds[5] = {
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD,
  };
  const std::uint32_t count = device_to_device ? 5 : 4;
  for (std::uint32_t i = 0; i < count; ++i) {
    // The scope is ignored since CUDA 7 (counters cover the process on all devices); it still
    // has to be a valid value.
    config[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_ALL_DEVICES;
    config[i].kind = kinds[i];
    config[i].deviceId = 0;
    config[i].enable = enable;
  }
  return cuptiActivityConfigureUnifiedMemoryCounter(config, count);
}

// Disables what is enabled and discards whatever CUPTI still holds.
void stop_tracing(Control& c) {
  for (auto it = c.enabled.rbegin(); it != c.enabled.rend(); ++it) cuptiActivityDisable(*it);
  c.enabled.clear();
  if (c.callbacks_registered) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (c.unified_memory_configured) {
    configure_unified_memory_counters(0, c.unified_memory_device_to_device);
    c.unified_memory_configured = false;
  }
  Records& r = records();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.accepting = false;
  r.records.clear();
  r.open_markers.clear();
  r.dropped = r.untimed = 0;
}

// Initialises CUPTI for this process. Returns "" on success, else the reason.
std::string register_callbacks(Control& c) {
  if (c.callbacks_registered) return {};
  const CUptiResult result = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (result != CUPTI_SUCCESS) return failure("cuptiActivityRegisterCallbacks", result);
  c.callbacks_registered = true;
  return {};
}

// Returns "" on success, else the reason (and leaves nothing enabled).
std::string start_tracing(Control& c, const TimelineCapture::Options& options) {
  if (std::string why = register_callbacks(c); !why.empty()) return why;
  // Anything a previous capture left behind is not this capture's: discard it, and reset
  // CUPTI's dropped-record count (reading it resets it).
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t stale_drops = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &stale_drops);
  {
    Records& r = records();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.records.clear();
    r.open_markers.clear();
    r.dropped = r.untimed = 0;
    r.accepting = true;
  }
  for (const CUpti_ActivityKind kind : kTracedKinds) {
    const CUptiResult result = cuptiActivityEnable(kind);
    if (result != CUPTI_SUCCESS) {
      stop_tracing(c);
      return failure(
          std::string("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_") + kind_name(kind) + ")", result);
    }
    c.enabled.push_back(kind);
  }
  if (options.unified_memory_counters) {
    const bool d2d = options.unified_memory_device_to_device;
    CUptiResult result = configure_unified_memory_counters(1, d2d);
    if (result != CUPTI_SUCCESS) {
      stop_tracing(c);
      return failure(d2d ? "cuptiActivityConfigureUnifiedMemoryCounter (bytes HtoD/DtoH/DtoD, GPU "
                           "page faults, CPU page faults)"
                         : "cuptiActivityConfigureUnifiedMemoryCounter (bytes HtoD/DtoH, GPU page "
                           "faults, CPU page faults)",
                     result, true);
    }
    c.unified_memory_configured = true;
    c.unified_memory_device_to_device = d2d;
    result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    if (result != CUPTI_SUCCESS) {
      stop_tracing(c);
      return failure("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)", result,
                     true);
    }
    c.enabled.push_back(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  }
  return {};
}

#endif  // PATHBENCH_CUPTI_RECORDS

}  // namespace

std::string cupti_library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) != 0 &&
      looks_like_cupti(info.dli_fname))
    return absolute(info.dli_fname);
  // A non-PIE executable may resolve the function's address to its own PLT slot: look for the
  // loaded libcupti among the shared objects instead.
  std::string found;
  dl_iterate_phdr(find_cupti_object, &found);
  return found.empty() ? found : absolute(found.c_str());
}

#ifdef PATHBENCH_CUPTI_RECORDS

std::string prepare_cupti_tracing() {
  Control& c = control();
  std::lock_guard<std::mutex> lock(c.mutex);
  return register_callbacks(c);
}

TimelineCapture::TimelineCapture(Options options) : options_(options) {
  Control& c = control();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.owner) {
    reason_ =
        "no CUPTI timeline: another TimelineCapture is already active in this process (CUPTI "
        "activity tracing supports one capture at a time)";
    return;
  }
  reason_ = start_tracing(c, options_);
  if (reason_.empty()) c.owner = this;
}

TimelineCapture::~TimelineCapture() {
  if (!active()) return;
  Control& c = control();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.owner != this) return;
  stop_tracing(c);
  c.owner = nullptr;
}

Timeline TimelineCapture::collect() {
  Timeline out;
  if (!active()) {
    out.unavailable_reason = reason_;
    return out;
  }
  Control& c = control();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.owner != this) {
    out.unavailable_reason = "no CUPTI timeline: this capture no longer owns CUPTI tracing";
    return out;
  }
  // Deliver what is complete, stop recording, then deliver what arrived in between.
  CUptiResult result = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (auto it = c.enabled.rbegin(); it != c.enabled.rend(); ++it) cuptiActivityDisable(*it);
  c.enabled.clear();
  if (result == CUPTI_SUCCESS) result = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (c.unified_memory_configured) {
    configure_unified_memory_counters(0, c.unified_memory_device_to_device);
    c.unified_memory_configured = false;
  }
  size_t late_drops = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &late_drops) != CUPTI_SUCCESS) late_drops = 0;

  Records& r = records();
  std::lock_guard<std::mutex> records_lock(r.mutex);
  if (result != CUPTI_SUCCESS) {
    out.unavailable_reason = failure("cuptiActivityFlushAll", result);
  } else {
    out.records = std::move(r.records);
    out.dropped_records = r.dropped + r.untimed + late_drops;
  }
  r.records.clear();
  r.open_markers.clear();  // ranges still open now never close inside this capture
  r.dropped = r.untimed = 0;
  r.accepting = false;
  std::stable_sort(
      out.records.begin(), out.records.end(), [](const TimelineRecord& a, const TimelineRecord& b) {
        return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
      });
  return out;
}

#else  // CUPTI older than CUDA 13: the record layouts read above do not exist

std::string prepare_cupti_tracing() {
  return "no CUPTI timeline: pathbench reads the CUDA 13 CUPTI activity record layouts, and "
         "this build's CUPTI headers are API version " +
         std::to_string(CUPTI_API_VERSION) + " (older than CUDA 13)";
}

TimelineCapture::TimelineCapture(Options options) : options_(options) {
  reason_ =
      "no CUPTI timeline: pathbench reads the CUDA 13 CUPTI activity record layouts, and "
      "this build's CUPTI headers are API version " +
      std::to_string(CUPTI_API_VERSION) + " (older than CUDA 13)";
}

TimelineCapture::~TimelineCapture() = default;

Timeline TimelineCapture::collect() {
  Timeline out;
  out.unavailable_reason = reason_;
  return out;
}

#endif

}  // namespace pathbench
