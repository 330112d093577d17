#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define PATHBENCH_HAVE_NVTX 1
#endif

namespace pathbench {

// One NVTX range in the `pathbench` domain (scenario -> case -> repetition), so an nsys timeline
// reads as the scenario file does. The payload carries the bytes the range moves.
class NvtxRange {
 public:
  NvtxRange(const std::string& name, const std::string& category, std::uint64_t bytes = 0) {
#ifdef PATHBENCH_HAVE_NVTX
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name.c_str();
    attr.category = category_id(category);
    attr.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    attr.payload.ullValue = bytes;
    nvtxDomainRangePushEx(domain(), &attr);
#else
    (void)name;
    (void)category;
    (void)bytes;
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
  ~NvtxRange() {
#ifdef PATHBENCH_HAVE_NVTX
    nvtxDomainRangePop(domain());
#endif
  }

 private:
#ifdef PATHBENCH_HAVE_NVTX
  static nvtxDomainHandle_t domain() {
    static nvtxDomainHandle_t d = nvtxDomainCreateA("pathbench");
    return d;
  }
  static std::uint32_t category_id(const std::string& category) {
    // Stable small ids per family name, named once for the profiler: a range per read (the
    // storage reader's) must not register its category with the tool every time.
    std::uint32_t id = 1;
    for (char c : category) id = id * 31 + static_cast<unsigned char>(c);
    id = id % 1000 + 1;
    static std::mutex mutex;
    static std::set<std::uint32_t> named;
    std::lock_guard lock(mutex);
    if (named.insert(id).second) nvtxDomainNameCategoryA(domain(), id, category.c_str());
    return id;
  }
#endif
};

}  // namespace pathbench
