// A throw-away root directory laid out like / for the readers that take a root (sysfs, IOMMU,
// run environment), and the text of a fixture under tests/fixtures/.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include "tests/unit/source_paths.hpp"

namespace pathbench {

inline std::string read_fixture_text(const std::string& relative) {
  const std::string path = std::string(PATHBENCH_FIXTURES) + "/" + relative;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class FakeRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("pathbench-root-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void write(const std::string& relative, const std::string& content) {
    const auto path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << content;
  }

  std::filesystem::path root_;
};

}  // namespace pathbench
