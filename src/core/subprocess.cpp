#include "core/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#include "core/errors.hpp"
#include "core/unique_fd.hpp"

extern char** environ;

namespace pathbench {
namespace {

struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;
};

Pipe make_pipe() {
  // O_CLOEXEC so that concurrently spawned children elsewhere in the process never inherit our
  // write end, which would keep our reader from seeing EOF.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw SystemError("pipe2", errno);
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

class SpawnFileActions {
 public:
  SpawnFileActions() {
    if (int rc = posix_spawn_file_actions_init(&actions_); rc != 0) {
      throw SystemError("posix_spawn_file_actions_init", rc);
    }
  }
  SpawnFileActions(const SpawnFileActions&) = delete;
  SpawnFileActions& operator=(const SpawnFileActions&) = delete;
  ~SpawnFileActions() { posix_spawn_file_actions_destroy(&actions_); }

  void open(int fd, const char* path, int flags) {
    if (int rc = posix_spawn_file_actions_addopen(&actions_, fd, path, flags, 0); rc != 0) {
      throw SystemError("posix_spawn_file_actions_addopen", rc);
    }
  }
  void dup2(int from, int to) {
    if (int rc = posix_spawn_file_actions_adddup2(&actions_, from, to); rc != 0) {
      throw SystemError("posix_spawn_file_actions_adddup2", rc);
    }
  }
  const posix_spawn_file_actions_t* get() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

class SpawnAttributes {
 public:
  SpawnAttributes() {
    if (int rc = posix_spawnattr_init(&attr_); rc != 0)
      throw SystemError("posix_spawnattr_init", rc);
    // Own process group: on timeout we kill the whole group, so helpers the tool started die too.
    // Default signal dispositions and an empty mask: the child must not inherit our choices
    // (an ignored SIGPIPE, a blocked SIGTERM).
    sigset_t all;
    sigfillset(&all);
    sigset_t none;
    sigemptyset(&none);
    check(posix_spawnattr_setpgroup(&attr_, 0), "posix_spawnattr_setpgroup");
    check(posix_spawnattr_setsigdefault(&attr_, &all), "posix_spawnattr_setsigdefault");
    check(posix_spawnattr_setsigmask(&attr_, &none), "posix_spawnattr_setsigmask");
    check(posix_spawnattr_setflags(
              &attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK),
          "posix_spawnattr_setflags");
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  ~SpawnAttributes() { posix_spawnattr_destroy(&attr_); }
  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  static void check(int rc, const char* call) {
    if (rc != 0) throw SystemError(call, rc);
  }
  posix_spawnattr_t attr_;
};

// Owns a spawned child until it has been reaped: whatever happens on the way (an exception while
// reading), the child is killed and waited for, never left as a zombie or an orphan.
class ChildProcess {
 public:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (pid_ > 0) {
      kill_group();
      wait_blocking();
    }
  }

  void kill_group() const {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);  // in case setpgid did not take effect
  }

  // Returns true and the wait status when the child has ended.
  bool try_wait(int& status) {
    for (;;) {
      pid_t rc = ::waitpid(pid_, &status, WNOHANG);
      if (rc == pid_) {
        pid_ = -1;
        return true;
      }
      if (rc == 0) return false;
      if (errno == EINTR) continue;
      throw SystemError("waitpid", errno);
    }
  }

  int wait_blocking() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0) {
      if (errno != EINTR) break;
    }
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_;
};

// Reads what is available; returns false at EOF. Output beyond `limit` is discarded but still
// drained, so that the child never blocks on a full pipe.
bool drain(int fd, std::string& sink, std::size_t limit, bool& truncated) {
  std::array<char, 65536> buffer;
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n > 0) {
      std::size_t room = sink.size() < limit ? limit - sink.size() : 0;
      std::size_t take = std::min<std::size_t>(room, static_cast<std::size_t>(n));
      sink.append(buffer.data(), take);
      if (take < static_cast<std::size_t>(n)) truncated = true;
      return true;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    throw SystemError("read from child pipe", errno);
  }
}

std::string describe_status(const std::string& program, int status, SubprocessResult& result) {
  if (WIFEXITED(status)) {
    result.outcome = SubprocessOutcome::kExited;
    result.exit_status = WEXITSTATUS(status);
    if (result.exit_status == 0) return {};
    return program + " exited with status " + std::to_string(result.exit_status);
  }
  if (WIFSIGNALED(status)) {
    result.outcome = SubprocessOutcome::kSignaled;
    result.signal = WTERMSIG(status);
    return program + " was killed by signal " + std::to_string(result.signal) + " (" +
           ::strsignal(result.signal) + ")";
  }
  result.outcome = SubprocessOutcome::kSpawnFailed;
  return program + " ended with unexpected wait status " + std::to_string(status);
}

}  // namespace

SubprocessResult run_subprocess(const std::vector<std::string>& argv,
                                const SubprocessOptions& options) {
  if (argv.empty() || argv.front().empty()) {
    throw std::invalid_argument("run_subprocess: empty argument vector");
  }
  const std::string& program = argv.front();
  SubprocessResult result;

  Pipe out = make_pipe();
  Pipe err;
  if (options.capture_stderr) err = make_pipe();

  SpawnFileActions actions;
  actions.open(STDIN_FILENO, "/dev/null", O_RDONLY);
  actions.dup2(out.write_end.get(), STDOUT_FILENO);
  if (options.capture_stderr) {
    actions.dup2(err.write_end.get(), STDERR_FILENO);
  } else {
    actions.open(STDERR_FILENO, "/dev/null", O_WRONLY);
  }
  SpawnAttributes attributes;

  // posix_spawnp wants mutable char*; the strings stay alive in `args` for the call.
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv;
  c_argv.reserve(args.size() + 1);
  for (auto& arg : args) c_argv.push_back(arg.data());
  c_argv.push_back(nullptr);

  pid_t pid = -1;
  int rc =
      posix_spawnp(&pid, program.c_str(), actions.get(), attributes.get(), c_argv.data(), environ);
  if (rc != 0) {
    if (rc == ENOENT) {
      result.outcome = SubprocessOutcome::kNotFound;
      result.error = program + " not found on PATH";
    } else {
      result.outcome = SubprocessOutcome::kSpawnFailed;
      result.error = "could not start " + program + ": " + std::strerror(rc);
    }
    return result;
  }
  ChildProcess child(pid);
  // Our copies of the write ends must go, or we would never see EOF.
  out.write_end.reset();
  err.write_end.reset();

  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  bool stderr_truncated = false;
  bool timed_out = false;
  while (out.read_end || err.read_end) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    auto remaining = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    std::array<pollfd, 2> fds{};
    nfds_t count = 0;
    if (out.read_end) fds[count++] = pollfd{out.read_end.get(), POLLIN, 0};
    if (err.read_end) fds[count++] = pollfd{err.read_end.get(), POLLIN, 0};
    int ready = ::poll(fds.data(), count, static_cast<int>(std::min<long long>(remaining, 1000)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw SystemError("poll", errno);
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      bool is_out = out.read_end && fds[i].fd == out.read_end.get();
      std::string& sink = is_out ? result.stdout_text : result.stderr_text;
      bool& truncated = is_out ? result.stdout_truncated : stderr_truncated;
      if (!drain(fds[i].fd, sink, options.max_output_bytes, truncated)) {
        (is_out ? out.read_end : err.read_end).reset();
      }
    }
  }

  // Both pipes closed does not mean the child has exited (it may have closed them itself).
  int status = 0;
  while (!timed_out && !child.try_wait(status)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (timed_out) {
    child.kill_group();
    child.wait_blocking();
    result.outcome = SubprocessOutcome::kTimedOut;
    auto ms = options.timeout.count();
    result.error =
        program + " did not finish within " +
        (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms") +
        " and was killed";
    return result;
  }
  result.error = describe_status(program, status, result);
  return result;
}

}  // namespace pathbench
