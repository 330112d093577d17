// The queued O_DIRECT reader on a real file on disk, with aligned host memory as its staging
// slots and stand-in completions for the GPU copies: every byte lands at queue depths 1, 4 and 16
// with a ragged end, no slot is read into again before its copy is done (the "copy" here reads the
// slot only when its completion is waited for or polled), and a read error, a file truncated
// underneath, a failing callback and a failing completion each surface as an exception naming
// what failed, with every thread joined and every completion waited for.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "aligned_slots.hpp"
#include "core/errors.hpp"
#include "core/unique_fd.hpp"
#include "measure/pattern_file.hpp"
#include "measure/queued_direct_reader.hpp"
#include "placement/storage_location.hpp"
#include "temp_dir.hpp"

namespace pathbench::test_queued_direct_reader {
namespace {

constexpr std::uint64_t kSeed = 0x71756575;
constexpr std::uint64_t kChunk = 64 << 10;

using Slots = testing::AlignedSlots;

// Threads of this process now.
std::size_t thread_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    ++n;
  }
  return n;
}

// join() returns once the thread has cleared its tid, which the kernel does a moment before it
// removes the thread's task from /proc/self/task; on a loaded machine that moment can be long
// enough for a count taken right after join() to still include the thread. So the counts around
// a reader's lifetime wait, for a bounded time, for the tasks of threads already joined to go.
constexpr auto kTaskRelease = std::chrono::seconds(2);

// The count once it has held still for 20 ms (a task of a thread joined earlier has gone).
std::size_t settled_thread_count() {
  const auto deadline = std::chrono::steady_clock::now() + kTaskRelease;
  std::size_t n = thread_count();
  auto since = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const std::size_t now = thread_count();
    if (now != n) {
      n = now;
      since = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - since >= std::chrono::milliseconds(20)) {
      break;
    }
  }
  return n;
}

// The count once it is `expected`, or the count at the deadline: a thread never joined stays.
std::size_t thread_count_after_joins(std::size_t expected) {
  const auto deadline = std::chrono::steady_clock::now() + kTaskRelease;
  std::size_t n = thread_count();
  while (n != expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = thread_count();
  }
  return n;
}

// A pattern file on disk opened with O_DIRECT; `skip` says why not when the temporary folder's
// file system has no direct I/O (tmpfs).
struct DirectFile {
  explicit DirectFile(std::uint64_t bytes) : file(dir.path().string(), bytes, kSeed) {
    const int raw = ::open(file.path().c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (raw < 0 && errno == EINVAL) {
      skip = "O_DIRECT open failed with EINVAL in " + dir.path().string() + " (" +
             probe_storage(dir.path().string()).fs_type +
             "): set TMPDIR to a folder on a disk file system to run this test";
    } else if (raw < 0) {
      throw SystemError("open " + file.path(), errno);
    }
    fd = UniqueFd(raw);
  }
  testing::TempDir dir{"pathbench_queued_reader"};
  PatternFile file;
  UniqueFd fd;
  std::string skip;
};

#define REQUIRE_DIRECT(f) \
  if (!(f).skip.empty()) GTEST_SKIP() << (f).skip

// A stand-in for the H2D copy out of a slot: it copies the slot into the image only when polled
// done (after `polls` polls) or waited for, and marks the slot free then. A slot handed out
// again before that would be overwritten under it, and the image would not verify.
struct CopyLog {
  std::vector<std::byte> image;
  std::vector<bool> busy;      // per slot: a copy out of it not yet done
  std::vector<int> delivered;  // per chunk: times on_chunk saw it
  std::size_t reused_busy = 0;
  std::size_t completions_left = 0;  // made and not yet done
};

class LateCopy final : public Completion {
 public:
  LateCopy(CopyLog& log, StagedChunk chunk, int polls) : log_(log), chunk_(chunk), polls_(polls) {
    ++log_.completions_left;
  }
  bool done() override {
    if (finished_) return true;
    if (polls_-- > 0) return false;
    finish();
    return true;
  }
  void wait() override {
    if (!finished_) finish();
  }

 private:
  void finish() {
    std::memcpy(log_.image.data() + chunk_.chunk.offset, chunk_.data.data(), chunk_.chunk.bytes);
    log_.busy[chunk_.slot] = false;
    --log_.completions_left;
    finished_ = true;
  }
  CopyLog& log_;
  StagedChunk chunk_;
  int polls_;
  bool finished_ = false;
};

QueuedDirectReader::OnChunk late_copies(CopyLog& log, int polls) {
  return [&log, polls](const StagedChunk& c) -> std::unique_ptr<Completion> {
    if (log.busy[c.slot]) ++log.reused_busy;
    log.busy[c.slot] = true;
    ++log.delivered[c.chunk.offset / kChunk];
    return std::make_unique<LateCopy>(log, c, polls);
  };
}

std::string failure_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const CaseFailure& e) {
    return e.what();
  }
  return "(no CaseFailure)";
}

TEST(QueuedDirectReader, SlotCountIsTwiceTheQueueDepthAtLeastThreeButNoMoreThanTheChunks) {
  constexpr ReadEngine kAio = ReadEngine::kAio;
  EXPECT_EQ(staging_slot_count(1, 64 * kChunk, kChunk, kAio), 1 + kMinSpareStagingSlots);
  EXPECT_EQ(staging_slot_count(2, 64 * kChunk, kChunk, kAio), 4u);
  EXPECT_EQ(staging_slot_count(16, 64 * kChunk, kChunk, kAio), 32u);  // a spare slot per read
  EXPECT_EQ(staging_slot_count(4, 4 * kChunk, kChunk, kAio), 4u);
  EXPECT_EQ(staging_slot_count(4, 4 * kChunk + 1, kChunk, kAio), 5u);  // a ragged fifth chunk
}

// The threads engine also queues a read ahead per thread: three slots per read in flight.
TEST(QueuedDirectReader, ThreadsHaveASlotMorePerReadForTheReadsQueuedAhead) {
  constexpr ReadEngine kThreads = ReadEngine::kThreads;
  EXPECT_EQ(staging_slot_count(1, 64 * kChunk, kChunk, kThreads), 2 + kMinSpareStagingSlots);
  EXPECT_EQ(staging_slot_count(2, 64 * kChunk, kChunk, kThreads), 6u);
  EXPECT_EQ(staging_slot_count(16, 64 * kChunk, kChunk, kThreads), 48u);
  EXPECT_EQ(staging_slot_count(4, 4 * kChunk + 1, kChunk, kThreads), 5u);
}

// Every queue depth with each engine: a pool of pread threads, or native AIO from one thread.
using DepthAndEngine = std::tuple<std::uint64_t, ReadEngine>;

std::string depth_and_engine_name(const ::testing::TestParamInfo<DepthAndEngine>& info) {
  return "qd" + std::to_string(std::get<0>(info.param)) +
         (std::get<1>(info.param) == ReadEngine::kAio ? "_aio" : "_threads");
}

const auto kDepthsAndEngines = ::testing::Combine(
    ::testing::Values(1u, 4u, 16u), ::testing::Values(ReadEngine::kThreads, ReadEngine::kAio));

// The threads a reader of `depth` starts with `engine`: AIO reads from the calling thread.
std::size_t threads_for(std::uint64_t depth, ReadEngine engine) {
  return engine == ReadEngine::kAio ? 0u : depth;
}

class QueueDepths : public ::testing::TestWithParam<DepthAndEngine> {};

// A file of 40 chunks and a ragged end (the last O_DIRECT read is rounded up and cut short), read
// twice by one reader (two samples), each copy done late.
TEST_P(QueueDepths, EveryByteLandsOnceAndNoSlotIsReusedUnderItsCopy) {
  const auto [depth, engine] = GetParam();
  const std::uint64_t bytes = 40 * kChunk + 12345;
  const std::uint64_t chunks = 41;
  DirectFile f(bytes);
  REQUIRE_DIRECT(f);
  const std::size_t threads_before = settled_thread_count();
  {
    const Slots slots(staging_slot_count(depth, bytes, kChunk, engine), kChunk);
    QueuedDirectReader reader(f.fd.get(), f.file.path(), bytes, kChunk, depth, slots.spans(),
                              engine);
    EXPECT_EQ(reader.threads(), threads_for(depth, engine));
    EXPECT_EQ(reader.engine(), engine);
    EXPECT_EQ(thread_count(), threads_before + reader.threads());
    for (int sample = 0; sample < 2; ++sample) {
      CopyLog log{std::vector<std::byte>(bytes), std::vector<bool>(reader.slots()),
                  std::vector<int>(chunks), 0, 0};
      reader.read_all(late_copies(log, 3));
      EXPECT_EQ(log.reused_busy, 0u) << "a slot was read into while its copy ran";
      EXPECT_EQ(log.completions_left, 0u) << "read_all returned before every copy was done";
      EXPECT_EQ(std::count(log.delivered.begin(), log.delivered.end(), 1),
                static_cast<std::ptrdiff_t>(chunks));
      EXPECT_NO_THROW(verify_file_image(log.image, bytes, kSeed, "staged image"))
          << "queue depth " << depth << ", sample " << sample;
    }
    const QueuedReadStats s = reader.stats();
    EXPECT_EQ(s.chunks, 2 * chunks);
    if (engine == ReadEngine::kAio) {
      EXPECT_EQ(s.max_reads_queued, depth) << "the dispatcher kept the queue that deep";
      // A spare slot per read: every burst's reads were replaced before it was handed over.
      EXPECT_EQ(s.min_reads_queued_at_handover, depth);
    } else {
      // Reads queued ahead of the threads into every free slot: the threads never waited for
      // the calling thread while slots were free, and never more reads than slots.
      EXPECT_GE(s.max_reads_queued, depth);
      EXPECT_LE(s.max_reads_queued, reader.slots());
      EXPECT_GE(s.min_reads_queued_at_handover, depth);
    }
    EXPECT_GE(s.max_reads_in_pread, 1u);
    EXPECT_LE(s.max_reads_in_pread, depth) << "never more reads in the kernel than the depth";
  }
  EXPECT_EQ(thread_count_after_joins(threads_before), threads_before)
      << "every reader thread joined";
}

// Without completions (the callback is done with the slot when it returns): the same bytes.
TEST_P(QueueDepths, ACallbackThatCopiesAtOnceNeedsNoCompletion) {
  const auto [depth, engine] = GetParam();
  const std::uint64_t bytes = 24 * kChunk + 4096 + 7;
  DirectFile f(bytes);
  REQUIRE_DIRECT(f);
  const Slots slots(staging_slot_count(depth, bytes, kChunk, engine), kChunk);
  QueuedDirectReader reader(f.fd.get(), f.file.path(), bytes, kChunk, depth, slots.spans(), engine);
  std::vector<std::byte> image(bytes);
  reader.read_all([&](const StagedChunk& c) -> std::unique_ptr<Completion> {
    EXPECT_EQ(c.data.size(), c.chunk.bytes);
    EXPECT_EQ(c.chunk.offset % kChunk, 0u);
    std::memcpy(image.data() + c.chunk.offset, c.data.data(), c.data.size());
    return nullptr;
  });
  EXPECT_NO_THROW(verify_file_image(image, bytes, kSeed, "staged image"));
}

INSTANTIATE_TEST_SUITE_P(Depths, QueueDepths, kDepthsAndEngines, depth_and_engine_name);

// A copy that is never seen done by a poll and takes kSlowCopy to wait for: every slot the
// dispatcher needs back is a wait, and the copies still running after the last read make a tail
// of at least one kSlowCopy. Lower bounds only: a sleep lasts at least its time.
constexpr auto kSlowCopy = std::chrono::milliseconds(5);

class SlowCopy final : public Completion {
 public:
  bool done() override { return waited_; }
  void wait() override {
    if (!waited_) std::this_thread::sleep_for(kSlowCopy);
    waited_ = true;
  }

 private:
  bool waited_ = false;
};

TEST(QueuedDirectReader, StatsSayHowLongTheReaderWaitedForCopiesAndWhatTheCopiesAddedAtTheEnd) {
  const std::uint64_t depth = 4, chunks = 24, bytes = chunks * kChunk;
  DirectFile f(bytes);
  REQUIRE_DIRECT(f);
  const Slots slots(staging_slot_count(depth, bytes, kChunk, ReadEngine::kThreads), kChunk);
  QueuedDirectReader reader(f.fd.get(), f.file.path(), bytes, kChunk, depth, slots.spans());
  const ReadAllTimes t = reader.read_all([](const StagedChunk&) -> std::unique_ptr<Completion> {
    return std::make_unique<SlowCopy>();
  });
  const double slow = std::chrono::duration<double>(kSlowCopy).count();
  const QueuedReadStats s = reader.stats();
  EXPECT_EQ(s.passes, 1u);
  // 12 slots (2 x depth queued, depth spare), none freed by a poll: each of the last
  // chunks - 12 reads waited for a copy.
  ASSERT_EQ(reader.slots(), 3 * depth);
  EXPECT_GE(s.slot_waits, chunks - reader.slots());
  EXPECT_GE(s.slot_wait_seconds, static_cast<double>(s.slot_waits) * slow);
  // What arrives between two wake-ups was queued: at most the reads queued at once (a depth in
  // pread and a read queued ahead per thread), however late the measuring thread wakes.
  EXPECT_GE(s.max_reads_per_wakeup, 1u);
  EXPECT_LE(s.max_reads_per_wakeup, s.max_reads_queued);
  EXPECT_LE(s.max_reads_queued, 2 * depth);
  EXPECT_GE(t.tail_seconds, slow) << "the last chunk's copy ran after the last read";
  EXPECT_GE(t.reads_seconds, s.slot_wait_seconds) << "the waits were part of the reading";
  EXPECT_DOUBLE_EQ(s.tail_seconds, t.tail_seconds);
  EXPECT_DOUBLE_EQ(s.max_tail_seconds, t.tail_seconds);
  EXPECT_DOUBLE_EQ(s.reads_seconds, t.reads_seconds);
}

// The time spent handing chunks over is each on_chunk call's, summed (lower bound: a sleep lasts
// at least its time); with AIO every read is one timed io_submit, with threads there is none.
class HandoverAndSubmitTimes : public ::testing::TestWithParam<ReadEngine> {};

TEST_P(HandoverAndSubmitTimes, AreMeasuredPerChunkAndPerSubmission) {
  const ReadEngine engine = GetParam();
  const std::uint64_t depth = 4, chunks = 16, bytes = chunks * kChunk;
  DirectFile f(bytes);
  REQUIRE_DIRECT(f);
  const Slots slots(staging_slot_count(depth, bytes, kChunk, engine), kChunk);
  QueuedDirectReader reader(f.fd.get(), f.file.path(), bytes, kChunk, depth, slots.spans(), engine);
  constexpr auto kHandover = std::chrono::milliseconds(1);
  reader.read_all([&](const StagedChunk&) -> std::unique_ptr<Completion> {
    std::this_thread::sleep_for(kHandover);
    return nullptr;
  });
  const QueuedReadStats s = reader.stats();
  EXPECT_EQ(s.chunks, chunks);
  EXPECT_GE(s.handover_seconds,
            static_cast<double>(chunks) * std::chrono::duration<double>(kHandover).count());
  if (engine == ReadEngine::kAio) {
    EXPECT_EQ(s.submits, chunks);
    EXPECT_GT(s.submit_seconds, 0.0);
    EXPECT_GT(s.max_submit_seconds, 0.0);
    EXPECT_LE(s.max_submit_seconds, s.submit_seconds);
    EXPECT_GE(s.max_submit_seconds, s.submit_seconds / static_cast<double>(s.submits));
  } else {
    EXPECT_EQ(s.submits, 0u);
    EXPECT_EQ(s.submit_seconds, 0.0);
    EXPECT_EQ(s.max_submit_seconds, 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, HandoverAndSubmitTimes,
                         ::testing::Values(ReadEngine::kThreads, ReadEngine::kAio),
                         [](const ::testing::TestParamInfo<ReadEngine>& info) {
                           return std::string(info.param == ReadEngine::kAio ? "aio" : "threads");
                         });

class QueueDepthErrors : public ::testing::TestWithParam<DepthAndEngine> {};

// The file loses its second half after the reader was made for its full length: the reads past
// the new end find it, read_all throws naming the file and where it ended, and throws only once
// every read in flight has ended and every copy is done.
TEST_P(QueueDepthErrors, AFileTruncatedUnderneathFailsNamingItAndWhereItEnded) {
  const auto [depth, engine] = GetParam();
  const std::uint64_t bytes = 32 * kChunk;
  DirectFile f(bytes);
  REQUIRE_DIRECT(f);
  const std::size_t threads_before = settled_thread_count();
  {
    const Slots slots(staging_slot_count(depth, bytes, kChunk, engine), kChunk);
    QueuedDirectReader reader(f.fd.get(), f.file.path(), bytes, kChunk, depth, slots.spans(),
                              engine);
    ASSERT_EQ(::truncate(f.file.path().c_str(), static_cast<off_t>(bytes / 2)), 0);
    CopyLog log{std::vector<std::byte>(bytes), std::vector<bool>(reader.slots()),
                std::vector<int>(32), 0, 0};
    const std::string why = failure_of([&] { reader.read_all(late_copies(log, 1)); });
    EXPECT_NE(why.find(f.file.path()), std::string::npos) << why;
    // The first read to fail is the one at the new end, or (reads complete in any order) one
    // after it.
    const std::string ended = "the file ended at byte ";
    const std::size_t at = why.find(ended);
    ASSERT_NE(at, std::string::npos) << why;
    const std::uint64_t end = std::stoull(why.substr(at + ended.size()));
    EXPECT_GE(end, bytes / 2) << why;
    EXPECT_EQ(end % kChunk, 0u) << why;
    if (depth == 1) {
      EXPECT_EQ(end, bytes / 2) << why;
    }
    EXPECT_EQ(log.completions_left, 0u) << "a copy was left running under the slots";
    EXPECT_EQ(log.reused_busy, 0u);
  }
  EXPECT_EQ(thread_count_after_joins(threads_before), threads_before)
      << "every reader thread joined";
}

// Cut in the middle of a chunk, at no multiple of the block: the read of that chunk comes back
// short and leaves the next offset unaligned (queue depth 1 meets that chunk first), whether a
// pread or an AIO read returned it.
TEST(QueuedDirectReaderErrors, AShortUnalignedReadFailsNamingTheRead) {
  for (const ReadEngine engine : {ReadEngine::kThreads, ReadEngine::kAio}) {
    SCOPED_TRACE(engine == ReadEngine::kAio ? "aio" : "threads");
    const std::uint64_t bytes = 8 * kChunk;
    DirectFile f(bytes);
    REQUIRE_DIRECT(f);
    const Slots slots(staging_slot_count(1, bytes, kChunk, engine), kChunk);
    QueuedDirectReader reader(f.fd.get(), f.file.path(), bytes, kChunk, 1, slots.spans(), engine);
    const std::uint64_t cut = 3 * kChunk + 1000;
    ASSERT_EQ(::truncate(f.file.path().c_str(), static_cast<off_t>(cut)), 0);
    const std::string why = failure_of([&] {
      reader.read_all([](const StagedChunk&) -> std::unique_ptr<Completion> { return nullptr; });
    });
    EXPECT_NE(why.find("at offset " + std::to_string(3 * kChunk)), std::string::npos) << why;
    EXPECT_NE(why.find("short O_DIRECT read (1000 bytes)"), std::string::npos) << why;
  }
}

// pread itself fails (a directory's descriptor: EISDIR stands in for EIO, which a test cannot
// provoke on a healthy disk): errno's text reaches the message, at every queue depth.
TEST_P(QueueDepthErrors, APreadErrorSurfacesWithErrnoAndTheRead) {
  const auto [depth, engine] = GetParam();
  testing::TempDir dir;
  const UniqueFd fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  const std::uint64_t bytes = 20 * kChunk;
  const std::size_t threads_before = settled_thread_count();
  {
    const Slots slots(staging_slot_count(depth, bytes, kChunk, engine), kChunk);
    QueuedDirectReader reader(fd.get(), dir.path().string(), bytes, kChunk, depth, slots.spans(),
                              engine);
    // AIO refuses a directory at submission (EINVAL: it has no asynchronous read), pread when
    // it reads (EISDIR): either way the read, the file and errno's text.
    const std::string errno_text =
        engine == ReadEngine::kAio ? "Invalid argument" : "Is a directory";
    std::size_t delivered = 0;
    const std::string why = failure_of([&] {
      reader.read_all([&](const StagedChunk&) -> std::unique_ptr<Completion> {
        ++delivered;
        return nullptr;
      });
    });
    EXPECT_NE(why.find(errno_text), std::string::npos) << why;
    EXPECT_NE(why.find(dir.path().string()), std::string::npos) << why;
    EXPECT_NE(why.find("bytes at offset "), std::string::npos) << why;
    EXPECT_EQ(delivered, 0u);
    // The reader stays usable: the same error again, not a hang.
    EXPECT_NE(failure_of([&] {
                reader.read_all(
                    [](const StagedChunk&) -> std::unique_ptr<Completion> { return nullptr; });
              }).find(errno_text),
              std::string::npos);
  }
  EXPECT_EQ(thread_count_after_joins(threads_before), threads_before)
      << "every reader thread joined";
}

INSTANTIATE_TEST_SUITE_P(Depths, QueueDepthErrors, kDepthsAndEngines, depth_and_engine_name);

// The callback fails on the fifth chunk (a failed cudaMemcpyAsync): read_all throws that error
// once the reads in flight have ended and the copies already handed over are done.
TEST(QueuedDirectReaderErrors, ACallbackErrorIsRethrownAfterTheCopiesInFlight) {
  const std::uint64_t bytes = 32 * kChunk;
  DirectFile f(bytes);
  REQUIRE_DIRECT(f);
  const Slots slots(staging_slot_count(8, bytes, kChunk, ReadEngine::kThreads), kChunk);
  QueuedDirectReader reader(f.fd.get(), f.file.path(), bytes, kChunk, 8, slots.spans());
  CopyLog log{std::vector<std::byte>(bytes), std::vector<bool>(reader.slots()),
              std::vector<int>(32), 0, 0};
  const auto copies = late_copies(log, 1000);  // never done by polling: only waits end them
  int calls = 0;
  try {
    reader.read_all([&](const StagedChunk& c) -> std::unique_ptr<Completion> {
      if (++calls == 5) throw std::runtime_error("cudaMemcpyAsync: an illegal memory access");
      return copies(c);
    });
    ADD_FAILURE() << "read_all returned";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "cudaMemcpyAsync: an illegal memory access");
  }
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(log.completions_left, 0u) << "the four copies handed over were waited for";
}

// A completion's wait fails (cudaEventSynchronize reporting a sticky error): that error comes
// out, after the other reads and copies.
TEST(QueuedDirectReaderErrors, ACompletionErrorIsRethrown) {
  const std::uint64_t bytes = 16 * kChunk;
  DirectFile f(bytes);
  REQUIRE_DIRECT(f);
  struct Failing final : Completion {
    bool done() override { return false; }
    void wait() override { throw CaseFailure("cudaEventSynchronize: unspecified launch failure"); }
  };
  const Slots slots(staging_slot_count(4, bytes, kChunk, ReadEngine::kThreads), kChunk);
  QueuedDirectReader reader(f.fd.get(), f.file.path(), bytes, kChunk, 4, slots.spans());
  const std::string why = failure_of([&] {
    reader.read_all([](const StagedChunk&) -> std::unique_ptr<Completion> {
      return std::make_unique<Failing>();
    });
  });
  EXPECT_NE(why.find("unspecified launch failure"), std::string::npos) << why;
}

TEST(QueuedDirectReader, RefusesAShapeItCannotRead) {
  const Slots slots(6, kChunk);
  const auto make = [&](std::uint64_t bytes, std::uint64_t chunk, std::uint64_t depth,
                        std::vector<std::span<std::byte>> spans) -> std::string {
    try {
      QueuedDirectReader reader(-1, "/data/f", bytes, chunk, depth, std::move(spans));
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(accepted)";
  };
  const auto spans = slots.spans();
  EXPECT_NE(make(16 * kChunk, 5000, 1, spans).find("chunk 5000"), std::string::npos);
  EXPECT_NE(make(16 * kChunk, kChunk, 0, spans).find("queue depth 0"), std::string::npos);
  EXPECT_NE(make(4 * kChunk, kChunk, 5, spans).find("the file's 4 chunks"), std::string::npos);
  EXPECT_NE(make(16 * kChunk, kChunk, 6, spans).find("it needs at least 7"), std::string::npos);
  auto small = spans;
  small[2] = small[2].first(kChunk - 4096);
  EXPECT_NE(make(16 * kChunk, kChunk, 4, small).find("slot 2"), std::string::npos);
  auto unaligned = spans;
  unaligned[1] = unaligned[1].subspan(512, kChunk - 4096);
  EXPECT_NE(make(16 * kChunk, kChunk / 2, 4, unaligned).find("slot 1"), std::string::npos);
  EXPECT_EQ(make(16 * kChunk, kChunk, 5, spans), "(accepted)");
  EXPECT_EQ(make(4 * kChunk, kChunk, 4, std::vector(spans.begin(), spans.begin() + 4)),
            "(accepted)");  // as many slots as chunks suffice
}

}  // namespace
}  // namespace pathbench::test_queued_direct_reader
