// The queued O_DIRECT reader against a "device" with a fixed access time: tests/helpers/
// latency_fuse mounts a FUSE file whose every read request sleeps a few milliseconds and counts
// how many requests it holds at once. On a local disk or tmpfs the queue depth barely shows; here
// the test can see that queue depth N puts N reads in flight at the device at once, with either
// engine (reader threads, native AIO), and each read arrives as one request and every byte lands.
// Throughput at each depth is printed, never asserted (no time is asserted in a CI test). Skips,
// saying why, without /dev/fuse, without the helper (no libfuse3 at configure time) or where the
// mount is refused (not root, no fusermount3).
#include <fcntl.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "aligned_slots.hpp"
#include "core/errors.hpp"
#include "core/subprocess.hpp"
#include "core/unique_fd.hpp"
#include "measure/pattern_file.hpp"
#include "measure/queued_direct_reader.hpp"
#include "temp_dir.hpp"
#include "tests/unit/helper_paths.hpp"

extern char** environ;

namespace pathbench::test_queued_reader_depth {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kSeed = 0x6c6174656e6379;
// At most 128 KiB: the kernel sends each O_DIRECT pread of this size as exactly one READ.
constexpr std::uint64_t kChunk = 64 << 10;
constexpr std::uint64_t kBytes = (4 << 20) + 12345;  // 65 chunks, the last one ragged
constexpr std::uint64_t kChunks = (kBytes + kChunk - 1) / kChunk;
// Long enough that reads submitted together are in flight together on two busy cores under the
// sanitizers; short enough that depth 1 (65 reads in a row) takes a third of a second.
constexpr std::uint64_t kLatencyUs = 5000;
constexpr std::uint64_t kMaxPasses = 3;
constexpr unsigned kHelperThreads = 64;
constexpr auto kMountWait = 10s;
constexpr auto kExitWait = 5s;
constexpr int kHelperMountFailed = 4;  // latency_fuse's exit status when the mount is refused

using Slots = testing::AlignedSlots;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// /proc/self/mountinfo writes a space, tab, newline or backslash in a path as \ and 3 octal digits.
std::string unescape_mount_path(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto octal = [&](std::size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '7'; };
    if (s[i] == '\\' && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Whether a latency_fuse file system is mounted on `dir` now. Read from mountinfo, not by a stat
// of the directory, which would wait on the daemon.
bool latency_fuse_mounted_on(const std::string& dir) {
  std::istringstream lines(read_text("/proc/self/mountinfo"));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, mount_point;
    fields >> id >> parent >> device >> root >> mount_point;
    const std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fs_type;
    tail >> fs_type;
    if (fs_type == "fuse.latency_fuse" && unescape_mount_path(mount_point) == dir) return true;
  }
  return false;
}

// How a waited-for child ended, as a phrase.
std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

// Waits up to `limit` for `pid` to end; its wait status, or nothing while it still runs.
std::optional<int> wait_for_exit(pid_t pid, Clock::duration limit) {
  const auto deadline = Clock::now() + limit;
  while (true) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return -1;  // not our child any more: nothing to wait for
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(5ms);
  }
}

// Why the helper cannot run here at all, or "".
std::string latency_fuse_unavailable() {
  const std::string helper = test::latency_fuse_helper();
  if (helper.empty()) {
    return "tests/helpers/latency_fuse was not built: no libfuse3 (pkg-config fuse3) at "
           "configure time; scripts/setup.sh --test-deps installs libfuse3-dev and fuse3";
  }
  if (::access(helper.c_str(), X_OK) != 0) {
    return "the helper " + helper + " is not there (" + std::strerror(errno) +
           "): build the latency_fuse target";
  }
  struct stat st {};
  if (::stat("/dev/fuse", &st) != 0 || !S_ISCHR(st.st_mode)) {
    return "no /dev/fuse on this machine (fuse module not loaded, or a container without it)";
  }
  return "";
}

// One latency_fuse process mounted on a fresh directory, from its start to its stop. Stopping it
// (also from the destructor, after a failed ASSERT) is bounded: SIGTERM (it unmounts itself and
// exits), SIGKILL after kExitWait, and a lazy unmount of a mount it left behind, so no mount and
// no process outlive the test. Only the process this object started is ever signalled.
class LatencyFuse {
 public:
  LatencyFuse(std::uint64_t bytes, std::uint64_t latency_us) {
    std::filesystem::create_directory(dir_.path() / "mnt");
    mount_ = std::filesystem::canonical(dir_.path() / "mnt").string();  // as mountinfo has it
    log_ = (dir_.path() / "latency_fuse.log").string();
    const std::vector<std::string> args = {test::latency_fuse_helper(),
                                           "--mount",
                                           mount_,
                                           "--size",
                                           std::to_string(bytes),
                                           "--latency-us",
                                           std::to_string(latency_us),
                                           "--seed",
                                           std::to_string(kSeed),
                                           "--threads",
                                           std::to_string(kHelperThreads),
                                           "--exit-with-parent"};
    start(args);
    if (failure_.empty()) wait_for_mount();
  }
  ~LatencyFuse() { stop(); }
  LatencyFuse(const LatencyFuse&) = delete;
  LatencyFuse& operator=(const LatencyFuse&) = delete;

  const std::string& skip() const { return skip_; }        // the mount was refused: why
  const std::string& failure() const { return failure_; }  // it did not come up otherwise
  std::string data() const { return mount_ + "/data"; }
  const std::string& mount_point() const { return mount_; }
  pid_t pid() const { return pid_; }

  nlohmann::json stats() const { return nlohmann::json::parse(read_text(mount_ + "/stats")); }

  // Stops the helper and makes sure its mount is gone. "" when it exited 0 by itself on SIGTERM
  // and unmounted, else what happened (a sanitizer report in the helper makes it exit non-zero).
  std::string stop() {
    std::string outcome;
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      std::optional<int> status = wait_for_exit(pid_, kExitWait);
      if (!status) {
        ::kill(pid_, SIGKILL);
        status = wait_for_exit(pid_, kExitWait);
        outcome = "did not exit within 5 s of SIGTERM; SIGKILL";
      }
      if (!status) {
        outcome += "; still there 5 s after SIGKILL (left as it is)";
      } else if (*status != 0) {
        outcome += (outcome.empty() ? "" : "; ") + describe_status(*status);
      }
      pid_ = -1;
    }
    if (!mount_.empty() && latency_fuse_mounted_on(mount_)) {
      outcome += (outcome.empty() ? "" : "; ") + std::string("left its mount behind");
      if (::umount2(mount_.c_str(), MNT_DETACH) != 0) {
        outcome += std::string(" and umount2 failed: ") + std::strerror(errno);
      }
    }
    if (!outcome.empty()) outcome = "latency_fuse " + outcome + "; its output: " + log_text();
    return outcome;
  }

 private:
  void start(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = -1;
    const int err = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (err != 0) {
      failure_ = "could not start " + args[0] + ": " + std::strerror(err);
      return;
    }
    pid_ = pid;
  }

  void wait_for_mount() {
    const auto deadline = Clock::now() + kMountWait;
    while (!latency_fuse_mounted_on(mount_)) {
      if (const std::optional<int> status = wait_for_exit(pid_, 0s)) {
        pid_ = -1;
        const std::string what = "latency_fuse " + describe_status(*status) + " before mounting " +
                                 mount_ + ": " + log_text();
        if (WIFEXITED(*status) && WEXITSTATUS(*status) == kHelperMountFailed) {
          skip_ = what;
        } else {
          failure_ = what;
        }
        return;
      }
      if (Clock::now() >= deadline) {
        failure_ = "latency_fuse did not mount " + mount_ + " within 10 s: " + log_text();
        return;
      }
      std::this_thread::sleep_for(5ms);
    }
  }

  std::string log_text() const {
    std::string text = read_text(log_);
    if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
    return text.empty() ? "(nothing)" : text;
  }

  // First: removed last, after stop() has unmounted what is inside it.
  testing::TempDir dir_{"pathbench_latency_fuse"};
  std::string mount_, log_;
  pid_t pid_ = -1;
  std::string skip_, failure_;
};

#define START_LATENCY_FUSE(fuse)                             \
  if (!(fuse).skip().empty()) GTEST_SKIP() << (fuse).skip(); \
  ASSERT_EQ((fuse).failure(), "") << "the helper did not come up"

std::uint64_t stat_of(const nlohmann::json& stats, const char* key) {
  return stats.at(key).get<std::uint64_t>();
}

struct DepthRun {
  std::uint64_t depth = 0;
  double seconds = 0;  // the first pass
  std::uint64_t passes = 0;
  std::uint64_t max_in_flight = 0;
};

// Each engine: threads of one pread each, or native AIO from the calling thread (whose reads
// reach the device together only where the file system reads asynchronously, as FUSE's direct
// I/O does for AIO).
void expect_queue_reaches_device(ReadEngine engine) {
  const std::string name = engine == ReadEngine::kAio ? "aio" : "threads";
  std::vector<DepthRun> runs;
  for (const std::uint64_t depth : {1u, 4u, 16u}) {
    SCOPED_TRACE("queue depth " + std::to_string(depth));
    // A fresh mount per depth: the helper's high-water mark of reads in flight is this depth's.
    LatencyFuse fuse(kBytes, kLatencyUs);
    START_LATENCY_FUSE(fuse);
    DepthRun run{depth, 0, 0, 0};
    {
      const UniqueFd fd(::open(fuse.data().c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
      ASSERT_TRUE(fd.valid()) << "O_DIRECT open of " << fuse.data() << ": " << std::strerror(errno);
      const Slots slots(staging_slot_count(depth, kBytes, kChunk, engine), kChunk);
      QueuedDirectReader reader(fd.get(), fuse.data(), kBytes, kChunk, depth, slots.spans(),
                                engine);
      // Whether all `depth` reads are at the device at one moment is up to the scheduler: on two
      // cores with other tests running, a reader or daemon thread can wait longer than a read
      // takes, and the queue is seen one short. Each further pass of the same mount is another
      // chance (the high-water mark only grows), up to kMaxPasses; the upper bound holds over all.
      while (run.passes < kMaxPasses && (run.passes == 0 || run.max_in_flight < depth)) {
        std::vector<std::byte> image(kBytes);
        std::vector<int> delivered(kChunks);
        const auto start = Clock::now();
        reader.read_all([&](const StagedChunk& c) -> std::unique_ptr<Completion> {
          std::memcpy(image.data() + c.chunk.offset, c.data.data(), c.data.size());
          ++delivered[c.chunk.offset / kChunk];
          return nullptr;
        });
        if (run.passes++ == 0) {
          run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        }
        EXPECT_NO_THROW(verify_file_image(image, kBytes, kSeed, "the image read through FUSE"));
        EXPECT_EQ(std::count(delivered.begin(), delivered.end(), 1),
                  static_cast<std::ptrdiff_t>(kChunks))
            << "every chunk delivered once";
        run.max_in_flight = stat_of(fuse.stats(), "max_in_flight");
      }
      EXPECT_EQ(reader.stats().max_reads_in_pread, depth) << "reads inside the kernel at once";
      // The queue was refilled before every hand-over (a spare slot per read), so the device
      // was never left short of reads while chunks were handed over (the threads engine also
      // queues reads ahead of its threads into every free slot).
      if (engine == ReadEngine::kAio) {
        EXPECT_EQ(reader.stats().min_reads_queued_at_handover, depth);
      } else {
        EXPECT_GE(reader.stats().min_reads_queued_at_handover, depth);
      }

      const nlohmann::json stats = fuse.stats();
      EXPECT_EQ(stat_of(stats, "reads"), run.passes * kChunks)
          << "one READ request per pread of " << kChunk << " bytes; stats " << stats.dump();
      EXPECT_EQ(stat_of(stats, "bytes"), run.passes * kBytes) << stats.dump();
      EXPECT_EQ(stat_of(stats, "in_flight"), 0u) << stats.dump();
      // The depth reached the device: never more reads there than the queue holds, and, with
      // each read held there for milliseconds, the whole queue there at once.
      EXPECT_LE(run.max_in_flight, depth) << stats.dump();
      EXPECT_GE(run.max_in_flight, depth) << "in " << run.passes << " passes; " << stats.dump();
    }  // closed before the stop: nothing of the test holds the mount busy
    EXPECT_EQ(fuse.stop(), "");
    EXPECT_FALSE(latency_fuse_mounted_on(fuse.mount_point()));
    runs.push_back(run);
  }
  // Printed for the log, not asserted: a time depends on the machine and on its load.
  const double base = runs.front().seconds;
  for (const DepthRun& r : runs) {
    const double mb_per_s = static_cast<double>(kBytes) / r.seconds / 1e6;
    std::ostringstream line;
    line << std::fixed << std::setprecision(1) << "latency_fuse " << kLatencyUs
         << " us per read, chunk " << (kChunk >> 10) << " KiB, " << kChunks << " reads, " << name
         << ": queue depth " << r.depth << ": " << mb_per_s << " MB/s (" << std::setprecision(3)
         << r.seconds << " s, " << std::setprecision(1) << base / r.seconds
         << "x depth 1), max_in_flight " << r.max_in_flight;
    if (r.passes > 1) line << " after " << r.passes << " passes";
    std::cout << line.str() << "\n";
    std::ostringstream value;
    value << std::fixed << std::setprecision(1) << mb_per_s;
    const std::string prefix =
        (engine == ReadEngine::kAio ? "aio_qd" : "qd") + std::to_string(r.depth);
    ::testing::Test::RecordProperty(prefix + "_MBps", value.str());
    ::testing::Test::RecordProperty(prefix + "_max_in_flight", std::to_string(r.max_in_flight));
  }
}

TEST(QueuedReaderDepth, TheQueueReachesADeviceWithLatency) {
  if (const std::string why = latency_fuse_unavailable(); !why.empty()) GTEST_SKIP() << why;
  expect_queue_reaches_device(ReadEngine::kThreads);
}

TEST(QueuedReaderDepth, AnAioQueueReachesADeviceWithLatency) {
  if (const std::string why = latency_fuse_unavailable(); !why.empty()) GTEST_SKIP() << why;
  expect_queue_reaches_device(ReadEngine::kAio);
}

// The helper killed while reads are in flight: the kernel ends the requests it held, so read_all
// fails naming the file instead of hanging, and stop() still leaves no mount behind.
TEST(QueuedReaderDepth, AHelperThatDiesFailsTheReadsInsteadOfHanging) {
  if (const std::string why = latency_fuse_unavailable(); !why.empty()) GTEST_SKIP() << why;
  LatencyFuse fuse(kBytes, kLatencyUs);
  START_LATENCY_FUSE(fuse);
  const UniqueFd fd(::open(fuse.data().c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
  ASSERT_TRUE(fd.valid()) << std::strerror(errno);
  const Slots slots(staging_slot_count(4, kBytes, kChunk, ReadEngine::kThreads), kChunk);
  QueuedDirectReader reader(fd.get(), fuse.data(), kBytes, kChunk, 4, slots.spans());
  const pid_t pid = fuse.pid();
  // Depth 4 needs about 17 rounds of 5 ms: 20 ms in, reads are in flight.
  std::thread killer([pid] {
    std::this_thread::sleep_for(20ms);
    ::kill(pid, SIGKILL);
  });
  std::string why = "(read_all returned)";
  try {
    reader.read_all([](const StagedChunk&) -> std::unique_ptr<Completion> { return nullptr; });
  } catch (const CaseFailure& e) {
    why = e.what();
  }
  killer.join();
  EXPECT_NE(why.find(fuse.data()), std::string::npos) << why;
  EXPECT_NE(why.find("failed after"), std::string::npos) << why;
  const std::string stopped = fuse.stop();
  EXPECT_NE(stopped.find("killed by signal 9"), std::string::npos) << stopped;
  EXPECT_FALSE(latency_fuse_mounted_on(fuse.mount_point())) << stopped;
}

// The helper's command line, without mounting anything.
TEST(QueuedReaderDepth, TheHelperExplainsItselfAndRefusesBadArguments) {
  const std::string helper = test::latency_fuse_helper();
  if (helper.empty() || ::access(helper.c_str(), X_OK) != 0) {
    GTEST_SKIP() << latency_fuse_unavailable();
  }
  const SubprocessResult help = run_subprocess({helper, "--help"});
  EXPECT_TRUE(help.ok()) << help.error;
  EXPECT_NE(help.stdout_text.find("--latency-us"), std::string::npos) << help.stdout_text;
  const testing::TempDir dir;
  const auto refused = [&](const std::vector<std::string>& extra, const std::string& says) {
    std::vector<std::string> argv = {helper};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const SubprocessResult r = run_subprocess(argv);
    EXPECT_EQ(r.outcome, SubprocessOutcome::kExited) << says;
    EXPECT_EQ(r.exit_status, 3) << says << ": " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find(says), std::string::npos) << r.stderr_text;
  };
  refused({}, "--mount DIR is required");
  refused({"--mount", dir.path().string(), "--size", "12X"}, "--size wants a non-negative integer");
  refused({"--mount", dir.path().string(), "--latency-us"}, "--latency-us needs a value");
  refused({"--mount", dir.path().string(), "--threads", "0"}, "--threads must be between");
  refused({"--mount", (dir.path() / "nowhere").string()}, "No such file or directory");
  refused({"--mount", dir.path().string(), "--bogus"}, "unknown argument '--bogus'");
}

}  // namespace
}  // namespace pathbench::test_queued_reader_depth
