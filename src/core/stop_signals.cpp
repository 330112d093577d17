#include "core/stop_signals.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <stdexcept>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"

namespace pathbench {

namespace {

// The handler's only way to reach the instance: a signal handler takes no context.
std::atomic<int> g_write_fd{-1};
std::atomic<int> g_first_signal{0};
std::atomic<int> g_exit_code_on_repeat{-1};  // -1: a repeat is just another request

extern "C" void on_stop_signal(int signal_number) {
  const int saved_errno = errno;  // the interrupted code may be about to read errno
  int expected = 0;
  if (!g_first_signal.compare_exchange_strong(expected, signal_number) &&
      g_exit_code_on_repeat.load() >= 0) {
    // The second stop: leave no temporary file behind, then go.
    remove_pending_temporary_file();
    static constexpr char kMessage[] =
        "\npathbench: stopped at once (second signal); the result keeps what was saved\n";
    [[maybe_unused]] const ssize_t w = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    ::_exit(g_exit_code_on_repeat.load());
  }
  const int fd = g_write_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(signal_number);
    // A full pipe already holds a stop request; nothing is lost by dropping this one.
    [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

}  // namespace

StopSignals::StopSignals(std::initializer_list<int> signals,
                         std::optional<int> exit_code_on_repeat) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw SystemError("pipe2", errno);
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  int expected = -1;
  if (!g_write_fd.compare_exchange_strong(expected, write_fd_)) {
    ::close(read_fd_);
    ::close(write_fd_);
    throw std::logic_error("StopSignals: only one instance at a time");
  }
  g_first_signal.store(0);
  g_exit_code_on_repeat.store(exit_code_on_repeat.value_or(-1));
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // Interrupted system calls in other threads resume instead of failing with EINTR.
  action.sa_flags = SA_RESTART;
  for (const int sig : signals) {
    struct sigaction previous {};
    if (::sigaction(sig, &action, &previous) != 0) {
      const int err = errno;
      for (auto it = previous_.rbegin(); it != previous_.rend(); ++it) {
        ::sigaction(it->first, &it->second, nullptr);
      }
      g_write_fd.store(-1);
      ::close(read_fd_);
      ::close(write_fd_);
      throw SystemError("sigaction(" + std::string(signal_name(sig)) + ")", err);
    }
    previous_.emplace_back(sig, previous);
  }
}

StopSignals::~StopSignals() {
  for (auto it = previous_.rbegin(); it != previous_.rend(); ++it) {
    ::sigaction(it->first, &it->second, nullptr);
  }
  g_write_fd.store(-1);
  g_first_signal.store(0);
  ::close(read_fd_);
  ::close(write_fd_);
}

std::optional<int> StopSignals::received() {
  unsigned char byte = 0;
  if (!first_ && ::read(read_fd_, &byte, 1) == 1) first_ = static_cast<int>(byte);
  return first_;
}

std::optional<int> StopSignals::wait_until(std::chrono::steady_clock::time_point deadline) {
  using namespace std::chrono;
  while (true) {
    unsigned char byte = 0;
    if (::read(read_fd_, &byte, 1) == 1) {
      if (!first_) first_ = static_cast<int>(byte);
      return static_cast<int>(byte);
    }
    const auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    // Rounded up, so the loop does not spin through the last fraction of a millisecond; capped,
    // so a far deadline (time_point::max) fits poll's int.
    const auto timeout = std::min<milliseconds::rep>(left.count() + 1, 60'000);
    pollfd pfd{read_fd_, POLLIN, 0};
    const int rc = ::poll(&pfd, 1, static_cast<int>(timeout));
    if (rc < 0 && errno != EINTR) throw SystemError("poll", errno);
  }
}

std::optional<int> stop_signal_received() noexcept {
  const int sig = g_first_signal.load();
  if (sig == 0) return std::nullopt;
  return sig;
}

const char* signal_name(int signal_number) noexcept {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGQUIT:
      return "SIGQUIT";
    default:
      return "a signal";
  }
}

}  // namespace pathbench
