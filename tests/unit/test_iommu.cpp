#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "fake_root.hpp"
#include "inventory/iommu.hpp"

namespace pathbench::test_iommu {
namespace {

std::string read_fixture(const std::string& name) { return read_fixture_text("proc/" + name); }

TEST(IommuCmdline, KeepsOnlyTheIommuTokensInOrder) {
  EXPECT_EQ(iommu_cmdline_tokens(read_fixture("cmdline_iommu_pt")),
            "intel_iommu=on iommu=pt iommu.strict=0");
  EXPECT_EQ(iommu_cmdline_tokens(read_fixture("cmdline_amd_passthrough")),
            "amd_iommu=on iommu.passthrough=1");
  // After "--" the arguments are init's, not the kernel's.
  EXPECT_EQ(iommu_cmdline_tokens(read_fixture("cmdline_vm")), "");
  EXPECT_EQ(iommu_cmdline_tokens(""), "");
  // Look-alikes are not IOMMU parameters.
  EXPECT_EQ(iommu_cmdline_tokens("noiommu=1 xiommu=pt  iommu=off\t"), "iommu=off");
}

TEST(IommuMode, FollowsTheRules) {
  EXPECT_EQ(classify_iommu("intel_iommu=on iommu=pt", 112), "passthrough");
  EXPECT_EQ(classify_iommu("iommu.passthrough=1", std::nullopt), "passthrough");
  EXPECT_EQ(classify_iommu("iommu.passthrough=0", 40), "on");
  EXPECT_EQ(classify_iommu("intel_iommu=on", 40), "on");
  EXPECT_EQ(classify_iommu("", 0), "off");
  EXPECT_EQ(classify_iommu("", std::nullopt), "unknown");
  EXPECT_EQ(classify_iommu("intel_iommu=on", std::nullopt), "unknown");
}

class IommuRoot : public FakeRootTest {
 protected:
  void cmdline(const std::string& fixture) { write("proc/cmdline", read_fixture(fixture)); }
};

TEST_F(IommuRoot, GroupsMeanOn) {
  cmdline("cmdline_vm");
  for (const char* group : {"0", "1", "17"}) {
    std::filesystem::create_directories(root_ / "sys/kernel/iommu_groups" / group / "devices");
  }
  const IommuState state = read_iommu(root_);
  EXPECT_EQ(state.mode, "on");
  EXPECT_EQ(state.groups, 3);
  EXPECT_EQ(state.cmdline, "");
}

TEST_F(IommuRoot, PassthroughWinsOverGroups) {
  cmdline("cmdline_iommu_pt");
  std::filesystem::create_directories(root_ / "sys/kernel/iommu_groups/0");
  const IommuState state = read_iommu(root_);
  EXPECT_EQ(state.mode, "passthrough");
  EXPECT_EQ(state.groups, 1);
  EXPECT_EQ(state.cmdline, "intel_iommu=on iommu=pt iommu.strict=0");
}

TEST_F(IommuRoot, EmptyGroupDirectoryMeansOff) {
  cmdline("cmdline_vm");
  std::filesystem::create_directories(root_ / "sys/kernel/iommu_groups");
  EXPECT_EQ(read_iommu(root_).mode, "off");
}

TEST_F(IommuRoot, HiddenFilesMeanUnknown) {
  // A container without /sys/kernel and without /proc/cmdline.
  const IommuState state = read_iommu(root_);
  EXPECT_EQ(state.mode, "unknown");
  EXPECT_EQ(state.groups, 0);
  EXPECT_EQ(state.cmdline, "");
  EXPECT_EQ(read_iommu(root_ / "does-not-exist").mode, "unknown");
}

TEST(IommuLive, ReadsThisMachineWithoutThrowing) {
  const IommuState state = read_iommu();
  EXPECT_TRUE(state.mode == "off" || state.mode == "on" || state.mode == "passthrough" ||
              state.mode == "unknown")
      << state.mode;
  EXPECT_GE(state.groups, 0);
}

}  // namespace
}  // namespace pathbench::test_iommu
