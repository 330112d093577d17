#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "fake_root.hpp"
#include "inventory/sysfs.hpp"

namespace pathbench::test_sysfs {
namespace {

std::string read_fixture(const std::string& name) { return read_fixture_text("proc/" + name); }

constexpr std::uint64_t kKiB = 1024;

using FakeRoot = FakeRootTest;

TEST(Meminfo, ParsesTheFieldsWeNeedIntoBytes) {
  const MemInfo info = parse_meminfo(read_fixture("meminfo"));
  EXPECT_EQ(info.mem_total_bytes, 131890360 * kKiB);
  EXPECT_EQ(info.mem_available_bytes, 127520932 * kKiB);
  EXPECT_EQ(info.hugepages_total, 512u);  // a count, not kB
  EXPECT_EQ(info.hugepages_free, 500u);
  EXPECT_EQ(info.hugepage_bytes, 2048 * kKiB);
}

TEST(Meminfo, MissingKeysStayZero) {
  const MemInfo info = parse_meminfo("MemTotal: 1000 kB\n");
  EXPECT_EQ(info.mem_total_bytes, 1000 * kKiB);
  EXPECT_EQ(info.mem_available_bytes, 0u);
  EXPECT_EQ(info.hugepage_bytes, 0u);
  EXPECT_EQ(parse_meminfo("").mem_total_bytes, 0u);
}

TEST(Meminfo, BadValueNamesTheKey) {
  try {
    parse_meminfo("MemTotal: 1000 kB\nMemAvailable: lots kB\n");
    FAIL() << "accepted a non-numeric value";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("MemAvailable"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_meminfo("Hugepagesize: 2048 MB\n"), std::invalid_argument);
}

TEST(BracketedChoice, PicksTheSelectedMode) {
  EXPECT_EQ(parse_bracketed_choice(read_fixture("thp_enabled")), "madvise");
  EXPECT_EQ(parse_bracketed_choice(read_fixture("thp_defrag")), "madvise");
  EXPECT_EQ(parse_bracketed_choice("[always] madvise never\n"), "always");
  EXPECT_EQ(parse_bracketed_choice("always madvise [never]"), "never");
  EXPECT_EQ(parse_bracketed_choice("always defer [defer+madvise] madvise never"), "defer+madvise");
  EXPECT_EQ(parse_bracketed_choice("always madvise never"), "");
  EXPECT_EQ(parse_bracketed_choice(""), "");
}

TEST(ProcStatus, ReadsAllowedCpusAndMems) {
  const ProcStatus status = parse_proc_status(read_fixture("status"));
  EXPECT_EQ(status.cpus_allowed,
            (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23}));
  EXPECT_EQ(status.mems_allowed, (std::vector<int>{0}));
}

TEST(ProcStatus, MalformedListThrows) {
  EXPECT_THROW(parse_proc_status("Cpus_allowed_list:\t0-x\n"), std::invalid_argument);
}

TEST(CpuModel, X86ModelName) {
  EXPECT_EQ(parse_cpu_model(read_fixture("cpuinfo_x86")), "Intel(R) Xeon(R) Platinum 8480+");
}

TEST(CpuModel, Aarch64FromImplementerAndPart) {
  EXPECT_EQ(parse_cpu_model(read_fixture("cpuinfo_aarch64")), "ARM Neoverse-V2");
  EXPECT_EQ(parse_cpu_model("CPU implementer\t: 0x61\nCPU part\t: 0x022\n"),
            "ARM implementer 0x61 part 0x022");
}

TEST(CpuModel, OtherArchitecturesAndNothing) {
  EXPECT_EQ(parse_cpu_model("processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\n"),
            "POWER9 (architected), altivec supported");
  EXPECT_EQ(parse_cpu_model("processor : 0\n"), "");
  // "cpu family" / "cpu MHz" must not be mistaken for the model.
  EXPECT_EQ(parse_cpu_model("cpu family\t: 6\ncpu MHz\t\t: 2000.0\nmodel name\t: X\n"), "X");
}

TEST(ParseInt, AcceptsOneIntegerOnly) {
  EXPECT_EQ(parse_int("1\n"), 1);
  EXPECT_EQ(parse_int("-1\n"), -1);
  EXPECT_EQ(parse_int(" 0 "), 0);
  EXPECT_FALSE(parse_int("").has_value());
  EXPECT_FALSE(parse_int("1 2").has_value());
  EXPECT_FALSE(parse_int("on").has_value());
}

TEST_F(FakeRoot, ReadersUseTheRootPrefix) {
  write("proc/meminfo", read_fixture("meminfo"));
  write("proc/self/status", read_fixture("status"));
  write("proc/cpuinfo", read_fixture("cpuinfo_x86"));
  write("proc/sys/kernel/numa_balancing", "1\n");
  write("sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
  write("sys/kernel/mm/transparent_hugepage/defrag",
        "always defer defer+madvise madvise [never]\n");
  write("sys/class/dmi/id/bios_vendor", "American Megatrends International, LLC.\n");
  write("sys/class/dmi/id/bios_version", "2.1.V1\n");
  write("sys/class/dmi/id/bios_date", "03/14/2024\n");
  write("sys/devices/system/cpu/online", "0-15\n");

  EXPECT_EQ(read_meminfo(root_).hugepages_free, 500u);
  EXPECT_EQ(read_proc_self_status(root_).mems_allowed, (std::vector<int>{0}));
  EXPECT_EQ(read_cpu_model(root_), "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(read_numa_balancing(root_), 1);
  EXPECT_EQ(read_thp_enabled(root_), "always");
  EXPECT_EQ(read_thp_defrag(root_), "never");
  const DmiBios bios = read_dmi_bios(root_);
  EXPECT_EQ(bios.vendor, "American Megatrends International, LLC.");
  EXPECT_EQ(bios.version, "2.1.V1");
  EXPECT_EQ(bios.date, "03/14/2024");
  EXPECT_EQ(read_online_cpus(root_).size(), 16u);
}

TEST_F(FakeRoot, MissingFilesGiveEmptyValuesNotErrors) {
  EXPECT_EQ(read_meminfo(root_).mem_total_bytes, 0u);
  EXPECT_TRUE(read_proc_self_status(root_).cpus_allowed.empty());
  EXPECT_EQ(read_cpu_model(root_), "");
  EXPECT_FALSE(read_numa_balancing(root_).has_value());
  EXPECT_EQ(read_thp_enabled(root_), "");
  const DmiBios bios = read_dmi_bios(root_);
  EXPECT_EQ(bios.vendor, "");
  EXPECT_EQ(bios.version, "");
  EXPECT_EQ(bios.date, "");
  EXPECT_TRUE(read_online_cpus(root_).empty());
  EXPECT_TRUE(read_sysfs_numa_nodes(root_).empty());
  EXPECT_FALSE(read_pci_numa_node("0000:19:00.0", root_).has_value());
  EXPECT_TRUE(read_pci_local_cpus("0000:19:00.0", root_).empty());
}

TEST_F(FakeRoot, NumaNodesFromSysfs) {
  write("sys/devices/system/node/node1/cpulist", "56-111,168-223\n");
  write("sys/devices/system/node/node1/meminfo",
        "Node 1 MemTotal:       1056763288 kB\nNode 1 MemFree:        1000000000 kB\n");
  write("sys/devices/system/node/node0/cpulist", "0-55,112-167\n");
  write("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       1055853940 kB\n");
  write("sys/devices/system/node/node2/cpulist", "\n");  // memory-only (CXL)
  write("sys/devices/system/node/node2/meminfo", "Node 2 MemTotal:       268435456 kB\n");
  write("sys/devices/system/node/online", "0-2\n");  // not a node directory

  const auto nodes = read_sysfs_numa_nodes(root_);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].id, 0);
  EXPECT_EQ(nodes[0].cpus.size(), 112u);
  EXPECT_EQ(nodes[0].memory_bytes, 1055853940 * kKiB);
  EXPECT_EQ(nodes[1].id, 1);
  EXPECT_EQ(nodes[1].cpus.front(), 56);
  EXPECT_EQ(nodes[1].memory_bytes, 1056763288 * kKiB);
  EXPECT_EQ(nodes[2].id, 2);
  EXPECT_TRUE(nodes[2].cpus.empty());
  EXPECT_EQ(nodes[2].memory_bytes, 268435456 * kKiB);
}

TEST_F(FakeRoot, PciLocalityFiles) {
  write("sys/bus/pci/devices/0000:19:00.0/numa_node", "1\n");
  write("sys/bus/pci/devices/0000:19:00.0/local_cpulist", "56-111,168-223\n");
  write("sys/bus/pci/devices/0000:65:00.0/numa_node", "-1\n");
  write("sys/bus/pci/devices/0000:65:00.0/local_cpus", "ff\n");

  // nvidia-smi's spelling reaches the same directory.
  EXPECT_EQ(read_pci_numa_node("00000000:19:00.0", root_), 1);
  EXPECT_EQ(read_pci_local_cpus("0000:19:00.0", root_).size(), 112u);
  // -1: the firmware gave no locality.
  EXPECT_FALSE(read_pci_numa_node("0000:65:00.0", root_).has_value());
  // Without local_cpulist the mask is used.
  EXPECT_EQ(read_pci_local_cpus("0000:65:00.0", root_), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  // A malformed id never becomes a path.
  EXPECT_FALSE(read_pci_numa_node("../../../etc/passwd", root_).has_value());
}

TEST(LiveSystem, ReadsThisMachine) {
  EXPECT_GT(read_meminfo().mem_total_bytes, 0u);
  EXPECT_FALSE(read_proc_self_status().cpus_allowed.empty());
  EXPECT_FALSE(read_online_cpus().empty());
  EXPECT_EQ(kernel_description().rfind("Linux ", 0), 0u) << kernel_description();
  EXPECT_FALSE(host_name().empty());
  EXPECT_GT(memlock_limit_bytes(), 0u);
}

}  // namespace
}  // namespace pathbench::test_sysfs
