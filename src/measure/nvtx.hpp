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
    const nvtxEventAttributes_t attr = attributes(name, category, bytes);
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
  friend class NvtxSpan;
#ifdef PATHBENCH_HAVE_NVTX
  // `name` must outlive the call that takes the attributes.
  static nvtxEventAttributes_t attributes(const std::string& name, const std::string& category,
                                          std::uint64_t bytes) {
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name.c_str();
    attr.category = category_id(category);
    attr.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    attr.payload.ullValue = bytes;
    return attr;
  }
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

// A range that need not nest: started on one thread, ended on any (an asynchronous read, from
// its submission to its completion). Empty (nothing open) when default-made or ended.
class NvtxSpan {
 public:
  NvtxSpan() = default;
  NvtxSpan(const std::string& name, const std::string& category, std::uint64_t bytes = 0) {
#ifdef PATHBENCH_HAVE_NVTX
    const nvtxEventAttributes_t attr = NvtxRange::attributes(name, category, bytes);
    id_ = nvtxDomainRangeStartEx(NvtxRange::domain(), &attr);
    open_ = true;
#else
    (void)name;
    (void)category;
    (void)bytes;
#endif
  }
  NvtxSpan(NvtxSpan&& o) noexcept : id_(o.id_), open_(o.open_) { o.open_ = false; }
  NvtxSpan& operator=(NvtxSpan&& o) noexcept {
    if (this != &o) {
      end();
      id_ = o.id_;
      open_ = o.open_;
      o.open_ = false;
    }
    return *this;
  }
  NvtxSpan(const NvtxSpan&) = delete;
  NvtxSpan& operator=(const NvtxSpan&) = delete;
  ~NvtxSpan() { end(); }

  void end() noexcept {
#ifdef PATHBENCH_HAVE_NVTX
    if (open_) nvtxDomainRangeEnd(NvtxRange::domain(), id_);
#endif
    open_ = false;
  }

 private:
  std::uint64_t id_ = 0;
  bool open_ = false;
};

}  // namespace pathbench
