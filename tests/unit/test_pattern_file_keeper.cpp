// The storage cases' shared test file: kept for a case of the same folder, size and seed, replaced
// (the old one removed first) for another, written again when it went missing or was replaced
// behind pathbench's back, and removed once let go and no case holds it.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "measure/pattern_file.hpp"
#include "measure/pattern_file_keeper.hpp"
#include "temp_dir.hpp"

namespace pathbench::test_pattern_file_keeper {
namespace {

constexpr std::uint64_t kSeed = 0x5eed;
constexpr std::uint64_t kBytes = (std::uint64_t{1} << 20) + 4096;

std::size_t files_in(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(PatternFileKeeper, TheSameSizeReadsTheFileAnEarlierCaseWrote) {
  testing::TempDir dir;
  const std::string d = dir.path().string();
  PatternFileKeeper keeper;
  EXPECT_EQ(keeper.bytes_kept_in(d), 0u);
  std::string path;
  {
    const PatternFileKeeper::Lease first = keeper.file(d, kBytes, kSeed);
    EXPECT_TRUE(first.written_now);
    path = first.file->path();
    verify_pattern_file(path, kBytes, kSeed);
  }
  // The first case is over; its file stays for the next.
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(keeper.bytes_kept_in(d), kBytes);
  EXPECT_EQ(keeper.bytes_kept_in(d + "/other"), 0u);
  const PatternFileKeeper::Lease second = keeper.file(d, kBytes, kSeed);
  EXPECT_FALSE(second.written_now);
  EXPECT_EQ(second.file->path(), path);
  EXPECT_EQ(files_in(dir.path()), 1u);
}

TEST(PatternFileKeeper, AnotherSizeOrSeedReplacesTheKeptFile) {
  testing::TempDir dir;
  const std::string d = dir.path().string();
  PatternFileKeeper keeper;
  const std::string first = keeper.file(d, kBytes, kSeed).file->path();
  const PatternFileKeeper::Lease bigger = keeper.file(d, 2 * kBytes, kSeed);
  EXPECT_TRUE(bigger.written_now);
  EXPECT_FALSE(std::filesystem::exists(first));  // removed, not left beside the new one
  EXPECT_EQ(files_in(dir.path()), 1u);
  verify_pattern_file(bigger.file->path(), 2 * kBytes, kSeed);
  const PatternFileKeeper::Lease reseeded = keeper.file(d, 2 * kBytes, kSeed + 1);
  EXPECT_TRUE(reseeded.written_now);
  verify_pattern_file(reseeded.file->path(), 2 * kBytes, kSeed + 1);
  // The case that still holds the old lease keeps its file until it lets go.
  EXPECT_TRUE(std::filesystem::exists(bigger.file->path()));
}

TEST(PatternFileKeeper, AFileRemovedOrReplacedBehindItsBackIsWrittenAgain) {
  testing::TempDir dir;
  const std::string d = dir.path().string();
  PatternFileKeeper keeper;
  const std::string path = keeper.file(d, kBytes, kSeed).file->path();
  std::filesystem::remove(path);
  const PatternFileKeeper::Lease again = keeper.file(d, kBytes, kSeed);
  EXPECT_TRUE(again.written_now);
  verify_pattern_file(again.file->path(), kBytes, kSeed);

  // Another file of the same size put in its place (a new inode) is not taken for it.
  const std::string kept = again.file->path();
  const std::string other = d + "/impostor";
  {
    std::ofstream out(other, std::ios::binary);
    const std::string zeros(kBytes, '\0');
    out.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  }
  std::filesystem::rename(other, kept);
  const PatternFileKeeper::Lease fresh = keeper.file(d, kBytes, kSeed);
  EXPECT_TRUE(fresh.written_now);
  verify_pattern_file(fresh.file->path(), kBytes, kSeed);
}

TEST(PatternFileKeeper, ReleaseRemovesTheFileOnceNoCaseHoldsIt) {
  testing::TempDir dir;
  const std::string d = dir.path().string();
  PatternFileKeeper keeper;
  std::string path;
  {
    const PatternFileKeeper::Lease held = keeper.file(d, kBytes, kSeed);
    path = held.file->path();
    keeper.release();
    EXPECT_TRUE(std::filesystem::exists(path));  // a case still reads it
    EXPECT_EQ(keeper.bytes_kept_in(d), 0u);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  // A keeper that goes removes what it kept.
  {
    PatternFileKeeper scoped;
    path = scoped.file(d, kBytes, kSeed).file->path();
    EXPECT_TRUE(std::filesystem::exists(path));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(files_in(dir.path()), 0u);
}

}  // namespace
}  // namespace pathbench::test_pattern_file_keeper
