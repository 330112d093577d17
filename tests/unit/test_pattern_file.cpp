// The storage family's host side: the pattern file (written, verified, a corrupted byte and a
// swapped chunk caught, sizes that are no multiple of the block), O_DIRECT's arithmetic and a
// real O_DIRECT read by it, the page-cache probes, and the storage location probe.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "measure/pattern.hpp"
#include "measure/pattern_file.hpp"
#include "placement/direct_io.hpp"
#include "placement/file_handle.hpp"
#include "placement/page_cache.hpp"
#include "placement/storage_location.hpp"
#include "temp_dir.hpp"

namespace pathbench::test_pattern_file {
namespace {

constexpr std::uint64_t kSeed = 0x1234;

std::vector<std::byte> read_all(const std::string& path) {
  const UniqueFd fd = open_file(path, O_RDONLY, "test");
  struct stat st {};
  EXPECT_EQ(::fstat(fd.get(), &st), 0);
  std::vector<std::byte> data(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::pread(fd.get(), data.data() + done, data.size() - done, done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  EXPECT_EQ(done, data.size());
  return data;
}

std::string failure_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const CaseFailure& e) {
    return e.what();
  }
  return {};
}

TEST(PatternFile, WritesARealFileThatVerifiesAndIsRemovedAfter) {
  testing::TempDir dir;
  const std::string sub = (dir.path() / "a" / "b").string();  // created on demand
  std::string path;
  const std::uint64_t bytes = (std::uint64_t{3} << 20) + 123;  // pieces and a ragged end
  {
    const PatternFile file(sub, bytes, kSeed);
    path = file.path();
    EXPECT_EQ(std::filesystem::path(path).parent_path(), std::filesystem::path(sub));
    EXPECT_EQ(std::filesystem::file_size(path), bytes);
    EXPECT_NO_THROW(verify_pattern_file(path, bytes, kSeed));
    const auto data = read_all(path);
    EXPECT_NO_THROW(verify_file_image(data, bytes, kSeed, "image"));
    // The pattern is the one measure/pattern.hpp fills: the same bytes the device checks use.
    std::vector<std::byte> expected(bytes);
    fill_pattern(expected, kSeed);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), expected.begin()));
    // Another seed is another file.
    EXPECT_FALSE(failure_of([&] { verify_pattern_file(path, bytes, kSeed + 1); }).empty());
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(PatternFile, OneCorruptedByteIsCaughtInTheImageAndOnDisk) {
  testing::TempDir dir;
  const std::uint64_t bytes = std::uint64_t{1} << 20;
  const PatternFile file(dir.path().string(), bytes, kSeed);
  auto image = read_all(file.path());
  const std::size_t at = 777777;
  image[at] ^= std::byte{0x01};
  const std::string why = failure_of([&] { verify_file_image(image, bytes, kSeed, "dest"); });
  EXPECT_NE(why.find("dest"), std::string::npos) << why;
  EXPECT_NE(why.find(std::to_string(at)), std::string::npos) << why;

  const UniqueFd fd = open_file(file.path(), O_WRONLY, "corrupt");
  const std::byte bad = image[at];
  ASSERT_EQ(::pwrite(fd.get(), &bad, 1, at), 1);
  const std::string on_disk = failure_of([&] { verify_pattern_file(file.path(), bytes, kSeed); });
  EXPECT_NE(on_disk.find(std::to_string(at)), std::string::npos) << on_disk;
}

TEST(PatternFile, ASwappedChunkIsCaught) {
  testing::TempDir dir;
  const std::uint64_t chunk = 64 << 10, bytes = 4 * chunk;
  const PatternFile file(dir.path().string(), bytes, kSeed);
  auto image = read_all(file.path());
  // Chunks 1 and 2 delivered in each other's place: every byte is a pattern byte, misplaced.
  std::swap_ranges(image.begin() + chunk, image.begin() + 2 * chunk, image.begin() + 2 * chunk);
  const std::string why = failure_of([&] { verify_file_image(image, bytes, kSeed, "dest"); });
  EXPECT_NE(why.find(std::to_string(chunk)), std::string::npos) << why;
}

TEST(PatternFile, ASizeThatIsNoMultipleOfTheBlockVerifiesAndAShortImageFails) {
  testing::TempDir dir;
  for (const std::uint64_t bytes : {std::uint64_t{1}, std::uint64_t{4095}, std::uint64_t{10001}}) {
    const PatternFile file(dir.path().string(), bytes, kSeed);
    EXPECT_EQ(std::filesystem::file_size(file.path()), bytes);
    EXPECT_NO_THROW(verify_pattern_file(file.path(), bytes, kSeed)) << bytes;
    auto image = read_all(file.path());
    image.pop_back();
    EXPECT_FALSE(failure_of([&] { verify_file_image(image, bytes, kSeed, "d"); }).empty());
    EXPECT_FALSE(failure_of([&] { verify_pattern_file(file.path(), bytes + 1, kSeed); }).empty());
  }
}

TEST(DirectIo, AlignmentArithmetic) {
  EXPECT_EQ(round_up_to(0, 4096), 0u);
  EXPECT_EQ(round_up_to(1, 4096), 4096u);
  EXPECT_EQ(round_up_to(4096, 4096), 4096u);
  EXPECT_EQ(round_up_to(4097, 4096), 8192u);
  EXPECT_TRUE(is_aligned_to(8192, kDirectIoAlignment));
  EXPECT_FALSE(is_aligned_to(5000, kDirectIoAlignment));
  alignas(4096) static std::byte page[8192];
  EXPECT_TRUE(is_aligned_address(page, 4096));
  EXPECT_FALSE(is_aligned_address(page + 8, 4096));
}

TEST(DirectIo, ChunksCoverTheFileOnceWithAlignedOffsetsAndLengths) {
  for (const std::uint64_t bytes : {std::uint64_t{8} << 20, (std::uint64_t{8} << 20) + 100,
                                    std::uint64_t{5000}, std::uint64_t{4096}}) {
    const std::uint64_t chunk = 1 << 20;
    const std::uint64_t n = chunk_count(bytes, chunk);
    std::uint64_t covered = 0;
    for (std::uint64_t k = 0; k < n; ++k) {
      const FileChunk c = file_chunk(k, bytes, chunk);
      EXPECT_EQ(c.offset, covered);
      EXPECT_TRUE(is_aligned_to(c.offset, kDirectIoAlignment));
      EXPECT_TRUE(is_aligned_to(c.read_length, kDirectIoAlignment));
      EXPECT_GE(c.read_length, c.bytes);
      EXPECT_LT(c.read_length - c.bytes, kDirectIoAlignment);
      EXPECT_LE(c.read_length, round_up_to(chunk, kDirectIoAlignment));
      covered += c.bytes;
    }
    EXPECT_EQ(covered, bytes);
    EXPECT_EQ(file_chunk(n, bytes, chunk).bytes, 0u);
  }
  EXPECT_EQ(chunk_count(0, 4096), 0u);
  EXPECT_EQ(chunk_count(10, 0), 0u);
}

// A real O_DIRECT read of a file with a ragged end, by the chunk plan: the rounded last read is
// cut short at end of file and the pieces reassemble the pattern.
TEST(DirectIo, AnODirectReadByTheChunkPlanReassemblesTheFile) {
  testing::TempDir dir;
  const std::uint64_t bytes = (std::uint64_t{2} << 20) + 1234, chunk = 512 << 10;
  const PatternFile file(dir.path().string(), bytes, kSeed);
  const int raw = ::open(file.path().c_str(), O_RDONLY | O_DIRECT);
  if (raw < 0 && errno == EINVAL) GTEST_SKIP() << "this file system has no O_DIRECT";
  ASSERT_GE(raw, 0);
  const UniqueFd fd(raw);
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  const std::unique_ptr<std::byte, Free> buffer(
      static_cast<std::byte*>(std::aligned_alloc(kDirectIoAlignment, round_up_to(chunk, 4096))));
  std::vector<std::byte> image(bytes);
  for (std::uint64_t k = 0; k < chunk_count(bytes, chunk); ++k) {
    const FileChunk c = file_chunk(k, bytes, chunk);
    const ssize_t n = ::pread(fd.get(), buffer.get(), c.read_length, c.offset);
    ASSERT_EQ(n, static_cast<ssize_t>(c.bytes)) << "chunk " << k;
    std::copy_n(buffer.get(), c.bytes, image.begin() + c.offset);
  }
  EXPECT_NO_THROW(verify_file_image(image, bytes, kSeed, "O_DIRECT image"));
}

TEST(PageCache, ReadingMakesTheFileResidentAndDroppingEvictsIt) {
  testing::TempDir dir;
  const StorageLocation loc = probe_storage(dir.path().string());
  const std::uint64_t bytes = std::uint64_t{8} << 20;
  const PatternFile file(dir.path().string(), bytes, kSeed);
  const UniqueFd fd = open_file(file.path(), O_RDONLY, "test");
  read_through_page_cache(fd.get(), bytes);
  EXPECT_GE(resident_fraction(fd.get(), bytes), 0.99);
  if (loc.memory_backed) GTEST_SKIP() << loc.fs_type << " keeps its files in memory";
  drop_from_page_cache(fd.get());
  EXPECT_LE(resident_fraction(fd.get(), bytes), 0.01) << loc.fs_type;
  read_through_page_cache(fd.get(), bytes);
  EXPECT_GE(resident_fraction(fd.get(), bytes), 0.99);
  EXPECT_THROW(read_through_page_cache(fd.get(), bytes + 1), CaseFailure);
}

TEST(StorageLocation, ProbesTheNearestExistingFolder) {
  testing::TempDir dir;
  const std::string missing = (dir.path() / "not" / "yet").string();
  const StorageLocation loc = probe_storage(missing);
  EXPECT_EQ(loc.dir, missing);
  EXPECT_EQ(loc.probed, std::filesystem::canonical(dir.path()).string());
  EXPECT_FALSE(loc.fs_type.empty());
  EXPECT_GT(loc.free_bytes, 0u);
  EXPECT_FALSE(loc.mount_point.empty());
}

TEST(StorageLocation, NamesFileSystemsByMagic) {
  EXPECT_EQ(filesystem_name(0x01021994), "tmpfs");
  EXPECT_EQ(filesystem_name(0xEF53), "ext4");
  EXPECT_EQ(filesystem_name(0x58465342), "xfs");
  EXPECT_FALSE(filesystem_name(0x12345678));
}

TEST(StorageLocation, FindsTheMountOfAPathInMountinfo) {
  const std::string text =
      "22 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
      "30 22 0:26 / /tmp rw,nosuid shared:5 - tmpfs tmpfs rw,size=1g\n"
      "31 22 259:2 / /mnt/nvme rw,relatime shared:7 master:3 - xfs /dev/nvme0n1p2 rw\n"
      "32 22 259:3 / /mnt/with\\040space rw - ext4 /dev/nvme1n1 rw\n"
      "33 22 259:4 / /mnt/nvmeX rw - ext4 /dev/sdb rw\n";
  auto m = mount_of(text, "/mnt/nvme/data/x");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->mount_point, "/mnt/nvme");
  EXPECT_EQ(m->fs_type, "xfs");
  EXPECT_EQ(m->source, "/dev/nvme0n1p2");
  m = mount_of(text, "/tmp");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->fs_type, "tmpfs");
  m = mount_of(text, "/mnt/with space/f");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->source, "/dev/nvme1n1");
  m = mount_of(text, "/home/user");  // only the root mount holds it
  ASSERT_TRUE(m);
  EXPECT_EQ(m->source, "/dev/vda1");
  EXPECT_FALSE(mount_of("garbage line\n", "/x"));
}

}  // namespace
}  // namespace pathbench::test_pattern_file
