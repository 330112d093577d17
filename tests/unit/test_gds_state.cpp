#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "core/gds_state.hpp"
#include "fake_root.hpp"

namespace pathbench::test_gds_state {
namespace {

// Unsets a variable for the test's scope and puts the caller's value back.
class ScopedUnsetEnv {
 public:
  explicit ScopedUnsetEnv(const char* name) : name_(name) {
    if (const char* v = ::getenv(name)) saved_ = v;
    ::unsetenv(name);
  }
  ~ScopedUnsetEnv() {
    if (saved_) {
      ::setenv(name_, saved_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedUnsetEnv(const ScopedUnsetEnv&) = delete;
  ScopedUnsetEnv& operator=(const ScopedUnsetEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

constexpr const char* kCufileJson = R"({
    // "allow_compat_mode": false in a comment line above the real key is not the setting
    "properties": {
            "max_direct_io_size_kb" : 16384,
            "allow_compat_mode" :   true,
            "gds_rdma_write_support" : true
    }
})";

TEST(GdsCompatMode, ReadFromTheKeyOfACufileJson) {
  EXPECT_EQ(compat_mode_in_cufile_json(R"({"properties": {"allow_compat_mode": true}})"),
            "allowed");
  EXPECT_EQ(compat_mode_in_cufile_json("\"allow_compat_mode\":\n\tfalse,"), "not allowed");
  EXPECT_EQ(compat_mode_in_cufile_json(R"({"allow_compat_mode": "yes"})"), "");
  EXPECT_EQ(compat_mode_in_cufile_json(R"({"allow_compat_mode": )"), "");
  EXPECT_EQ(compat_mode_in_cufile_json(R"({"allow_compat_mode"})"), "");
  EXPECT_EQ(compat_mode_in_cufile_json("{}"), "");
  // Commented-out settings are not settings; a string holding "//" is not a comment.
  EXPECT_EQ(compat_mode_in_cufile_json("{\"logdir\": \"//x\", // \"allow_compat_mode\": true\n"
                                       "\"allow_compat_mode\": false}"),
            "not allowed");
  EXPECT_EQ(compat_mode_in_cufile_json(
                "/* \"allow_compat_mode\": false */ {\"allow_compat_mode\": true}"),
            "allowed");
  EXPECT_EQ(compat_mode_in_cufile_json("// \"allow_compat_mode\": true"), "");
  EXPECT_EQ(compat_mode_in_cufile_json("{\"allow_compat_mode\": true} /* unterminated"), "allowed");
  EXPECT_EQ(compat_mode_in_cufile_json("/* unterminated \"allow_compat_mode\": true"), "");
}

class GdsRoot : public FakeRootTest {
 protected:
  ScopedUnsetEnv compat_{"CUFILE_ALLOW_COMPAT_MODE"};
  ScopedUnsetEnv json_{"CUFILE_ENV_PATH_JSON"};
};

TEST_F(GdsRoot, AnEmptyNodeHasNoModuleAndNoConfiguredMode) {
  const GdsState s = read_gds_node_state(root_);
  EXPECT_FALSE(s.nvidia_fs);
  EXPECT_EQ(s.nvidia_fs_where, "");
  EXPECT_EQ(s.compat_mode, "");
  EXPECT_EQ(s.compat_source, "");
}

TEST_F(GdsRoot, TheModuleIsSeenInProcOrSys) {
  write("sys/module/nvidia_fs/version", "2.20.5\n");
  GdsState s = read_gds_node_state(root_);
  EXPECT_TRUE(s.nvidia_fs);
  EXPECT_EQ(s.nvidia_fs_where, "/sys/module/nvidia_fs");
  write("proc/driver/nvidia-fs/stats", "GDS Version: 1.0\n");
  s = read_gds_node_state(root_);
  EXPECT_EQ(s.nvidia_fs_where, "/proc/driver/nvidia-fs");
}

TEST_F(GdsRoot, TheModeComesFromEtcCufileJsonThenThePathVariableThenTheModeVariable) {
  write("etc/cufile.json", kCufileJson);
  GdsState s = read_gds_node_state(root_);
  EXPECT_EQ(s.compat_mode, "allowed");
  EXPECT_EQ(s.compat_source, "/etc/cufile.json");

  write("elsewhere/cufile.json", R"({"properties": {"allow_compat_mode": false}})");
  const std::string other = (root_ / "elsewhere/cufile.json").string();
  ::setenv("CUFILE_ENV_PATH_JSON", other.c_str(), 1);
  s = read_gds_node_state(root_);
  EXPECT_EQ(s.compat_mode, "not allowed");
  EXPECT_EQ(s.compat_source, other);

  ::setenv("CUFILE_ALLOW_COMPAT_MODE", "true", 1);
  s = read_gds_node_state(root_);
  EXPECT_EQ(s.compat_mode, "allowed");
  EXPECT_EQ(s.compat_source, "CUFILE_ALLOW_COMPAT_MODE");
  ::setenv("CUFILE_ALLOW_COMPAT_MODE", "0", 1);
  EXPECT_EQ(read_gds_node_state(root_).compat_mode, "not allowed");
}

TEST_F(GdsRoot, AMissingPathVariableFileLeavesTheModeUnreported) {
  write("etc/cufile.json", kCufileJson);
  ::setenv("CUFILE_ENV_PATH_JSON", (root_ / "absent.json").c_str(), 1);
  EXPECT_EQ(read_gds_node_state(root_).compat_mode, "");
}

TEST(GdsState, DescribeSaysWhatWasFound) {
  GdsState s;
  s.library = "libcufile.so.0: cannot open shared object file: No such file or directory";
  EXPECT_EQ(describe_gds_state(s),
            "libcufile.so.0 not found (libcufile.so.0: cannot open shared object file: No such "
            "file or directory); nvidia-fs module not loaded (no /proc/driver/nvidia-fs or "
            "/sys/module/nvidia_fs)");
  s = GdsState{true,      "libcufile.so.0",  true, "/proc/driver/nvidia-fs",
               "allowed", "/etc/cufile.json"};
  EXPECT_EQ(describe_gds_state(s),
            "libcufile found (libcufile.so.0); nvidia-fs module loaded (/proc/driver/nvidia-fs); "
            "compatibility mode allowed (/etc/cufile.json)");
}

TEST(GdsState, TheLibraryProbeAgreesWithDlopen) {
  // Whatever this machine has: found with the name, or not found with dlopen's reason.
  const GdsState s = read_gds_state();
  if (s.library_found) {
    EXPECT_EQ(s.library, "libcufile.so.0");
  } else {
    EXPECT_NE(s.library.find("libcufile"), std::string::npos) << s.library;
  }
}

}  // namespace
}  // namespace pathbench::test_gds_state
