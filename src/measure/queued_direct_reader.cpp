#include "measure/queued_direct_reader.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <deque>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "measure/nvtx.hpp"

namespace pathbench {

namespace {

using SteadyClock = std::chrono::steady_clock;

double seconds_between(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string read_of(const std::string& file, std::uint64_t want, std::uint64_t offset) {
  std::string s = "the read of ";
  s += std::to_string(want);
  s += " bytes at offset ";
  s += std::to_string(offset);
  s += " of ";
  s += file;
  return s;
}

// A slot whose copy has not been seen to end.
struct Copying {
  std::size_t slot = 0;
  std::unique_ptr<Completion> completion;
};

// Frees the slots of every copy that has ended, in any order.
void reclaim(std::deque<Copying>& copying, std::vector<std::size_t>& free_slots) {
  for (auto it = copying.begin(); it != copying.end();) {
    if (it->completion->done()) {
      free_slots.push_back(it->slot);
      it = copying.erase(it);
    } else {
      ++it;
    }
  }
}

std::uint64_t spare_slots(std::uint64_t queue_depth) {
  return std::max(queue_depth, kMinSpareStagingSlots);
}

}  // namespace

std::uint64_t staging_slot_count(std::uint64_t queue_depth, std::uint64_t file_bytes,
                                 std::uint64_t chunk, ReadEngine engine) {
  const std::uint64_t queued = engine == ReadEngine::kThreads ? 2 * queue_depth : queue_depth;
  return std::min(queued + spare_slots(queue_depth), chunk_count(file_bytes, chunk));
}

namespace {

// What a read that returned `n` after `got` bytes means: nothing when it added bytes and, for
// O_DIRECT, left the next offset aligned (or finished); else the failure, naming the read.
void check_read(const std::string& file, std::uint64_t want, std::uint64_t offset,
                std::uint64_t got, std::int64_t n, int err, bool direct) {
  if (n < 0) {
    throw CaseFailure(read_of(file, want, offset) + " failed after " + std::to_string(got) +
                      " bytes: " + std::system_category().message(err));
  }
  if (n == 0) {
    throw CaseFailure(read_of(file, want, offset) + ": the file ended at byte " +
                      std::to_string(offset + got) + " (shorter than when it was written?)");
  }
  const std::uint64_t now = got + static_cast<std::uint64_t>(n);
  if (direct && now < want && !is_aligned_to(now, kDirectIoAlignment)) {
    throw CaseFailure(read_of(file, want, offset) + ": a short O_DIRECT read (" +
                      std::to_string(now) + " bytes) left the next offset unaligned");
  }
}

// pread_exactly from `got` bytes already in `dst`.
void read_rest(int fd, const std::string& file, std::byte* dst, std::uint64_t want,
               std::uint64_t ask, std::uint64_t offset, bool direct, std::uint64_t got) {
  while (got < want) {
    const ssize_t n = ::pread(fd, dst + got, ask - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    check_read(file, want, offset, got, n, errno, direct);
    got += static_cast<std::uint64_t>(n);
  }
}

}  // namespace

void pread_exactly(int fd, const std::string& file, std::byte* dst, std::uint64_t want,
                   std::uint64_t ask, std::uint64_t offset, bool direct) {
  read_rest(fd, file, dst, want, ask, offset, direct, 0);
}

QueuedDirectReader::QueuedDirectReader(int fd, std::string file, std::uint64_t file_bytes,
                                       std::uint64_t chunk, std::uint64_t queue_depth,
                                       std::vector<std::span<std::byte>> slots, ReadEngine engine)
    : fd_(fd),
      file_(std::move(file)),
      file_bytes_(file_bytes),
      chunk_(chunk),
      queue_depth_(queue_depth),
      slots_(std::move(slots)),
      engine_(engine) {
  const std::string who = "queued O_DIRECT reader of " + file_ + ": ";
  if (chunk_ == 0 || !is_aligned_to(chunk_, kDirectIoAlignment)) {
    throw std::invalid_argument(who + "chunk " + std::to_string(chunk_) +
                                " is not a positive multiple of " +
                                std::to_string(kDirectIoAlignment));
  }
  const std::uint64_t chunks = chunk_count(file_bytes_, chunk_);
  if (queue_depth_ == 0 || queue_depth_ > chunks) {
    throw std::invalid_argument(who + "queue depth " + std::to_string(queue_depth_) +
                                " is not between 1 and the file's " + std::to_string(chunks) +
                                " chunks");
  }
  const std::uint64_t needed = std::min(queue_depth_ + 1, chunks);
  if (slots_.size() < needed) {
    throw std::invalid_argument(who + std::to_string(slots_.size()) + " slots for queue depth " +
                                std::to_string(queue_depth_) + "; it needs at least " +
                                std::to_string(needed));
  }
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].size() < chunk_ || !is_aligned_address(slots_[i].data(), kDirectIoAlignment)) {
      throw std::invalid_argument(who + "slot " + std::to_string(i) + " (" +
                                  std::to_string(slots_[i].size()) +
                                  " bytes) is smaller than the chunk or not aligned to " +
                                  std::to_string(kDirectIoAlignment));
    }
  }
  finished_.reserve(slots_.size());
  arrived_.reserve(slots_.size());
  // Reads queued ahead take only slots beyond the spare ones: a burst of every queued read still
  // leaves queue_depth slots (free, or freed by a copy) to refill the queue before it is handed
  // over.
  const std::uint64_t beyond_spare =
      slots_.size() > spare_slots(queue_depth_) ? slots_.size() - spare_slots(queue_depth_) : 0;
  queue_limit_ = engine_ == ReadEngine::kAio ? queue_depth_ : std::max(queue_depth_, beyond_spare);
  if (engine_ == ReadEngine::kAio) {
    aio_ = std::make_unique<NativeAio>(static_cast<unsigned>(queue_depth_));
    reading_.resize(slots_.size());
    in_flight_.resize(slots_.size());
    return;
  }
  try {
    workers_.reserve(queue_depth_);
    for (std::uint64_t i = 0; i < queue_depth_; ++i) workers_.emplace_back([this] { work(); });
  } catch (const std::system_error& e) {
    const std::size_t started = workers_.size();
    stop_threads();
    throw CaseFailure(who + "could not start reader thread " + std::to_string(started + 1) +
                      " of " + std::to_string(queue_depth_) + ": " + e.what());
  }
}

QueuedDirectReader::~QueuedDirectReader() { stop_threads(); }

void QueuedDirectReader::stop_threads() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  job_ready_.notify_all();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

QueuedReadStats QueuedDirectReader::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void QueuedDirectReader::read_chunk(const Job& job) {
  const FileChunk c = file_chunk(job.index, file_bytes_, chunk_);
  const NvtxRange range("pread", "storage", c.read_length);
  pread_exactly(fd_, file_, slots_[job.slot].data(), c.bytes, c.read_length, c.offset, true);
}

QueuedDirectReader::Finished QueuedDirectReader::run_job(const Job& job) noexcept {
  Finished f{job.index, job.slot, nullptr};
  try {
    read_chunk(job);
  } catch (...) {
    f.error = std::current_exception();
  }
  return f;
}

void QueuedDirectReader::work() {
  // Two locks per read, the fewest there can be: one to take the job (counted in the kernel from
  // then on), one to hand the read back (counted out).
  std::unique_lock lock(mutex_);
  while (true) {
    job_ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, nothing left
    const Job job = jobs_.front();
    jobs_.pop_front();
    stats_.max_reads_in_pread = std::max(stats_.max_reads_in_pread, ++in_pread_);
    lock.unlock();
    Finished f = run_job(job);
    lock.lock();
    --in_pread_;
    finished_.push_back(std::move(f));  // within its reserve: no allocation
    read_finished_.notify_one();
  }
}

void QueuedDirectReader::submit(const Job& job) {
  if (aio_) {
    const FileChunk c = file_chunk(job.index, file_bytes_, chunk_);
    reading_[job.slot] = job.index;
    in_flight_[job.slot] = NvtxSpan(read_range_name(), "storage", c.read_length);
    try {
      const SteadyClock::time_point asked = SteadyClock::now();
      aio_->submit_read(fd_, slots_[job.slot].data(), c.read_length, c.offset, job.slot);
      const double took = seconds_between(asked, SteadyClock::now());
      // Counted in the kernel once submitted: only this thread reaps, so no read can be reaped
      // before it is counted.
      std::lock_guard lock(mutex_);
      stats_.max_reads_in_pread = std::max(stats_.max_reads_in_pread, ++in_pread_);
      ++stats_.submits;
      stats_.submit_seconds += took;
      stats_.max_submit_seconds = std::max(stats_.max_submit_seconds, took);
    } catch (const SystemError& e) {  // not queued: it finishes now, with the error
      in_flight_[job.slot].end();
      std::lock_guard lock(mutex_);
      finished_.push_back({job.index, job.slot,
                           std::make_exception_ptr(
                               CaseFailure(read_of(file_, c.bytes, c.offset) + ": " + e.what()))});
    }
    return;
  }
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(job);
  }
  job_ready_.notify_one();
}

QueuedDirectReader::Finished QueuedDirectReader::reap(const NativeAio::Event& event) noexcept {
  const std::size_t slot = static_cast<std::size_t>(event.tag);
  Finished f{reading_[slot], slot, nullptr};
  in_flight_[slot].end();
  const FileChunk c = file_chunk(f.index, file_bytes_, chunk_);
  try {
    const std::int64_t n = event.result;
    check_read(file_, c.bytes, c.offset, 0, n, n < 0 ? static_cast<int>(-n) : 0, true);
    // A short read (the file's ragged end asks for more than it holds): the rest synchronously.
    read_rest(fd_, file_, slots_[slot].data(), c.bytes, c.read_length, c.offset, true,
              static_cast<std::uint64_t>(n));
  } catch (...) {
    f.error = std::current_exception();
  }
  return f;
}

const std::vector<QueuedDirectReader::Finished>& QueuedDirectReader::wait_finished() {
  arrived_.clear();
  if (aio_) {
    {
      std::lock_guard lock(mutex_);
      if (!finished_.empty()) {  // refused at submission
        arrived_.swap(finished_);
        return arrived_;
      }
    }
    for (const NativeAio::Event& e : aio_->wait()) arrived_.push_back(reap(e));
    std::lock_guard lock(mutex_);
    in_pread_ -= arrived_.size();
    return arrived_;
  }
  std::unique_lock lock(mutex_);
  read_finished_.wait(lock, [&] { return !finished_.empty(); });
  arrived_.swap(finished_);  // finished_ gets arrived_'s emptied reserve: a push never allocates
  return arrived_;
}

std::size_t QueuedDirectReader::cancel_queued(std::vector<std::size_t>& free_slots) {
  std::lock_guard lock(mutex_);
  const std::size_t n = jobs_.size();
  for (const Job& job : jobs_) free_slots.push_back(job.slot);
  jobs_.clear();
  return n;
}

ReadAllTimes QueuedDirectReader::read_all(const OnChunk& on_chunk) {
  const SteadyClock::time_point start = SteadyClock::now();
  SteadyClock::time_point reads_done = start;
  const std::uint64_t chunks = chunk_count(file_bytes_, chunk_);
  std::vector<std::size_t> free_slots;
  free_slots.reserve(slots_.size());
  for (std::size_t s = slots_.size(); s-- > 0;) free_slots.push_back(s);  // slot 0 first
  std::deque<Copying> copying;                                            // oldest first
  std::uint64_t next = 0, delivered = 0, queued = 0;  // queued: submitted, not yet delivered
  std::exception_ptr error;
  // Submits reads into free slots until queue_limit_ are queued (kAio: queue_depth, each in the
  // kernel; kThreads: reads queued ahead too, which the threads take one after another, at most
  // queue_depth inside pread). Waits for the oldest copy when no slot is free and fewer than
  // queue_depth are queued (giving up when no copy holds one: every slot is being read into or
  // holds a chunk not yet handed over).
  const auto fill = [&] {
    reclaim(copying, free_slots);
    while (next < chunks && queued < queue_limit_) {
      if (free_slots.empty()) {
        if (copying.empty() || queued >= queue_depth_) break;
        const SteadyClock::time_point waited = SteadyClock::now();
        copying.front().completion->wait();
        free_slots.push_back(copying.front().slot);
        copying.pop_front();
        std::lock_guard lock(mutex_);
        ++stats_.slot_waits;
        stats_.slot_wait_seconds += seconds_between(waited, SteadyClock::now());
      }
      const std::size_t slot = free_slots.back();
      free_slots.pop_back();
      ++queued;
      {
        std::lock_guard lock(mutex_);
        stats_.max_reads_queued = std::max(stats_.max_reads_queued, queued);
      }
      submit({next++, slot});
    }
  };
  try {
    while (delivered < chunks) {
      fill();
      if (queued == 0) throw std::logic_error("queued O_DIRECT reader: nothing to wait for");
      const std::vector<Finished>& arrived = wait_finished();
      queued -= arrived.size();  // before on_chunk can throw: the cleanup below counts on it
      for (const Finished& f : arrived) {
        if (f.error && !error) error = f.error;
      }
      // The disk gets its next reads before the burst is handed over (the copies queued for it
      // then run while those reads are in flight), into the spare slots.
      if (!error) fill();
      {
        std::lock_guard lock(mutex_);
        stats_.max_reads_per_wakeup =
            std::max<std::uint64_t>(stats_.max_reads_per_wakeup, arrived.size());
        if (!error && next < chunks) {
          stats_.min_reads_queued_at_handover =
              handed_over_ ? std::min(stats_.min_reads_queued_at_handover, queued) : queued;
          handed_over_ = true;
        }
      }
      for (const Finished& f : arrived) {
        if (error) {
          free_slots.push_back(f.slot);
          continue;
        }
        const FileChunk c = file_chunk(f.index, file_bytes_, chunk_);
        const SteadyClock::time_point handed = SteadyClock::now();
        std::unique_ptr<Completion> done = on_chunk({c, f.slot, slots_[f.slot].first(c.bytes)});
        ++delivered;
        {
          std::lock_guard lock(mutex_);
          ++stats_.chunks;
          stats_.handover_seconds += seconds_between(handed, SteadyClock::now());
        }
        if (done) {
          copying.push_back({f.slot, std::move(done)});
        } else {
          free_slots.push_back(f.slot);
        }
      }
      if (error) break;
    }
    reads_done = SteadyClock::now();
    while (!error && !copying.empty()) {
      copying.front().completion->wait();
      copying.pop_front();
    }
  } catch (...) {
    if (!error) error = std::current_exception();
  }
  if (!error) {
    const ReadAllTimes t{seconds_between(start, reads_done),
                         seconds_between(reads_done, SteadyClock::now())};
    std::lock_guard lock(mutex_);
    ++stats_.passes;
    stats_.reads_seconds += t.reads_seconds;
    stats_.tail_seconds += t.tail_seconds;
    stats_.max_tail_seconds = std::max(stats_.max_tail_seconds, t.tail_seconds);
    return t;
  }
  // Nothing may write to or copy out of a slot once this returns: the caller may free them.
  queued -= cancel_queued(free_slots);
  while (queued > 0) queued -= wait_finished().size();
  for (Copying& c : copying) {
    try {
      c.completion->wait();
    } catch (...) {  // the first error is the one to report
    }
  }
  std::rethrow_exception(error);
}

}  // namespace pathbench
