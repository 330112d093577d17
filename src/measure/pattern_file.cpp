#include "measure/pattern_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <system_error>

#include "core/errors.hpp"
#include "measure/pattern.hpp"
#include "placement/file_handle.hpp"

namespace pathbench {

namespace {

constexpr std::size_t kPiece = std::size_t{8} << 20;

[[noreturn]] void throw_file_write_error(const std::string& call, int err) {
  if (err == ENOSPC || err == EDQUOT) {
    throw CaseFailure(call + ": the storage location filled up while writing the test file");
  }
  throw SystemError(call, err);
}

}  // namespace

void write_pattern_file(int fd, std::uint64_t bytes, std::uint64_t seed) {
  const auto buffer = std::make_unique_for_overwrite<std::byte[]>(kPiece);
  for (std::uint64_t done = 0; done < bytes;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, bytes - done));
    fill_pattern({buffer.get(), n}, seed, done);
    for (std::size_t written = 0; written < n;) {
      const ssize_t w =
          ::pwrite(fd, buffer.get() + written, n - written, static_cast<off_t>(done + written));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw_file_write_error("pwrite of the test file", errno);
      written += static_cast<std::size_t>(w);
    }
    done += n;
  }
  if (::fsync(fd) != 0) throw_file_write_error("fsync of the test file", errno);
}

PatternFile::PatternFile(const std::string& dir, std::uint64_t bytes, std::uint64_t seed)
    : bytes_(bytes), seed_(seed) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw SystemError("create_directories " + dir, ec.value());
  std::string name = (std::filesystem::path(dir) / "pathbench-storage.XXXXXX").string();
  UniqueFd fd(::mkstemp(name.data()));
  if (!fd.valid()) throw SystemError("mkstemp " + name, errno);
  path_ = name;
  try {
    write_pattern_file(fd.get(), bytes, seed);
  } catch (...) {
    ::unlink(path_.c_str());
    throw;
  }
}

PatternFile::~PatternFile() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

void verify_file_image(std::span<const std::byte> image, std::uint64_t file_bytes,
                       std::uint64_t seed, const std::string& what) {
  if (image.size() != file_bytes) {
    throw CaseFailure(what + ": holds " + std::to_string(image.size()) + " bytes, the file " +
                      std::to_string(file_bytes));
  }
  verify_pattern(image, seed, what);
}

void verify_pattern_file(const std::string& path, std::uint64_t bytes, std::uint64_t seed) {
  const UniqueFd fd = open_file(path, O_RDONLY, "to verify it");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw SystemError("fstat " + path, errno);
  if (static_cast<std::uint64_t>(st.st_size) != bytes) {
    throw CaseFailure(path + ": " + std::to_string(st.st_size) + " bytes, expected " +
                      std::to_string(bytes));
  }
  const auto buffer = std::make_unique_for_overwrite<std::byte[]>(kPiece);
  for (std::uint64_t done = 0; done < bytes;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, bytes - done));
    const ssize_t got = ::pread(fd.get(), buffer.get(), n, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw SystemError("pread " + path, errno);
    if (got == 0) throw CaseFailure(path + ": ended early at byte " + std::to_string(done));
    const std::span<const std::byte> piece(buffer.get(), static_cast<std::size_t>(got));
    if (const auto bad = find_pattern_mismatch(piece, seed, done)) {
      throw CaseFailure(path + ": byte " + std::to_string(done + *bad) + " of " +
                        std::to_string(bytes) + " differs from the pattern");
    }
    done += static_cast<std::uint64_t>(got);
  }
}

}  // namespace pathbench
