#pragma once

// Shared by the libFuzzer harnesses. A harness feeds its input to a parser the way pathbench
// does and swallows the rejections that parser documents for bad text; anything else (a crash, a
// sanitizer report, an exception type the parser does not document, a broken round trip) aborts,
// so libFuzzer records the input as a finding.

#include <cxxabi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>

namespace pathbench::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? name.get() : type.name();
}

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "pathbench fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Runs `parse`. An exception of one of the Expected types (or derived from one) is the parser
// saying "bad input" and ends this input quietly; any other exception is a finding.
template <typename... Expected, typename F>
void expect_only(const char* call, F&& parse) {
  try {
    parse();
  } catch (const std::exception& e) {
    if ((... || (dynamic_cast<const Expected*>(&e) != nullptr))) return;
    finding(std::string(call) + " let " + type_name(typeid(e)) + " escape: " + e.what());
  } catch (...) {
    finding(std::string(call) + " threw something that is not a std::exception");
  }
}

// Same, for a call documented never to throw.
template <typename F>
void expect_no_throw(const char* call, F&& parse) {
  expect_only<>(call, std::forward<F>(parse));
}

inline void check(bool ok, const std::string& what) {
  if (!ok) finding(what);
}

// Parsers that pathbench only drives through a file path get their input through a file in a
// per-process directory under $TMPDIR (libFuzzer's -fork/-jobs workers are separate processes),
// removed at exit. The repository and the build tree are never written.
class InputFile {
 public:
  explicit InputFile(const std::string& name) {
    const char* tmp = std::getenv("TMPDIR");
    dir_ = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") /
           ("pathbench-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = dir_ / name;
  }
  ~InputFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::filesystem::path& write(std::string_view bytes) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) finding("cannot write the input file " + path_.string());
    return path_;
  }

 private:
  std::filesystem::path dir_, path_;
};

}  // namespace pathbench::fuzz
