// The PCIe path reader on recorded sysfs trees: a GPU and a NIC behind one switch with an NVMe
// drive on another root port, a GPU straight on a root port, ACS control read from configuration
// space (and not readable without root), and what "what changed" says when the path changes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compare/context_changes.hpp"
#include "inventory/pcie_paths.hpp"
#include "temp_dir.hpp"

namespace pathbench::test_pcie_paths {
namespace {

namespace fs = std::filesystem;

// A sysfs tree under a temporary root: devices below /sys/devices/pciDDDD:BB/… with their class,
// and the /sys/bus/pci/devices links the kernel makes.
class SysfsTree {
 public:
  // `chain`: "pci0000:00/0000:00:01.0/0000:01:00.0/…", the device last.
  void device(const std::string& chain, const std::string& pci_class) {
    const fs::path dir = root() / "sys/devices" / chain;
    fs::create_directories(dir);
    std::ofstream(dir / "class") << pci_class << "\n";
    const std::string bdf = dir.filename().string();
    fs::create_directories(root() / "sys/bus/pci/devices");
    const fs::path link = root() / "sys/bus/pci/devices" / bdf;
    if (!fs::exists(link)) fs::create_directory_symlink("../../../devices/" + chain, link);
  }
  // Every bridge of `chain` as a device too (class 0x060400).
  void bridges(const std::string& chain) {
    std::string prefix;
    std::size_t start = 0;
    while (true) {
      const std::size_t slash = chain.find('/', start);
      if (slash == std::string::npos) break;
      prefix = chain.substr(0, slash);
      if (prefix.find('/') != std::string::npos) device(prefix, "0x060400");
      start = slash + 1;
    }
  }
  void config(const std::string& bdf, const std::string& bytes) {
    std::ofstream(root() / "sys/bus/pci/devices" / bdf / "config", std::ios::binary) << bytes;
  }
  const fs::path& root() const { return tmp_.path(); }

 private:
  testing::TempDir tmp_{"pathbench_pcie"};
};

// A 4 KiB configuration space with one extended capability at 0x100: ACS (id 0x000d) whose
// control register (at +6) is `control`, or another capability when `acs` is false.
std::string config_space(bool acs, unsigned control) {
  std::string bytes(4096, '\0');
  const unsigned header = (acs ? 0x000du : 0x0001u) | (1u << 16);  // version 1, no next
  for (int i = 0; i < 4; ++i) bytes[0x100 + i] = static_cast<char>((header >> (8 * i)) & 0xff);
  bytes[0x106] = static_cast<char>(control & 0xff);
  bytes[0x107] = static_cast<char>((control >> 8) & 0xff);
  return bytes;
}

constexpr const char* kGpu = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0";
constexpr const char* kNic = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0";
constexpr const char* kNvme = "pci0000:00/0000:00:03.0/0000:05:00.0";
constexpr const char* kOtherSocket = "pci0000:80/0000:80:01.0/0000:81:00.0";

TEST(PciePaths, ParsesTheFunctionsOfASysfsPath) {
  const auto p = parse_pcie_device_path(kGpu);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->root_complex, "pci0000:00");
  EXPECT_EQ(p->chain, (std::vector<std::string>{"0000:00:01.0", "0000:01:00.0", "0000:02:08.0",
                                                "0000:03:00.0"}));
  // A driver's object below the device ends the chain.
  EXPECT_EQ(parse_pcie_device_path("pci0000:00/0000:00:01.0/0000:01:00.0/drm")->chain.size(), 2u);
  EXPECT_FALSE(parse_pcie_device_path("platform/serial8250"));
  EXPECT_FALSE(parse_pcie_device_path("pci0000:00"));
}

TEST(PciePaths, RelationsFollowTheDeepestSharedBridge) {
  const auto gpu = *parse_pcie_device_path(kGpu);
  EXPECT_EQ(pcie_relation(gpu, *parse_pcie_device_path(kNic)), "same PCIe switch");
  EXPECT_EQ(pcie_relation(gpu, *parse_pcie_device_path(kNvme)), "same host bridge");
  EXPECT_EQ(pcie_relation(gpu, *parse_pcie_device_path(kOtherSocket)), std::nullopt);
  // Two functions of one device straight on a root port share only the root port.
  const auto direct = *parse_pcie_device_path("pci0000:00/0000:00:03.0/0000:05:00.0");
  EXPECT_EQ(pcie_relation(direct, *parse_pcie_device_path("pci0000:00/0000:00:03.0/0000:05:00.1")),
            "same root port");
}

TEST(PciePaths, NeighboursOnARecordedTree) {
  SysfsTree tree;
  tree.bridges(kGpu);
  tree.bridges(kNic);
  tree.bridges(kNvme);
  tree.device(kGpu, "0x030200");
  tree.device(kNic, "0x020700");  // InfiniBand
  tree.device(kNvme, "0x010802");
  tree.device(kOtherSocket, "0x020000");  // another root complex: not a neighbour
  tree.device("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.1", "0x020000");
  const auto gpu = read_pcie_device_path("0000:03:00.0", tree.root());
  ASSERT_TRUE(gpu);
  EXPECT_EQ(gpu->chain.front(), "0000:00:01.0");
  EXPECT_EQ(pcie_neighbors(*gpu, tree.root()),
            (std::vector<std::string>{"nic 0000:04:00.0: same PCIe switch",
                                      "nic 0000:04:00.1: same PCIe switch",
                                      "nvme 0000:05:00.0: same host bridge"}));
  EXPECT_FALSE(read_pcie_device_path("0000:09:00.0", tree.root()));
}

TEST(PciePaths, AcsFromConfigurationSpace) {
  EXPECT_EQ(describe_acs(std::string(256, '\0')),
            "not readable: the kernel shows the extended configuration space (ACS) to root only");
  EXPECT_EQ(
      describe_acs(config_space(true, 0x001d)),
      "ACS control 0x001d: P2P requests and completions redirected to the root complex (RR CR)");
  EXPECT_EQ(describe_acs(config_space(true, 0x0004)),
            "ACS control 0x0004: P2P requests redirected to the root complex (RR)");
  EXPECT_EQ(describe_acs(config_space(true, 0x0000)), "ACS control 0x0000: P2P not redirected");
  EXPECT_EQ(describe_acs(config_space(false, 0)), "no ACS capability");

  SysfsTree tree;
  tree.bridges(kGpu);
  tree.device(kGpu, "0x030200");
  tree.config("0000:00:01.0", config_space(true, 0x0000));
  tree.config("0000:01:00.0", config_space(false, 0));
  tree.config("0000:02:08.0", config_space(true, 0x001d));
  const auto gpu = read_pcie_device_path("0000:03:00.0", tree.root());
  ASSERT_TRUE(gpu);
  EXPECT_EQ(
      pcie_acs_states(*gpu, tree.root()),
      (std::vector<std::string>{
          "0000:00:01.0: ACS control 0x0000: P2P not redirected", "0000:01:00.0: no ACS capability",
          "0000:02:08.0: ACS control 0x001d: P2P requests and completions redirected to "
          "the root complex (RR CR)"}));
}

TEST(PciePaths, WhatChangedNamesAMovedNeighbourAndAnAcsChange) {
  RunContext before, after;
  GpuContext g;
  g.pci_bus_id = std::string("0000:03:00.0");
  g.pcie_neighbors = std::vector<std::string>{"nic 0000:04:00.0: same PCIe switch"};
  g.pcie_acs = std::vector<std::string>{"0000:02:08.0: ACS control 0x0000: P2P not redirected"};
  before.gpus.push_back(g);
  g.pcie_neighbors = std::vector<std::string>{"nic 0000:04:00.0: same host bridge"};
  g.pcie_acs = std::vector<std::string>{
      "0000:02:08.0: ACS control 0x001d: P2P requests and completions redirected to the root "
      "complex (RR CR)"};
  after.gpus.push_back(g);
  std::vector<std::string> texts;
  for (const auto& c : context_changes(before, after)) texts.push_back(c.text());
  ASSERT_EQ(texts.size(), 2u) << ::testing::PrintToString(texts);
  EXPECT_NE(texts[0].find("PCIe neighbours (NICs, NVMe) nic 0000:04:00.0: same PCIe switch → "
                          "nic 0000:04:00.0: same host bridge"),
            std::string::npos)
      << texts[0];
  EXPECT_NE(texts[1].find("ACS on the PCIe path"), std::string::npos) << texts[1];
  // An older result without the fields is not a change.
  RunContext old;
  GpuContext o;
  o.pci_bus_id = std::string("0000:03:00.0");
  old.gpus.push_back(o);
  EXPECT_TRUE(context_changes(old, after).empty());
}

}  // namespace
}  // namespace pathbench::test_pcie_paths
