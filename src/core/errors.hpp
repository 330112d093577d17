#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pathbench {

// Messages echo what an input holds (a value, a key, a path). Every message of an InputError goes
// through these, so that no call site has to remember to:
//   - printable_text: control characters (C0 including NUL and newline, DEL, C1) become \u00XX and
//     bytes that are not UTF-8 \xNN, so a hostile value cannot drive the terminal (ESC [2J) or
//     cut the message short (a NUL in a key ended it, printed with %s);
//   - shortened_text: a "quoted" part longer than kMaxEchoedChars characters keeps its first
//     kMaxEchoedChars and says how long it was ("aaaa…" (1200000 bytes)), and a message longer
//     than kMaxMessageBytes is cut, so a 1 MB value does not become 1 MB of stderr.
inline constexpr std::size_t kMaxEchoedChars = 200;
inline constexpr std::size_t kMaxMessageBytes = 4096;
std::string printable_text(std::string_view text);
std::string shortened_text(std::string_view text);
// A report of several lines made printable as printable_text does, keeping its newlines and the
// escape sequences in `keep` (the report's own colours).
std::string printable_lines(std::string_view text, const std::vector<std::string_view>& keep);
// A JSON pointer for a message: each token longer than kMaxEchoedChars shortened, then printable.
std::string printable_pointer(std::string_view pointer);

// Exit codes shared by every command (DESIGN.md, Conventions).
enum class ExitCode : int { kOk = 0, kFailure = 1, kIncomplete = 2, kBadInput = 3 };

// Bad input or usage: always names the file and the JSON pointer of the offending field.
class InputError : public std::runtime_error {
 public:
  // The message: "FILE: POINTER: WHAT", each part printable and shortened (see printable_text).
  InputError(std::string file, std::string pointer, const std::string& what)
      : std::runtime_error(printable_text(file) + ": " +
                           (pointer.empty() ? std::string("/") : printable_pointer(pointer)) + ": " +
                           printable_text(shortened_text(what))),
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
      : std::runtime_error(printable_text(name) + ": " + printable_text(shortened_text(what))),
        file_(name) {}
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
