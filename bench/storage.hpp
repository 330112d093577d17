#pragma once

// The `storage` family: a file to GPU memory — read() into pageable memory then cudaMemcpy,
// O_DIRECT reads, queue_depth at a time, into pinned staging slots whose async copies overlap the
// next reads (measure/queued_direct_reader.hpp), mmap then cudaMemcpy from
// the mapping, and GPUDirect Storage (cuFile, loaded with dlopen) — from a cold or a warm page
// cache. The file is pathbench's own (written with the verification pattern, fsync'd), one for the
// run's cases of one size (measure/pattern_file_keeper.hpp), removed when a case of another size
// replaces it or the run ends; the GPU destination is checked against the pattern after every
// sample.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/family.hpp"
#include "measure/pattern_file_keeper.hpp"
#include "measure/queued_direct_reader.hpp"
#include "placement/page_type.hpp"
#include "placement/storage_location.hpp"

namespace pathbench {

struct StorageRequest {
  enum class Method { kPageableRead, kODirectPinned, kMmap, kCufile };
  enum class Cache { kCold, kWarm };
  // odirect_pinned's staging slots: cudaHostAlloc per slot (the driver's pages), or one mmap'd
  // region of 4 KiB, THP or hugetlb pages registered with cudaHostRegister and cut into slots.
  // A read into physically scattered 4 KiB pages is a request of one segment per page; the disk
  // may split it (a virtio disk's max_segments) and handles each segment.
  enum class Staging { kPinned, kRegistered4K, kRegisteredThp, kRegisteredHugetlb };
  // odirect_pinned's reader: queue_depth threads of one pread each, or Linux native AIO from the
  // measuring thread: the queued reader's own engines.
  using Reader = ReadEngine;
  Method method = Method::kPageableRead;
  std::string method_name;
  Cache cache = Cache::kCold;
  std::uint64_t bytes = 0;
  std::uint64_t chunk = 0;        // bytes per read (pageable_read, odirect_pinned, cufile)
  std::uint64_t queue_depth = 1;  // O_DIRECT reads in flight (odirect_pinned)
  Staging staging = Staging::kPinned;
  std::string staging_name = "pinned";
  Reader reader = Reader::kThreads;
  std::string reader_name = "threads";

  // The registered region's page type; nothing for cudaHostAlloc'd slots.
  std::optional<PageType> staging_page() const;
  // odirect_pinned's staging slots: each the chunk rounded up to O_DIRECT's block, and how many
  // (measure/queued_direct_reader.hpp's staging_slot_count).
  std::uint64_t slot_bytes() const;
  std::uint64_t slot_count() const;

  // The file is opened with O_DIRECT (bypassing the page cache).
  bool direct_io() const { return method == Method::kODirectPinned || method == Method::kCufile; }
  bool cold() const { return cache == Cache::kCold; }
};

inline constexpr std::uint64_t kStorageDefaultChunk = std::uint64_t{8} << 20;
// Page-cache state a sample must start from: at most this fraction resident (cold), at least
// this fraction (warm).
inline constexpr double kColdMaxResident = 0.01;
inline constexpr double kWarmMinResident = 0.99;

StorageRequest decode_storage_request(const CaseSpec& spec);
std::vector<MetricSpec> storage_metrics();

// The folder the case's file goes in: `run --storage-dir`, else ./.pathbench-storage.
std::string storage_dir(const Machine& machine);

// Why the case cannot run at `loc`, else nothing: a memory-backed file system (no cold read, no
// O_DIRECT), or too little free space for the file and its margin. `kept_bytes`: the test file an
// earlier case left there, which this case reads or replaces, so it counts as free.
std::optional<std::string> storage_location_skip_reason(const StorageRequest& r,
                                                        const StorageLocation& loc,
                                                        std::uint64_t kept_bytes = 0);

// The storage location as a passed check: where the file lived, and whether this case wrote it
// or read the one an earlier case of the run wrote (`written_now`).
Check storage_location_check(const StorageLocation& loc, const std::string& file_path,
                             bool written_now);

// The test file this process's storage cases share (measure/pattern_file_keeper.hpp).
PatternFileKeeper& storage_test_files();

// The `page_cache` check from the resident fraction measured before every timed block: a cold
// case passes when each was at most kColdMaxResident, a warm one when each was at least
// kWarmMinResident.
Check page_cache_check(StorageRequest::Cache cache, const std::vector<double>& fractions);

std::unique_ptr<Family> make_storage_family();
// The CUDA bench (bench/storage.cu).
std::unique_ptr<CaseBench> make_storage_bench(const StorageRequest& r, const Machine& machine,
                                              int device);

}  // namespace pathbench
