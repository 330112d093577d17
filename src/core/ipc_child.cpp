#include "core/ipc_child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"

extern char** environ;

namespace pathbench {

namespace {

// File actions and attributes of the spawn, released whatever happens.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    if (int rc = posix_spawn_file_actions_init(&actions); rc != 0) {
      throw SystemError("posix_spawn_file_actions_init", rc);
    }
    if (int rc = posix_spawnattr_init(&attr); rc != 0) {
      posix_spawn_file_actions_destroy(&actions);
      throw SystemError("posix_spawnattr_init", rc);
    }
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  ~SpawnSetup() {
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
  }
};

void check(int rc, const char* call) {
  if (rc != 0) throw SystemError(call, rc);
}

}  // namespace

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

IpcChild::IpcChild(std::vector<std::string> argv, IpcChildOptions options) : options_(options) {
  if (argv.empty() || argv.front().empty()) {
    throw std::invalid_argument("IpcChild: empty argument vector");
  }
  program_ = argv.front();
  auto [ours, theirs] = IpcChannel::make_pair();
  channel_ = std::move(ours);
  // dup2 onto the same number would leave close-on-exec set: move the child's end out of the way.
  UniqueFd child_end = theirs.release_socket();
  if (child_end.get() == kIpcChildFd) {
    const int moved = ::fcntl(child_end.get(), F_DUPFD_CLOEXEC, kIpcChildFd + 1);
    if (moved < 0) throw SystemError("fcntl(F_DUPFD_CLOEXEC)", errno);
    child_end = UniqueFd(moved);
  }
  argv.push_back("--fd");
  argv.push_back(std::to_string(kIpcChildFd));

  SpawnSetup s;
  check(posix_spawn_file_actions_addopen(&s.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0),
        "posix_spawn_file_actions_addopen");
  // The child's stdout is our stderr: a run's stdout carries only pathbench's own report.
  check(posix_spawn_file_actions_adddup2(&s.actions, STDERR_FILENO, STDOUT_FILENO),
        "posix_spawn_file_actions_adddup2");
  check(posix_spawn_file_actions_adddup2(&s.actions, child_end.get(), kIpcChildFd),
        "posix_spawn_file_actions_adddup2");
  // Own process group (killed as one on timeout), default signal dispositions, empty mask.
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  check(posix_spawnattr_setpgroup(&s.attr, 0), "posix_spawnattr_setpgroup");
  check(posix_spawnattr_setsigdefault(&s.attr, &all), "posix_spawnattr_setsigdefault");
  check(posix_spawnattr_setsigmask(&s.attr, &none), "posix_spawnattr_setsigmask");
  check(posix_spawnattr_setflags(
            &s.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK),
        "posix_spawnattr_setflags");
  std::vector<char*> c_argv;
  for (auto& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  pid_t pid = -1;
  if (int rc = posix_spawn(&pid, program_.c_str(), &s.actions, &s.attr, c_argv.data(), environ);
      rc != 0) {
    throw CaseFailure("could not start the ipc child " + program_ + ": " + std::strerror(rc));
  }
  pid_ = pid;
  child_end.reset();  // only the child holds its end now: its death is our EOF

  try {
    IpcMessage hello = channel_.expect(IpcMessageType::kHello, options_.hello_timeout);
    const auto j = nlohmann::json::parse(hello.payload, nullptr, false);
    if (!j.is_object() || !j.contains("protocol") || j["protocol"] != kIpcProtocolVersion) {
      throw IpcError(IpcError::Kind::kGarbage, "its hello is not {\"protocol\": " +
                                                   std::to_string(kIpcProtocolVersion) + ", ...}");
    }
    hello_ = std::move(hello.payload);
  } catch (const IpcError& e) {
    fail(e, "waiting for its hello");
  }
}

IpcChild::~IpcChild() {
  if (pid_ <= 0) return;
  try {
    stop();
  } catch (...) {
    kill_and_reap();
  }
}

bool IpcChild::stop() {
  if (pid_ <= 0) return false;
  try {
    channel_.send(IpcMessageType::kCommand, R"({"op":"exit"})", -1, options_.exit_timeout);
  } catch (const IpcError&) {
    // Gone already, or not reading: the wait below decides.
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + options_.exit_timeout;
  for (;;) {
    const pid_t rc = ::waitpid(pid_, &status, WNOHANG);
    if (rc == pid_) {
      pid_ = -1;
      ::kill(-rc, SIGKILL);  // helpers it may have left in its group
      return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    if (rc < 0 && errno != EINTR) {
      pid_ = -1;
      return false;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill_and_reap();
  return false;
}

void IpcChild::send(IpcMessageType type, const std::string& payload, int fd) {
  try {
    channel_.send(type, payload, fd, options_.reply_timeout);
  } catch (const IpcError& e) {
    fail(e, "sending a " + std::string(to_string(type)) + " message");
  }
}

std::string IpcChild::request(const std::string& command) {
  send(IpcMessageType::kCommand, command);
  IpcMessage reply;
  try {
    reply = channel_.receive(options_.reply_timeout);
  } catch (const IpcError& e) {
    fail(e, "waiting for the reply to " + command);
  }
  if (reply.type == IpcMessageType::kError) {
    throw CaseFailure("the ipc child reported: " + printable_text(shortened_text(reply.payload)));
  }
  if (reply.type != IpcMessageType::kResult) {
    fail(IpcError(IpcError::Kind::kUnexpected,
                  "expected a result message, got " + std::string(to_string(reply.type))),
         "waiting for the reply to " + command);
  }
  return std::move(reply.payload);
}

std::string IpcChild::reap(std::chrono::milliseconds wait) {
  if (pid_ <= 0) return "had already ended";
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    int status = 0;
    const pid_t rc = ::waitpid(pid_, &status, WNOHANG);
    if (rc == pid_) {
      ::kill(-pid_, SIGKILL);
      pid_ = -1;
      return describe_wait_status(status);
    }
    if (rc < 0 && errno != EINTR) {
      pid_ = -1;
      return "could not be waited for (" + std::string(std::strerror(errno)) + ")";
    }
    if (std::chrono::steady_clock::now() >= deadline) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void IpcChild::kill_and_reap() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);  // in case its process group was not set yet
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

void IpcChild::fail(const IpcError& e, const std::string& doing) {
  const std::string who = "the ipc child " + program_;
  switch (e.kind()) {
    case IpcError::Kind::kEof:
    case IpcError::Kind::kSystem: {
      // Its end closed: it exited or crashed; give it a moment to be reaped and say which.
      std::string end = reap(options_.exit_timeout);
      if (end.empty()) {
        kill_and_reap();
        throw CaseFailure(who + " closed the channel while " + doing + " and was killed (" +
                          e.what() + ")");
      }
      throw CaseFailure(who + " " + end + " while " + doing);
    }
    case IpcError::Kind::kTimeout: {
      // It may have died just now without closing (a descendant holding the socket): say so.
      std::string end = reap(std::chrono::milliseconds(0));
      if (!end.empty()) throw CaseFailure(who + " " + end + " while " + doing);
      kill_and_reap();
      throw CaseFailure(who + " timed out: " + e.what() + " while " + doing +
                        "; it was killed (SIGKILL)");
    }
    case IpcError::Kind::kGarbage:
    case IpcError::Kind::kOversized:
    case IpcError::Kind::kUnexpected:
      kill_and_reap();
      throw CaseFailure(who + " broke the protocol while " + doing + ": " + e.what() +
                        "; it was killed");
  }
  kill_and_reap();
  throw CaseFailure(who + ": " + e.what());
}

}  // namespace pathbench
