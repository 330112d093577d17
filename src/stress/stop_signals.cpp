#include "stress/stop_signals.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <stdexcept>

#include "core/errors.hpp"

namespace pathbench {

namespace {

// The handler's only way to reach the instance: a signal handler takes no context.
std::atomic<int> g_write_fd{-1};

extern "C" void on_stop_signal(int signal_number) {
  const int saved_errno = errno;  // the interrupted code may be about to read errno
  const int fd = g_write_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(signal_number);
    // A full pipe already holds a stop request; nothing is lost by dropping this one.
    [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

}  // namespace

StopSignals::StopSignals() {
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
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // Interrupted system calls in other threads resume instead of failing with EINTR.
  action.sa_flags = SA_RESTART;
  if (::sigaction(SIGINT, &action, &previous_int_) != 0 ||
      ::sigaction(SIGTERM, &action, &previous_term_) != 0) {
    const int err = errno;
    ::sigaction(SIGINT, &previous_int_, nullptr);
    g_write_fd.store(-1);
    ::close(read_fd_);
    ::close(write_fd_);
    throw SystemError("sigaction(SIGINT/SIGTERM)", err);
  }
}

StopSignals::~StopSignals() {
  ::sigaction(SIGTERM, &previous_term_, nullptr);
  ::sigaction(SIGINT, &previous_int_, nullptr);
  g_write_fd.store(-1);
  ::close(read_fd_);
  ::close(write_fd_);
}

std::optional<int> StopSignals::wait_until(std::chrono::steady_clock::time_point deadline) {
  using namespace std::chrono;
  while (true) {
    unsigned char byte = 0;
    if (::read(read_fd_, &byte, 1) == 1) return static_cast<int>(byte);
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

}  // namespace pathbench
