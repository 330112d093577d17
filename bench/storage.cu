// The `storage` family's CUDA bench. One sample is the whole file to GPU memory, one operation of
// a BlockBench with max_ops 1, timed by the host steady clock from the first read (or the mmap
// call) to the end of the final stream synchronisation. Before every timed block, untimed: the
// destination is cleared (so a method that moved nothing fails verification) and, cold, the
// file's pages are dropped; the resident fraction mincore finds then is recorded either way.
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/storage.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/cufile_library.hpp"
#include "cuda/event_completion.hpp"
#include "measure/block_bench.hpp"
#include "measure/pattern_file.hpp"
#include "measure/placed_host_memory.hpp"
#include "measure/queued_direct_reader.hpp"
#include "measure/timeline_checks.hpp"
#include "placement/direct_io.hpp"
#include "placement/file_handle.hpp"
#include "placement/page_cache.hpp"
#include "placement/physical_runs.hpp"
#include "placement/thread_placement.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kSeed = 0x73746f72616765u;  // "storage"
using Method = StorageRequest::Method;

Check gds_check(const GdsStatus& s) {
  Check c{"gds_status", true, s.describe(), nlohmann::ordered_json::object()};
  c.value["library_found"] = s.library_found;
  c.value["library"] = s.library;
  if (s.driver_open) c.value["driver_open_error"] = s.driver_open->err;
  c.value["nvidia_fs"] = s.nvidia_fs;
  c.value["compat_mode"] = s.compat_mode;
  return c;
}

BlockShape storage_shape(const StorageRequest& r) {
  BlockShape s;
  s.max_ops = 1;  // one operation is the whole file: a sample
  s.first_block_ops = 1;
  s.probe_ops = 1;
  s.bytes_per_op = r.bytes;
  s.verified = "the GPU destination, copied back to the host, held the file's pattern";
  return s;
}

// O_DIRECT open; a file system without direct I/O answers EINVAL: the case skips.
UniqueFd open_direct(const std::string& path, const StorageLocation& loc) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0 && errno == EINVAL) {
    throw SkipCase("O_DIRECT open of a file in " + loc.dir + " (" + loc.fs_type +
                   ") failed with EINVAL: this file system does not support direct I/O (give "
                   "run --storage-dir a folder on a block-device file system)");
  }
  if (fd < 0) throw SystemError("open " + path + " with O_DIRECT", errno);
  return UniqueFd(fd);
}

// The end of one chunk's H2D copy out of its staging slot: an event recorded behind it (one
// event per slot, since a slot has one copy in flight at most).
using SlotCopied = EventCompletion;

class StorageBench final : public BlockBench {
 public:
  StorageBench(const StorageRequest& r, const Machine& machine, int device)
      : BlockBench(storage_shape(r)),
        r_(r),
        thread_(machine, machine.gpu_local_node(device)),
        device_(make_current(device)),
        location_(probe_storage(storage_dir(machine))),
        dest_(r.bytes),
        driver_(r.method == Method::kCufile ? std::make_unique<CufileDriver>() : nullptr),
        file_(storage_test_files().file(location_.dir, r.bytes, kSeed)),
        cache_fd_(open_file(path(), O_RDONLY, "page-cache control")),
        image_(std::make_unique_for_overwrite<std::byte[]>(r.bytes)) {
    checks_.push_back(storage_location_check(location_, path(), file_.written_now));
    checks_.push_back(thread_.check());
    if (r.direct_io()) direct_fd_ = open_direct(path(), location_);
    if (r.method == Method::kPageableRead) {
      pageable_ = std::make_unique_for_overwrite<std::byte[]>(r.bytes);
    }
    if (r.method == Method::kODirectPinned) prepare_pinned();
    if (r.method == Method::kCufile) prepare_cufile();
    if (!r.cold()) read_through_page_cache(cache_fd_.get(), r.bytes);  // warm: read once
    use_clock(std::make_unique<HostClock>(std::function<void()>{},
                                          "the whole file to GPU memory, ending with the final "
                                          "stream synchronisation"));
  }

  std::vector<MetricSpec> metrics() const override { return storage_metrics(); }

  std::vector<Check> checks() const override {
    std::vector<Check> all = BlockBench::checks();
    all.push_back(page_cache_check(r_.cache, fractions_));
    if (reader_) all.push_back(direct_io_check());
    return all;
  }

  // With `run --timeline`: every chunk's copy read pinned memory, and the copies ran while
  // reads were in flight (the reader's "pread" NVTX ranges) rather than after them.
  std::vector<Check> timeline_checks(const Timeline& timeline,
                                     const TimelineAnalysis& a) const override {
    if (!reader_) return {};
    std::vector<Check> all =
        timeline_copy_checks(a, TimelineCopyExpectation{"pinned", chunk_count(r_.bytes, r_.chunk),
                                                        false, "one copy per chunk of the file"});
    all.push_back(copies_hidden_check(copies_under_ranges(timeline, reader_->read_range_name())));
    return all;
  }

  std::string timing_detail() const override {
    return "one sample = the whole " + format_bytes(r_.bytes) + " file into GPU memory by " +
           r_.method_name +
           (r_.method == Method::kMmap ? "" : " in " + format_bytes(r_.chunk) + " reads") +
           (r_.method == Method::kODirectPinned
                ? concat(", ", std::to_string(r_.queue_depth), " in flight (reader ",
                         r_.reader_name, "), staging slots ", r_.staging_name)
                : std::string()) +
           ", timed by the host steady clock from the first read" +
           (r_.method == Method::kMmap ? " (the mmap call)" : "") +
           " to the end of the final stream synchronisation; before it, untimed: the "
           "destination cleared" +
           (r_.cold() ? ", fdatasync + POSIX_FADV_DONTNEED, mincore" : ", mincore");
  }

 protected:
  void enqueue(std::uint64_t ops) override {
    for (std::uint64_t i = 0; i < ops; ++i) transfer();
  }
  void complete() override {}  // transfer() ends synchronised

  void before_sample() override {
    PB_CUDA(cudaMemsetAsync(dest_.get(), 0, r_.bytes, stream_.get()));
    stream_.synchronize();
    if (r_.cold()) drop_from_page_cache(cache_fd_.get());
    fractions_.push_back(resident_fraction(cache_fd_.get(), r_.bytes));
  }

  void check_destination() override {
    PB_CUDA(cudaMemcpy(image_.get(), dest_.get(), r_.bytes, cudaMemcpyDeviceToHost));
    verify_file_image({image_.get(), r_.bytes}, r_.bytes, kSeed,
                      "GPU destination after the sample (copied back)");
  }

  std::vector<double> values(const BlockTimes& t) const override {
    const double s = t.slowest();
    return {static_cast<double>(r_.bytes) / s / kGB, s};
  }

 private:
  const std::string& path() const { return file_.file->path(); }

  // The staging slots (pinned or registered, 4096-aligned), an event per slot, and the reader
  // with its threads: all before the first sample, so that none of it is timed.
  void prepare_pinned() {
    const std::uint64_t length = r_.slot_bytes();
    const std::uint64_t count = r_.slot_count();
    if (const std::optional<PageType> page = r_.staging_page()) {
      registered_ =
          PlacedHostMemory({HostMemoryKind::kRegistered, count * length, page, thread_.node()});
      for (Check& c : registered_.checks("staging slots")) checks_.push_back(std::move(c));
    }
    std::vector<std::span<std::byte>> slots;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::byte* slot = nullptr;
      if (r_.staging_page()) {
        slot = registered_.data() + i * length;
      } else {
        pinned_.emplace_back(length);
        slot = pinned_.back().get();
      }
      copied_.emplace_back(cudaEventDisableTiming);
      if (!is_aligned_address(slot, kDirectIoAlignment)) {
        throw CaseFailure("the staging slot at " + std::to_string(i * length) + " (" +
                          r_.staging_name + ") is not aligned to " +
                          std::to_string(kDirectIoAlignment) +
                          " bytes: O_DIRECT cannot read into it");
      }
      slots.emplace_back(slot, length);
    }
    // Once, before the reads: the slots are pinned, so their frames do not move.
    const std::vector<std::span<const std::byte>> ranges(slots.begin(), slots.end());
    slot_runs_ = summarize_physical_runs(ranges);
    reader_ = std::make_unique<QueuedDirectReader>(direct_fd_.get(), path(), r_.bytes, r_.chunk,
                                                   r_.queue_depth, std::move(slots), r_.reader);
  }

  // What the reader did, over every sample (warm-up included): how deep the queue reached, why
  // it waited, and how much of each pass the copies added after the last read had arrived (the
  // copies not hidden behind the reads).
  std::string staging_detail() const {
    switch (r_.staging) {
      case StorageRequest::Staging::kPinned:
        return "pinned, cudaHostAlloc per slot";
      case StorageRequest::Staging::kRegistered4K:
        return "one registered region of 4 KiB pages";
      case StorageRequest::Staging::kRegisteredThp:
        return "one registered region of THP pages";
      case StorageRequest::Staging::kRegisteredHugetlb:
        return "one registered region of hugetlb pages";
    }
    return r_.staging_name;
  }

  Check direct_io_check() const {
    const QueuedReadStats s = reader_->stats();
    const bool aio = reader_->engine() == ReadEngine::kAio;
    const std::string readers =
        aio ? std::string("Linux native AIO: the measuring thread submits and reaps the reads")
            : concat(std::to_string(reader_->threads()),
                     " reader threads on the measuring thread's CPUs, a read queued ahead "
                     "for each");
    const double mean_reads = s.passes ? s.reads_seconds / static_cast<double>(s.passes) : 0;
    const double mean_tail = s.passes ? s.tail_seconds / static_cast<double>(s.passes) : 0;
    const double mean_handover = s.chunks ? s.handover_seconds / static_cast<double>(s.chunks) : 0;
    const double mean_submit = s.submits ? s.submit_seconds / static_cast<double>(s.submits) : 0;
    const std::string layout = describe_slot_runs(
        slot_runs_, location_.block_device ? location_.block_device->max_segments : std::nullopt);
    Check c{
        "direct_io", true,
        concat("O_DIRECT open succeeded; ", std::to_string(reader_->slots()), " staging slots of ",
               format_bytes(r_.slot_bytes()), " (", staging_detail(), "), 4096-aligned; ", layout,
               "; chunk offsets and lengths rounded to 4096; "
               "queue depth ",
               std::to_string(r_.queue_depth), " (", readers, "); at most ",
               std::to_string(s.max_reads_in_pread),
               aio ? " reads were in the kernel at once" : " reads were inside pread at once",
               "; the reader waited for a copy to free a "
               "slot ",
               std::to_string(s.slot_waits), " times for ", format_seconds(s.slot_wait_seconds),
               " in all (at most ", std::to_string(s.max_reads_per_wakeup),
               " reads arrived at once, and at least ",
               std::to_string(s.min_reads_queued_at_handover),
               " were queued whenever a chunk was handed over); after the last read of a pass "
               "the copies took ",
               format_seconds(mean_tail), " more on average (at most ",
               format_seconds(s.max_tail_seconds), "), against ", format_seconds(mean_reads),
               " of reads; queueing a chunk's copy took ", format_seconds(mean_handover),
               " on average",
               aio ? concat("; io_submit took ", format_seconds(mean_submit),
                            " on average (at most ", format_seconds(s.max_submit_seconds),
                            "): a submission as long as a read means the kernel read "
                            "synchronously and the queue was one deep")
                   : std::string()),
        nlohmann::ordered_json::object()};
    c.value["slot_bytes"] = r_.slot_bytes();
    c.value["slots"] = reader_->slots();
    c.value["staging_memory"] = r_.staging_name;
    // Runs of physically contiguous pages per slot; null where pagemap hides frame numbers.
    c.value["slot_page_runs_min"] = nullptr;
    c.value["slot_page_runs_median"] = nullptr;
    c.value["slot_page_runs_max"] = nullptr;
    if (slot_runs_) {
      c.value["slot_page_runs_min"] = slot_runs_->min_runs;
      c.value["slot_page_runs_median"] = slot_runs_->median_runs;
      c.value["slot_page_runs_max"] = slot_runs_->max_runs;
    }
    c.value["queue_depth"] = r_.queue_depth;
    c.value["reader"] = r_.reader_name;
    c.value["reader_threads"] = reader_->threads();
    c.value["chunks_read"] = s.chunks;
    c.value["max_reads_queued"] = s.max_reads_queued;
    c.value["max_reads_in_pread"] = s.max_reads_in_pread;
    c.value["slot_waits"] = s.slot_waits;
    c.value["slot_wait_seconds"] = s.slot_wait_seconds;
    c.value["max_reads_per_wakeup"] = s.max_reads_per_wakeup;
    c.value["min_reads_queued_at_handover"] = s.min_reads_queued_at_handover;
    c.value["passes"] = s.passes;
    c.value["mean_reads_seconds"] = mean_reads;
    c.value["mean_copy_tail_seconds"] = mean_tail;
    c.value["max_copy_tail_seconds"] = s.max_tail_seconds;
    c.value["mean_handover_seconds"] = mean_handover;
    if (aio) {
      c.value["submits"] = s.submits;
      c.value["mean_submit_seconds"] = mean_submit;
      c.value["max_submit_seconds"] = s.max_submit_seconds;
    }
    return c;
  }

  void prepare_cufile() {
    handle_ = std::make_unique<CufileFile>(*driver_, direct_fd_.get());
    buffer_ = std::make_unique<CufileBuffer>(*driver_, dest_.get(), r_.bytes);
    Check c = gds_check(driver_->status());
    c.detail += buffer_->ok()
                    ? "; destination registered (cuFileBufRegister)"
                    : "; cuFileBufRegister failed (" + describe_cufile_error(buffer_->error()) +
                          "): reads go through cuFile's bounce buffers";
    c.value["buffer_registered"] = buffer_->ok();
    checks_.push_back(std::move(c));
  }

  void transfer() {
    switch (r_.method) {
      case Method::kPageableRead:
        return pageable_read();
      case Method::kODirectPinned:
        return odirect_pinned();
      case Method::kMmap:
        return mmap_copy();
      case Method::kCufile:
        return cufile_read();
    }
  }

  void pageable_read() {
    for (std::uint64_t off = 0; off < r_.bytes; off += r_.chunk) {
      const std::uint64_t n = std::min(r_.chunk, r_.bytes - off);
      pread_exactly(cache_fd_.get(), path(), pageable_.get() + off, n, n, off, false);
    }
    PB_CUDA(cudaMemcpyAsync(dest_.get(), pageable_.get(), r_.bytes, cudaMemcpyHostToDevice,
                            stream_.get()));
    stream_.synchronize();
  }

  // The reader keeps queue_depth reads in flight; every chunk that arrives is copied from its
  // slot to its offset of the destination, and the slot goes back to the reader once the event
  // behind that copy has completed, so the copies overlap the next reads.
  void odirect_pinned() {
    reader_->read_all([this](const StagedChunk& c) -> std::unique_ptr<Completion> {
      auto copied = std::make_unique<SlotCopied>(copied_[c.slot].get());
      PB_CUDA(cudaMemcpyAsync(dest_.get() + c.chunk.offset, c.data.data(), c.chunk.bytes,
                              cudaMemcpyHostToDevice, stream_.get()));
      if (const cudaError_t e = cudaEventRecord(copied_[c.slot].get(), stream_.get());
          e != cudaSuccess) {
        cudaStreamSynchronize(stream_.get());  // the reader may reuse the slot once this throws
        PB_CUDA(e);
      }
      return copied;
    });
    stream_.synchronize();
  }

  // A fresh mapping per sample: a mapping kept across samples would pin the pages in the page
  // cache against POSIX_FADV_DONTNEED.
  void mmap_copy() {
    const FileMapping map(cache_fd_.get(), r_.bytes);
    PB_CUDA(
        cudaMemcpyAsync(dest_.get(), map.data(), r_.bytes, cudaMemcpyHostToDevice, stream_.get()));
    stream_.synchronize();
  }

  void cufile_read() {
    const CufileApi& api = driver_->api();
    for (std::uint64_t off = 0; off < r_.bytes;) {
      const std::uint64_t want = std::min(r_.chunk, r_.bytes - off);
      const ssize_t n = api.read(handle_->get(), dest_.get(), want, static_cast<off_t>(off),
                                 static_cast<off_t>(off));
      if (n < 0) {
        throw CaseFailure("cuFileRead of " + std::to_string(want) + " bytes at " +
                          std::to_string(off) + " returned " + std::to_string(n) +
                          (n == -1 ? " (" + std::string(std::strerror(errno)) + ")" : ""));
      }
      if (n == 0) throw CaseFailure("cuFileRead hit the end of the file at " + std::to_string(off));
      off += static_cast<std::uint64_t>(n);
    }
    stream_.synchronize();
  }

  StorageRequest r_;
  // On the GPU's NUMA node, where the staging memory is then allocated; the reader's threads,
  // started from this one, inherit its CPUs.
  ThreadPlacement thread_;
  int device_;
  StorageLocation location_;
  Stream stream_;
  DeviceMemory dest_;
  std::unique_ptr<CufileDriver> driver_;  // before the file: no file is written when GDS is absent
  PatternFileKeeper::Lease file_;  // this size's file: written now, or kept from an earlier case
  UniqueFd cache_fd_;              // buffered: pageable and mmap reads, page-cache control, mincore
  UniqueFd direct_fd_;             // O_DIRECT: odirect_pinned, cufile
  std::unique_ptr<std::byte[]> image_;            // the destination copied back, for verification
  std::unique_ptr<std::byte[]> pageable_;         // pageable_read's buffer
  std::vector<PinnedHostMemory> pinned_;          // odirect_pinned's slots, staging_memory=pinned
  PlacedHostMemory registered_;                   // or one registered region holding them all
  std::vector<Event> copied_;                     // per slot: recorded behind its latest copy
  std::optional<PhysicalRunsSummary> slot_runs_;  // the slots' physical layout, when readable
  std::unique_ptr<QueuedDirectReader> reader_;    // after its fd and slots: joined before they go
  std::unique_ptr<CufileFile> handle_;
  std::unique_ptr<CufileBuffer> buffer_;
  std::vector<double> fractions_;  // resident fraction before every timed block
};

}  // namespace

std::unique_ptr<CaseBench> make_storage_bench(const StorageRequest& r, const Machine& machine,
                                              int device) {
  return std::make_unique<StorageBench>(r, machine, device);
}

}  // namespace pathbench
