#pragma once

// The one owner of a POSIX file descriptor: closed on destruction, movable, never copied. Every
// family and core piece that opens a file, a pipe, a socket or a memfd holds it in a UniqueFd, so
// no error path leaks a descriptor into a child process or past a case.

#include <unistd.h>

#include <utility>

namespace pathbench {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  // Hands the descriptor to the caller, who closes it (or passes it to an API that does).
  int release() { return std::exchange(fd_, -1); }
  // close(2)'s own error is not reported: where it matters (fsync'ed files), callers close
  // explicitly through release() and check.
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace pathbench
