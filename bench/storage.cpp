#include "bench/storage.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "measure/gpu_bench.hpp"
#include "measure/queued_direct_reader.hpp"
#include "placement/direct_io.hpp"
#include "scenario/typed_axis.hpp"

namespace pathbench {

namespace {

using Method = StorageRequest::Method;
using Cache = StorageRequest::Cache;

const EnumAxis<Method> kMethod{
    "method",
    {{"pageable_read", Method::kPageableRead},
     {"odirect_pinned", Method::kODirectPinned},
     {"mmap", Method::kMmap},
     {"cufile", Method::kCufile}},
    "pageable_read: read() in chunks into pageable memory, then one cudaMemcpy; odirect_pinned: "
    "O_DIRECT reads, queue_depth in flight, into pinned staging slots, each chunk's async copy "
    "overlapping the next reads; "
    "mmap: cudaMemcpy from a mapping of the file; cufile: GPUDirect Storage cuFileRead into GPU "
    "memory (libcufile loaded at run time)"};
const EnumAxis<Cache> kCache{
    "cache",
    {{"cold", Cache::kCold}, {"warm", Cache::kWarm}},
    "cold: the file's pages are dropped from the page cache before every sample (fdatasync, "
    "POSIX_FADV_DONTNEED; mincore checks); warm: read once before the samples, resident"};
const IntegerAxis kBytes{"bytes", std::int64_t{1} << 20, std::int64_t{64} << 30,
                         "size of the file (1 MiB .. 64 GiB)"};
const IntegerAxis kChunk{"chunk", std::int64_t{4} << 10, std::int64_t{1} << 30,
                         "bytes per read of the chunked methods, a multiple of 4096 (default 8 "
                         "MiB); not for mmap"};
const IntegerAxis kQueueDepth{"queue_depth", 1, 256,
                              "O_DIRECT reads of `chunk` bytes kept in flight (by as many reader "
                              "threads, or by AIO with reader=aio; default 1: one synchronous "
                              "read); odirect_pinned only"};
const EnumAxis<StorageRequest::Staging> kStagingMemory{
    "staging_memory",
    {{"pinned", StorageRequest::Staging::kPinned},
     {"registered-4k", StorageRequest::Staging::kRegistered4K},
     {"registered-thp", StorageRequest::Staging::kRegisteredThp},
     {"registered-hugetlb", StorageRequest::Staging::kRegisteredHugetlb}},
    "odirect_pinned's staging slots: pinned (default): cudaHostAlloc per slot; registered-4k, "
    "registered-thp, registered-hugetlb: one mmap'd region of those pages, cudaHostRegister'ed "
    "and cut into slots (a read into scattered 4 KiB pages is a request of many segments)"};

const EnumAxis<StorageRequest::Reader> kReader{
    "reader",
    {{"threads", StorageRequest::Reader::kThreads}, {"aio", StorageRequest::Reader::kAio}},
    "odirect_pinned's reads in flight: threads (default): queue_depth threads, one synchronous "
    "pread each; aio: Linux native AIO, the measuring thread keeping queue_depth reads submitted "
    "(io_submit, io_getevents), as fio's libaio engine does"};

class StorageFamily final : public DeclaredFamily {
 public:
  StorageFamily()
      : DeclaredFamily(
            {"storage",
             "A file to GPU memory: pageable read + cudaMemcpy, O_DIRECT at a queue "
             "depth into pinned slots pipelined with async copies, mmap + cudaMemcpy, "
             "and GPUDirect "
             "Storage (cuFile), from a cold or warm page cache; the destination is "
             "checked against the file's pattern after every sample",
             axis_schemas(kMethod, kBytes, kCache, kChunk, kQueueDepth, kStagingMemory, kReader),
             {"method", "bytes", "cache"}}) {}

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    const StorageRequest r = decode_storage_request(spec);
    if (kQueueDepth.present(spec) && r.method != Method::kODirectPinned) {
      return concat("queue_depth applies to odirect_pinned only (", r.method_name,
                    " issues one read at a time)");
    }
    if (kStagingMemory.present(spec) && r.method != Method::kODirectPinned) {
      return concat("staging_memory applies to odirect_pinned only (", r.method_name,
                    " has no staging slots)");
    }
    if (kReader.present(spec) && r.method != Method::kODirectPinned) {
      return concat("reader applies to odirect_pinned only (", r.method_name,
                    " has no queued reader)");
    }
    if (r.method == Method::kODirectPinned && !r.cold()) {
      return std::string(
          "cache=warm has no meaning for odirect_pinned: O_DIRECT reads bypass the page cache, so "
          "a warm case reads the device exactly as a cold one does (use cache=cold)");
    }
    if (r.method == Method::kMmap) {
      if (!kChunk.present(spec)) return std::nullopt;
      return std::string("chunk does not apply to mmap (one cudaMemcpy from the whole mapping)");
    }
    if (!is_aligned_to(r.chunk, kDirectIoAlignment)) {
      return "chunk " + std::to_string(r.chunk) + " is not a multiple of " +
             std::to_string(kDirectIoAlignment) + " bytes (O_DIRECT's alignment)";
    }
    if (kChunk.present(spec) && r.chunk > r.bytes) {
      return "chunk " + format_bytes(r.chunk) + " is larger than the file (" +
             format_bytes(r.bytes) + ")";
    }
    if (const std::uint64_t chunks = chunk_count(r.bytes, r.chunk); r.queue_depth > chunks) {
      return concat("queue_depth ", std::to_string(r.queue_depth), " is more than the file's ",
                    std::to_string(chunks), " chunks of ", format_bytes(r.chunk),
                    ": at most that many reads can be in flight");
    }
    return std::nullopt;
  }

  // Host: the pageable read buffer or the pinned staging slots, and the buffer the destination
  // is copied back into to be verified. GPU: the destination.
  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const StorageRequest r = decode_storage_request(spec);
    const std::uint64_t staging = r.method == Method::kPageableRead ? r.bytes
                                  : r.method == Method::kODirectPinned
                                      ? r.slot_count() * r.slot_bytes()
                                      : 0;
    return {r.bytes + staging, r.bytes};
  }

  Requirements requirements(const CaseSpec& spec) const override {
    const StorageRequest r = decode_storage_request(spec);
    Requirements needs;
    needs.gpu();
    if (r.staging_page() == PageType::kThp) needs.transparent_huge_pages();
    if (r.staging_page() == PageType::kHugetlb) {
      needs.hugetlb_pages(r.slot_count() * r.slot_bytes());
    }
    return needs.custom([r](const Machine& machine, int) -> std::optional<std::string> {
      const std::string dir = storage_dir(machine);
      try {
        const StorageLocation loc = probe_storage(dir);
        return storage_location_skip_reason(r, loc, storage_test_files().bytes_kept_in(loc.dir));
      } catch (const SystemError& e) {
        return "the storage folder " + dir + " cannot be probed: " + e.what();
      }
    });
  }

  std::optional<std::vector<std::string>> metric_names(const CaseSpec&) const override {
    return metric_names_of(storage_metrics());
  }

  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    PATHBENCH_GPU_BENCH(make_storage_bench(decode_storage_request(spec), machine, device));
  }
};

}  // namespace

StorageRequest decode_storage_request(const CaseSpec& spec) {
  StorageRequest r;
  r.method = kMethod.decode(spec);
  r.method_name = kMethod.name_of(r.method);
  r.cache = kCache.decode(spec);
  r.bytes = static_cast<std::uint64_t>(kBytes.decode(spec));
  if (r.method == Method::kMmap) {
    r.chunk = r.bytes;  // one copy of it all
  } else if (kChunk.present(spec)) {
    r.chunk = static_cast<std::uint64_t>(kChunk.decode(spec));
  } else {  // a file smaller than the default is read in one (block-rounded) chunk
    r.chunk = std::min(kStorageDefaultChunk, round_up_to(r.bytes, kDirectIoAlignment));
  }
  r.queue_depth = static_cast<std::uint64_t>(kQueueDepth.decode_or(spec, 1));
  r.staging = kStagingMemory.decode_or(spec, StorageRequest::Staging::kPinned);
  r.staging_name = kStagingMemory.name_of(r.staging);
  r.reader = kReader.decode_or(spec, StorageRequest::Reader::kThreads);
  r.reader_name = kReader.name_of(r.reader);
  return r;
}

std::uint64_t StorageRequest::slot_bytes() const { return round_up_to(chunk, kDirectIoAlignment); }

std::uint64_t StorageRequest::slot_count() const {
  return staging_slot_count(queue_depth, bytes, chunk, reader);
}

std::optional<PageType> StorageRequest::staging_page() const {
  switch (staging) {
    case Staging::kRegistered4K:
      return PageType::k4K;
    case Staging::kRegisteredThp:
      return PageType::kThp;
    case Staging::kRegisteredHugetlb:
      return PageType::kHugetlb;
    case Staging::kPinned:
      break;
  }
  return std::nullopt;
}

std::vector<MetricSpec> storage_metrics() {
  return {{"throughput", "GB/s", Better::kHigher}, {"time", "s", Better::kLower}};
}

std::string storage_dir(const Machine& machine) {
  if (!machine.storage_dir.empty()) return machine.storage_dir;
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  return ((ec ? std::filesystem::path(".") : cwd) / ".pathbench-storage").string();
}

PatternFileKeeper& storage_test_files() {
  static PatternFileKeeper files;  // a run's last file goes at exit, if the run did not let it go
  return files;
}

std::optional<std::string> storage_location_skip_reason(const StorageRequest& r,
                                                        const StorageLocation& loc,
                                                        std::uint64_t kept_bytes) {
  if (loc.memory_backed && (r.cold() || r.direct_io())) {
    return "the storage folder " + loc.dir + " is on " + loc.fs_type +
           ", which keeps files in memory: " +
           (r.direct_io() ? "O_DIRECT cannot open them" : "a cold read cannot be had") +
           " (give run --storage-dir a folder on the disk to measure)";
  }
  const std::uint64_t need = r.bytes + storage_free_margin(r.bytes);
  const std::uint64_t free = loc.free_bytes + kept_bytes;
  if (free < need) {
    return "the storage folder " + loc.dir + " (" + loc.fs_type + ") has " + format_bytes(free) +
           (kept_bytes ? " free with the kept test file" : " free") + "; the " +
           format_bytes(r.bytes) + " test file needs " + format_bytes(need) +
           " with its margin (give run --storage-dir "
           "a folder with more space)";
  }
  return std::nullopt;
}

Check storage_location_check(const StorageLocation& loc, const std::string& file_path,
                             bool written_now) {
  Check c{"storage_location", true,
          loc.dir + " on " + loc.fs_type +
              (loc.source.empty() ? std::string() : ", from " + loc.source) +
              (loc.mount_point.empty() ? std::string() : " mounted at " + loc.mount_point) + ", " +
              format_bytes(loc.free_bytes) + " free before the case began; the test file " +
              file_path +
              (written_now ? " was written for this case"
                           : " was written for an earlier case of this run and kept"),
          nlohmann::ordered_json::object()};
  c.detail += loc.block_device
                  ? concat("; block device ", describe(*loc.block_device))
                  : concat("; no block device behind device number ", loc.device_number);
  c.value["dir"] = loc.dir;
  c.value["fs_type"] = loc.fs_type;
  c.value["source"] = loc.source;
  c.value["mount_point"] = loc.mount_point;
  c.value["free_bytes"] = loc.free_bytes;
  c.value["file"] = file_path;
  c.value["file_written_for_this_case"] = written_now;
  c.value["device_number"] = loc.device_number;
  c.value["block_device"] =
      loc.block_device ? to_json(*loc.block_device) : nlohmann::ordered_json(nullptr);
  return c;
}

Check page_cache_check(Cache cache, const std::vector<double>& fractions) {
  const bool cold = cache == Cache::kCold;
  if (fractions.empty()) {
    return {"page_cache", false, "the page cache was not probed before any sample",
            nlohmann::ordered_json::array()};
  }
  const double worst = cold ? *std::max_element(fractions.begin(), fractions.end())
                            : *std::min_element(fractions.begin(), fractions.end());
  const bool passed = cold ? worst <= kColdMaxResident : worst >= kWarmMinResident;
  char pct_text[32];
  std::snprintf(pct_text, sizeof pct_text, "%.1f", worst * 100);
  const std::string pct = pct_text;
  std::string detail =
      cold ? (passed ? "before every block at most " + pct +
                           " % of the file was resident (mincore after fdatasync and "
                           "POSIX_FADV_DONTNEED): the reads came from the device"
                     : pct +
                           " % of the file stayed resident after POSIX_FADV_DONTNEED: the "
                           "read was not cold")
           : (passed ? "before every block at least " + pct +
                           " % of the file was resident (mincore): the reads could come from "
                           "the page cache"
                     : "only " + pct + " % of the file was resident: the warm read was not warm");
  return {"page_cache", passed, detail, fractions};
}

std::unique_ptr<Family> make_storage_family() { return std::make_unique<StorageFamily>(); }

}  // namespace pathbench
