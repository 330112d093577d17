#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include "tests/unit/source_paths.hpp"

namespace pathbench::testing {

// A captured nvidia-smi output under tests/fixtures/nvidia-smi/: its path (for a fake's script)
// and its text (for a parser).
inline std::string nvidia_smi_fixture_path(const std::string& name) {
  return std::string(PATHBENCH_FIXTURES) + "/nvidia-smi/" + name;
}

inline std::string read_nvidia_smi_fixture(const std::string& name) {
  std::ifstream in(nvidia_smi_fixture_path(name), std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Puts a fake nvidia-smi (a shell script with `script_body`) first on PATH for the lifetime of
// the object, so inventory code can be tested end to end without a GPU.
class FakeNvidiaSmi {
 public:
  explicit FakeNvidiaSmi(const std::string& script_body) {
    dir_ = std::filesystem::temp_directory_path() /
           ("pathbench-fake-smi-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const auto script = dir_ / "nvidia-smi";
    std::ofstream(script) << "#!/bin/sh\n" << script_body << "\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    const char* path = std::getenv("PATH");
    saved_path_ = path != nullptr ? path : "";
    ::setenv("PATH", (dir_.string() + ":" + saved_path_).c_str(), 1);
  }
  FakeNvidiaSmi(const FakeNvidiaSmi&) = delete;
  FakeNvidiaSmi& operator=(const FakeNvidiaSmi&) = delete;
  ~FakeNvidiaSmi() {
    ::setenv("PATH", saved_path_.c_str(), 1);
    std::filesystem::remove_all(dir_);
  }

 private:
  std::filesystem::path dir_;
  std::string saved_path_;
};

}  // namespace pathbench::testing
