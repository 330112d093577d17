#include "placement/capped_touch.hpp"

#include <numaif.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "core/unique_fd.hpp"
#include "placement/memory_cgroup.hpp"

namespace pathbench {

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kMaxSamples = 4096;

// What parent and child share: progress and the survivor's move_pages answers. Lives in a
// MAP_SHARED mapping made before the fork.
struct SharedState {
  std::atomic<std::uint64_t> touched;
  std::atomic<std::uint64_t> elapsed_ns;
  std::atomic<int> finished;
  int status[kMaxSamples];
};

class SharedMapping {
 public:
  SharedMapping() {
    void* p = ::mmap(nullptr, sizeof(SharedState), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw SystemError("mmap(MAP_SHARED, capped-touch state)", errno);
    state_ = new (p) SharedState{};
  }
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;
  ~SharedMapping() { ::munmap(state_, sizeof(SharedState)); }
  SharedState* operator->() const { return state_; }
  SharedState* get() const { return state_; }

 private:
  SharedState* state_;
};

std::uint64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(t.tv_nsec);
}

// The child: only system calls and plain stores (the parent may have other threads, so nothing
// that takes a lock, allocates or throws).
[[noreturn]] void child(int go_fd, std::byte* data, std::uint64_t pages, void** samples,
                        std::size_t sample_count, SharedState* state) {
  char go = 0;
  if (::read(go_fd, &go, 1) != 1 || go != 'g') ::_exit(2);
  const std::uint64_t start = now_ns();
  for (std::uint64_t i = 0; i < pages; ++i) {
    data[i * kPage] = std::byte{1};
    state->touched.store(i + 1, std::memory_order_relaxed);
  }
  state->elapsed_ns.store(now_ns() - start, std::memory_order_relaxed);
  if (::move_pages(0, sample_count, samples, nullptr, state->status, 0) != 0) ::_exit(3);
  state->finished.store(1, std::memory_order_release);
  ::_exit(0);
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGKILL:
      return "SIGKILL";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    default:
      return "a signal";
  }
}

}  // namespace

std::string CappedTouchOutcome::describe() const {
  const std::string progress = std::to_string(pages_touched) + " of " + std::to_string(pages) +
                               " pages (" +
                               std::to_string(static_cast<int>(touched_share() * 100)) + " %)";
  if (timed_out)
    return "still faulting after the time limit, killed by pathbench after " + progress;
  if (killed) {
    std::string why = std::string("killed by ") + signal_name(signal) + " (signal " +
                      std::to_string(signal) + ")";
    if (oom_kills > 0) {
      why += ", the OOM killer (" + std::to_string(oom_kills) + " kill" +
             (oom_kills == 1 ? "" : "s") + " in the cgroup)";
    }
    return why + " after " + progress;
  }
  return "finished: " + progress + " touched; resident at the end: " + resident.describe();
}

CappedTouchOutcome touch_under_cap(const HostBuffer& buffer, std::uint64_t cap_bytes,
                                   double limit_s) {
  CappedTouchOutcome out;
  out.pages = buffer.mapped_size() / kPage;
  MemoryCgroup cgroup(cap_bytes);
  out.cgroup = cgroup.describe();
  SharedMapping state;
  // Sampled evenly, as query_page_placement does; built before the fork (the child allocates
  // nothing).
  const std::uint64_t stride = std::max<std::uint64_t>(1, out.pages / kMaxSamples);
  std::vector<void*> samples;
  for (std::uint64_t i = 0; i < out.pages && samples.size() < kMaxSamples; i += stride) {
    samples.push_back(buffer.data() + i * kPage);
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw SystemError("pipe2", errno);
  UniqueFd go_read(fds[0]), go_write(fds[1]);
  const pid_t pid = ::fork();
  if (pid < 0) throw SystemError("fork", errno);
  if (pid == 0) {
    child(go_read.get(), buffer.data(), out.pages, samples.data(), samples.size(), state.get());
  }
  go_read.reset();
  const auto reap = [pid](int* status) { return ::waitpid(pid, status, 0) == pid; };
  try {
    cgroup.add(pid);
  } catch (...) {
    ::kill(pid, SIGKILL);
    int status = 0;
    reap(&status);
    throw;
  }
  if (::write(go_write.get(), "g", 1) != 1) {
    const int err = errno;
    ::kill(pid, SIGKILL);
    int status = 0;
    reap(&status);
    throw SystemError("write to the capped child", err);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw SystemError("waitpid(capped child)", errno);
    if (std::chrono::steady_clock::now() > deadline && !out.timed_out) {
      out.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  out.pages_touched = state->touched.load();
  out.seconds = static_cast<double>(state->elapsed_ns.load()) / 1e9;
  out.oom_kills = cgroup.oom_kills().value_or(0);
  if (WIFSIGNALED(status)) {
    out.killed = true;
    out.signal = WTERMSIG(status);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    throw SystemError(
        WEXITSTATUS(status) == 3 ? "move_pages in the capped child" : "the capped child's start",
        EIO);
  }
  if (!out.killed && state->finished.load(std::memory_order_acquire) == 1) {
    out.resident = placement_from_status(state->status, samples.size());
  }
  return out;
}

}  // namespace pathbench
