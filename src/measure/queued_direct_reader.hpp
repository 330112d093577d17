#pragma once

// Reads a file front to back in `chunk` pieces with up to `queue_depth` O_DIRECT preads in
// flight, each into one of a bounded set of staging slots, and hands every chunk that has arrived
// to the caller (the storage family's odirect_pinned: an async H2D copy out of the slot). A slot
// is read into again only once the caller's completion for it is done, since the copy engine may
// still be reading it until then. With one synchronous read in flight a storage device cannot
// show what it can do; a deeper queue is what an NVMe drive (or a stripe of them) needs.
//
// Two engines keep the reads in flight. kThreads: a fixed pool of queue_depth threads (one at
// queue depth 1), one synchronous pread each, started with the reader and joined when it goes;
// every pread is an NVTX range ("pread", category "storage", its bytes as payload). The calling
// thread queues up to a read per thread ahead (the slots beyond queue_depth and the spare ones),
// so a thread goes from one pread straight to the next, as fio's psync threads do, without
// waiting for the calling thread between them (two thread wake-ups per read); the kernel still
// sees at most queue_depth reads, one per thread. The calling thread meanwhile hands the chunks
// over (the family queues their copies), off the reads' path. kAio: Linux native AIO
// (measure/native_aio.hpp), the calling thread submitting queue_depth reads and reaping them as
// they complete, as fio's libaio engine does, with no thread per read; each read is an NVTX range
// "aio_read" from its submission to its reaping. Either way a timeline shows the reads beside the
// copies out of the slots. Nothing here touches CUDA: the slots are memory the caller owns (pinned
// in the family, any aligned memory in a test) and a slot's release is a Completion, so the rules
// are tested on a machine without a GPU.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "measure/native_aio.hpp"
#include "measure/nvtx.hpp"
#include "measure/pinned_staging_pool.hpp"
#include "placement/direct_io.hpp"

namespace pathbench {

// Slots beyond the queue depth: a delivered chunk's slot stays busy until its copy is done, and
// these let the next reads start meanwhile. As many as the queue depth (at least
// kMinSpareStagingSlots): reads often complete in bursts (a virtio disk, interrupt coalescing), and
// with spare slots for a whole burst the reader refills the queue before it hands the burst over,
// without waiting for the copies just queued for it. On the H200 VM, 2 spare slots at queue depth
// 4 and 128 KiB reads left the disk without a read 46 % of the copy time (the timeline's
// copies_hidden_by_reads) and the reader waited for copies 11,483 times in 4 passes.
inline constexpr std::uint64_t kMinSpareStagingSlots = 2;

// How a QueuedDirectReader keeps its reads in flight (see above).
enum class ReadEngine { kThreads, kAio };

// The slots a reader needs: the reads it queues (kAio: queue_depth; kThreads: 2 x queue_depth,
// one inside pread and one queued ahead per thread) + the spare slots, max(queue_depth,
// kMinSpareStagingSlots); never more than the file has chunks.
std::uint64_t staging_slot_count(std::uint64_t queue_depth, std::uint64_t file_bytes,
                                 std::uint64_t chunk, ReadEngine engine);

// Reads `want` bytes at `offset` of `fd` into `dst`, asking for `ask` (>= want: an O_DIRECT
// read's rounded length, cut short by the end of the file), again after a short read. Throws
// CaseFailure naming `file`, the offset and the length when pread fails (errno's text), when the
// file ends before `want` bytes, or when, `direct`, a short read leaves the next offset unaligned.
void pread_exactly(int fd, const std::string& file, std::byte* dst, std::uint64_t want,
                   std::uint64_t ask, std::uint64_t offset, bool direct);

// A chunk that has arrived in a slot.
struct StagedChunk {
  FileChunk chunk;  // offset, bytes held, the length read
  std::size_t slot = 0;
  std::span<std::byte> data;  // the slot's first chunk.bytes bytes
};

struct QueuedReadStats {
  std::uint64_t chunks = 0;  // read and delivered, over every read_all
  // Most reads submitted and not yet delivered at once: the queue depth the dispatcher kept
  // (kThreads: up to twice that, with the reads queued ahead of the threads).
  std::uint64_t max_reads_queued = 0;
  // Most reads inside the kernel at once (threads inside pread; AIO reads submitted and not yet
  // reaped): how deep the queue reached the kernel.
  std::uint64_t max_reads_in_pread = 0;
  // Times the dispatcher found no free slot and waited for the oldest copy, and how long it
  // waited in all: copies, not reads, were holding the queue back then. A wait follows a burst:
  // when more reads arrive at once than there are spare slots, the copies just queued for the
  // burst's first chunks are still running when the next reads need their slots.
  std::uint64_t slot_waits = 0;
  double slot_wait_seconds = 0;
  // Most reads that had arrived when the dispatcher woke up once (the largest burst).
  std::uint64_t max_reads_per_wakeup = 0;
  // The fewest reads queued (submitted, not yet arrived) when a chunk was handed over while
  // chunks were still left to submit: at least the queue depth when the reader refilled the queue
  // before handing a burst over (kAio: exactly; kThreads: more with reads queued ahead), less when
  // slots ran short; over every read_all. Zero before any such hand-over.
  std::uint64_t min_reads_queued_at_handover = 0;
  // Time read_all's thread spent handing chunks over (in on_chunk: queueing each chunk's copy),
  // over every chunk: with kAio it reaps and submits nothing meanwhile.
  double handover_seconds = 0;
  // kAio: the io_submit calls, their time in all and the longest. A submission that does not
  // return until its read is done (an AIO path the kernel cannot queue) makes the queue one
  // deep however many reads it asks for; 0 with kThreads.
  std::uint64_t submits = 0;
  double submit_seconds = 0, max_submit_seconds = 0;
  // read_all calls that ended without an error, and their times (ReadAllTimes) summed; the
  // copies' tail also at its worst.
  std::uint64_t passes = 0;
  double reads_seconds = 0;
  double tail_seconds = 0, max_tail_seconds = 0;
};

// One read_all, timed by the steady clock from its start: until the last read had arrived (and
// was handed over), and from then until every completion was done — the copies that were not
// hidden behind the reads (at least the last chunk's).
struct ReadAllTimes {
  double reads_seconds = 0;
  double tail_seconds = 0;
};

class QueuedDirectReader {
 public:
  // Called on read_all's thread for every chunk, in the order the reads complete. Returns the
  // completion of what still reads the slot (the copy out of it), or nullptr when nothing does;
  // one that throws must leave nothing reading the slot.
  using OnChunk = std::function<std::unique_ptr<Completion>(const StagedChunk&)>;

  // Reads `file_bytes` of `fd` (opened by the caller with O_DIRECT, outliving the reader; `file`
  // names it in messages) in `chunk` pieces, queue_depth at a time, into `slots` (memory the
  // caller owns, each at least `chunk` rounded up to kDirectIoAlignment and aligned to it).
  // kThreads starts queue_depth threads; kAio sets up an AIO context for
  // queue_depth reads (SystemError naming io_setup when the kernel refuses). Throws
  // std::invalid_argument for a zero or
  // unaligned chunk, a zero queue depth, a queue deeper than the file has chunks, fewer slots
  // than min(queue_depth + 1, chunks), or a slot too small or unaligned; CaseFailure naming the
  // count when the threads cannot be started (those that were are joined).
  QueuedDirectReader(int fd, std::string file, std::uint64_t file_bytes, std::uint64_t chunk,
                     std::uint64_t queue_depth, std::vector<std::span<std::byte>> slots,
                     ReadEngine engine = ReadEngine::kThreads);
  // Stops and joins the threads.
  ~QueuedDirectReader();
  QueuedDirectReader(const QueuedDirectReader&) = delete;
  QueuedDirectReader& operator=(const QueuedDirectReader&) = delete;

  // Reads the whole file once, handing each chunk to `on_chunk`, and returns when every chunk
  // has been handed over and every completion is done (every slot free again). On the first
  // error (a read, `on_chunk`, a completion) it submits no more reads, waits for those in flight
  // and for every completion, and rethrows that error: the slots are free when it throws, and
  // the reader can read again. One read_all at a time.
  ReadAllTimes read_all(const OnChunk& on_chunk);

  std::uint64_t queue_depth() const { return queue_depth_; }
  ReadEngine engine() const { return engine_; }
  // The NVTX range every read is: "pread" (kThreads) or "aio_read" (kAio).
  const char* read_range_name() const { return engine_ == ReadEngine::kAio ? "aio_read" : "pread"; }
  std::size_t threads() const { return workers_.size(); }
  std::size_t slots() const { return slots_.size(); }
  QueuedReadStats stats() const;

 private:
  struct Job {
    std::uint64_t index = 0;
    std::size_t slot = 0;
  };
  struct Finished {
    std::uint64_t index = 0;
    std::size_t slot = 0;
    std::exception_ptr error;
  };

  void work();
  Finished reap(const NativeAio::Event& event) noexcept;
  void read_chunk(const Job& job);
  Finished run_job(const Job& job) noexcept;
  void submit(const Job& job);
  // The reads finished since the last call, in arrived_ (valid until the next call).
  const std::vector<Finished>& wait_finished();
  std::size_t cancel_queued(std::vector<std::size_t>& free_slots);
  void stop_threads() noexcept;

  int fd_;
  std::string file_;
  std::uint64_t file_bytes_, chunk_, queue_depth_;
  std::vector<std::span<std::byte>> slots_;
  ReadEngine engine_;
  // The most reads submitted and not yet delivered: queue_depth for kAio; for kThreads what the
  // slots allow beyond the spare ones (2 x queue_depth with staging_slot_count's slots), at least
  // queue_depth.
  std::uint64_t queue_limit_ = 0;
  std::unique_ptr<NativeAio> aio_;      // kAio
  std::vector<std::uint64_t> reading_;  // kAio, per slot: the chunk being read into it
  std::vector<NvtxSpan> in_flight_;     // kAio, per slot: its read's range

  mutable std::mutex mutex_;
  std::condition_variable job_ready_, read_finished_;
  std::deque<Job> jobs_;  // submitted, no thread has taken them yet
  // Reserved for every slot: a worker's push never allocates (it cannot throw there).
  std::vector<Finished> finished_;
  // What wait_finished hands over; it and finished_ trade buffers, both reserved for every slot,
  // so a wakeup in the timed pass allocates nothing.
  std::vector<Finished> arrived_;
  bool stopping_ = false;
  bool handed_over_ = false;  // stats_.min_reads_queued_at_handover holds a value
  std::uint64_t in_pread_ = 0;
  QueuedReadStats stats_;
  std::vector<std::thread> workers_;  // last: joined before the members above go
};

}  // namespace pathbench
