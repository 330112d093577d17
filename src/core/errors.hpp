#pragma once

#include <stdexcept>
#include <string>

namespace pathbench {

// Exit codes shared by every command (DESIGN.md, Conventions).
enum class ExitCode : int { kOk = 0, kFailure = 1, kIncomplete = 2, kBadInput = 3 };

// Bad input or usage: always names the file and the JSON pointer of the offending field.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string pointer, const std::string& what)
      : std::runtime_error(file + ": " + (pointer.empty() ? std::string("/") : pointer) + ": " +
                           what),
        file_(std::move(file)),
        pointer_(std::move(pointer)) {}
  // A bad command-line option value: "--name: what" (there is no file or JSON pointer).
  static InputError option(const std::string& name, const std::string& what) {
    return InputError(name, what, OptionTag{});
  }
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }

 private:
  struct OptionTag {};
  InputError(const std::string& name, const std::string& what, OptionTag)
      : std::runtime_error(name + ": " + what), file_(name) {}
  std::string file_;
  std::string pointer_;
};

// A case that cannot run on this machine; the message says why and how to fix it.
class SkipCase : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A case that ran but whose result cannot be trusted (copy mismatch, latch timeout, ...).
class CaseFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An operating-system call failed; carries errno's text.
class SystemError : public std::runtime_error {
 public:
  SystemError(const std::string& call, int err);
  int error_number() const { return errno_; }

 private:
  int errno_;
};

// The file system is full (ENOSPC) or the quota is used up (EDQUOT) while writing an output:
// the run or report is incomplete (exit 2), not bad input.
class DiskFull : public SystemError {
 public:
  DiskFull(const std::string& call, int err) : SystemError(call, err) {}
};

// Throws DiskFull for ENOSPC and EDQUOT, SystemError otherwise.
[[noreturn]] void throw_write_error(const std::string& call, int err);

}  // namespace pathbench
