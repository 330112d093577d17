#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"

namespace pathbench::test_atomic_file {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "pathbench_atomic_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::vector<std::string> names_in(const fs::path& dir) const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    return names;
  }
  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesExactBytes) {
  const fs::path p = dir_ / "a.bin";
  const std::string content("line one\n\0binary\xff", 17);
  write_file_atomically(p, content);
  EXPECT_EQ(read_text_file(p), content);
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"a.bin"});
}

TEST_F(AtomicFileTest, Overwrites) {
  const fs::path p = dir_ / "result.json";
  write_file_atomically(p, "first, and longer than the second");
  write_file_atomically(p, "second");
  EXPECT_EQ(read_text_file(p), "second");
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"result.json"});
}

TEST_F(AtomicFileTest, CreatesNestedDirectories) {
  const fs::path p = dir_ / "x" / "y" / "z" / "out.json";
  write_file_atomically(p, "{}");
  EXPECT_EQ(read_text_file(p), "{}");
  EXPECT_EQ(names_in(p.parent_path()), std::vector<std::string>{"out.json"});
}

TEST_F(AtomicFileTest, EmptyContent) {
  const fs::path p = dir_ / "empty";
  write_file_atomically(p, "");
  EXPECT_TRUE(fs::exists(p));
  EXPECT_EQ(fs::file_size(p), 0u);
}

TEST_F(AtomicFileTest, ReadableByOthers) {
  // mkstemp creates 0600; a result file is meant to be shared (CI artefacts, fleet collection).
  const fs::path p = dir_ / "perm.json";
  write_file_atomically(p, "{}");
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST_F(AtomicFileTest, FailureLeavesNoTempFile) {
  // Renaming onto an existing directory fails after the temp file was written.
  const fs::path p = dir_ / "occupied";
  fs::create_directory(p);
  fs::create_directory(p / "child");  // non-empty, so rename() cannot replace it
  EXPECT_ANY_THROW(write_file_atomically(p, "data"));
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"occupied"});
}

// `run -o /dev/null` as root used to replace the device node with a regular file: an output
// that exists and is not a regular file is refused, and left as it was.
TEST_F(AtomicFileTest, RefusesFifoAndDirectoryAndLeavesThem) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    write_file_atomically(fifo, "x");
    FAIL() << "a FIFO was replaced";
  } catch (const NotARegularFile& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO, not a regular file"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
  const fs::path sub = dir_ / "sub";
  fs::create_directory(sub);
  EXPECT_THROW(write_file_atomically(sub, "x"), NotARegularFile);
  EXPECT_TRUE(fs::is_directory(sub));
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"pipe", "sub"})) << "no temp file left";
}

TEST_F(AtomicFileTest, FollowsASymlinkAndKeepsIt) {
  fs::create_directory(dir_ / "real");
  write_file_atomically(dir_ / "real" / "result.json", "old");
  fs::create_symlink("real/result.json", dir_ / "link.json");
  write_file_atomically(dir_ / "link.json", "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "link.json")));
  EXPECT_EQ(read_text_file(dir_ / "real" / "result.json"), "new");
  // A dangling link creates its target.
  fs::create_symlink("real/later.json", dir_ / "dangling.json");
  write_file_atomically(dir_ / "dangling.json", "made");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "dangling.json")));
  EXPECT_EQ(read_text_file(dir_ / "real" / "later.json"), "made");
  // A symlink to a FIFO is refused like the FIFO.
  ASSERT_EQ(::mkfifo((dir_ / "real" / "pipe").c_str(), 0600), 0);
  fs::create_symlink("real/pipe", dir_ / "to_pipe");
  EXPECT_THROW(write_file_atomically(dir_ / "to_pipe", "x"), NotARegularFile);
}

// A FIFO given as an input used to hang the run, /dev/zero to be read without end.
TEST_F(AtomicFileTest, ReadRefusesWhatIsNotARegularFileAndWhatIsTooLarge) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(read_text_file(fifo), NotARegularFile);  // returns at once: no writer needed
  EXPECT_THROW(read_text_file("/dev/zero"), NotARegularFile);
  EXPECT_THROW(read_text_file(dir_), NotARegularFile);
  write_file_atomically(dir_ / "big", std::string(1000, 'x'));
  EXPECT_EQ(read_text_file(dir_ / "big", 1000).size(), 1000u);
  try {
    read_text_file(dir_ / "big", 999);
    FAIL() << "a file over the cap was read";
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("1000 bytes, more than the 999"), std::string::npos)
        << e.what();
  }
}

TEST_F(AtomicFileTest, ReadMissingFileThrows) {
  EXPECT_THROW(read_text_file(dir_ / "absent"), SystemError);
}

}  // namespace
}  // namespace pathbench::test_atomic_file
