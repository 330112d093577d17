#include <gtest/gtest.h>

#include <unistd.h>
#include "fake_nvidia_smi.hpp"
#include "inventory_json_errors.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "inventory/fingerprint.hpp"
#include "inventory/hwloc_topology.hpp"
#include "inventory/inventory.hpp"
#include "inventory/machine.hpp"
#include "inventory/nvidia_smi.hpp"
#include "inventory/nvml_library.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_inventory {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

Inventory two_socket_inventory() {
  Inventory inv;
  inv.tool_version = "0.1.0";
  inv.git_sha = "abcdef123456";
  inv.hostname = "gpu-node-3";
  inv.node_type = "NVIDIA H100 80GB HBM3 x2 / PCIe Gen5 x16 / 2 NUMA";
  inv.node_type_derived = true;
  inv.cpu_model = "Intel(R) Xeon(R) Platinum 8480+";
  inv.logical_cpus = 8;
  inv.numa_nodes = {{0, {0, 1, 2, 3}, 256 * kGiB}, {1, {4, 5, 6, 7}, 256 * kGiB}};
  inv.cpuset = {0, 1, 2, 3, 4, 5, 6, 7};
  inv.mems_allowed = {0, 1};
  inv.cpuset_aligned_with_gpu = false;
  inv.thp_enabled = "madvise";
  inv.thp_defrag = "madvise";
  inv.numa_balancing = 0;
  inv.hugepages_total = 16;
  inv.hugepages_free = 12;
  inv.hugepage_bytes = 1 * kGiB;
  inv.mem_total_bytes = 512 * kGiB;
  inv.mem_available_bytes = 500 * kGiB;
  inv.memlock_limit_bytes = std::numeric_limits<std::uint64_t>::max();
  inv.kernel = "Linux 6.8.0-49-generic x86_64";
  inv.bios_vendor = "Dell Inc.";
  inv.bios_version = "2.3.5";
  inv.bios_date = "01/01/2025";
  inv.iommu = IommuState{"passthrough", 112, "intel_iommu=on iommu=pt"};
  inv.gds = GdsState{true, "libcufile.so.0", false, "", "allowed", "/etc/cufile.json"};
  inv.cuda_runtime_version = 13000;
  inv.cuda_driver_version = std::nullopt;
  inv.driver_version = "580.159.04";
  inv.nvidia_smi_status = "ok";
  GpuInventory a;
  a.index = 0;
  a.name = "NVIDIA H100 80GB HBM3";
  a.uuid = "GPU-a";
  a.pci_bus_id = "0000:18:00.0";
  a.pcie_gen_current = 5;
  a.pcie_gen_max = 5;
  a.pcie_width_current = 16;
  a.pcie_width_max = 16;
  a.numa_node = 0;
  a.local_cpus = {0, 1, 2, 3};
  a.clock_sm_mhz = 1980;
  a.clock_mem_max_mhz = 2619;
  a.memory_bytes = 80 * kGiB;
  a.vbios = "96.00.99.00.01";
  a.ecc_mode = "enabled";
  a.persistence_mode = "disabled";
  a.mig_mode = "disabled";
  GpuInventory b = a;
  b.index = 1;
  b.uuid = "GPU-b";
  b.pci_bus_id = "0000:9a:00.0";
  b.numa_node = 1;
  b.local_cpus = {4, 5, 6, 7};
  b.clock_sm_mhz.reset();
  b.ecc_mode.reset();  // "[N/A]"
  b.mig_mode = "enabled";
  inv.gpus = {a, b};
  inv.topo_status = "ok";
  GpuLink link;
  link.from = 0;
  link.to = 1;
  link.type = LinkType::kSys;
  link.peer_access = false;
  link.performance_rank = 0;
  link.native_atomics = false;
  link.param = "host-staged";
  inv.links = {link};
  link.from = 1;
  link.to = 0;
  link.peer_access.reset();
  link.performance_rank.reset();
  link.native_atomics.reset();
  inv.links.push_back(link);
  inv.warnings = {"process CPU set 0-7 is not within GPU 0's local CPUs 0-3"};
  inv.topology_fingerprint = topology_fingerprint(inv);
  return inv;
}

TEST(InventoryJson, RoundTripsEveryField) {
  const Inventory original = two_socket_inventory();
  const nlohmann::ordered_json json = to_json(original);
  const Inventory back = inventory_from_json(nlohmann::json::parse(json.dump()));
  EXPECT_EQ(to_json(back), json);
  // Spot checks that the comparison above is not vacuous.
  EXPECT_EQ(back.gpus.size(), 2u);
  EXPECT_EQ(back.gpus[1].pci_bus_id, "0000:9a:00.0");
  EXPECT_FALSE(back.gpus[1].clock_sm_mhz.has_value());
  EXPECT_EQ(back.gpus[0].clock_sm_mhz, 1980);
  EXPECT_EQ(back.cpuset_aligned_with_gpu, false);
  EXPECT_EQ(back.memlock_limit_bytes, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(back.numa_nodes[1].cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(back.topology_fingerprint, original.topology_fingerprint);
  EXPECT_EQ(topology_fingerprint(back), original.topology_fingerprint);
  EXPECT_EQ(back.topo_status, "ok");
  ASSERT_EQ(back.links.size(), 2u);
  EXPECT_EQ(back.links[0].type, LinkType::kSys);
  EXPECT_EQ(back.links[0].peer_access, false);
  EXPECT_FALSE(back.links[1].peer_access.has_value());
  EXPECT_EQ(back.links[1].param, "host-staged");
  EXPECT_EQ(back.gpus[0].ecc_mode, "enabled");
  EXPECT_EQ(back.gpus[0].persistence_mode, "disabled");
  EXPECT_FALSE(back.gpus[1].ecc_mode.has_value());
  EXPECT_EQ(back.gpus[1].mig_mode, "enabled");
  EXPECT_EQ(back.iommu.mode, "passthrough");
  EXPECT_EQ(back.iommu.groups, 112);
  EXPECT_EQ(back.iommu.cmdline, "intel_iommu=on iommu=pt");
  EXPECT_TRUE(back.gds.library_found);
  EXPECT_EQ(back.gds.library, "libcufile.so.0");
  EXPECT_FALSE(back.gds.nvidia_fs);
  EXPECT_EQ(back.gds.compat_mode, "allowed");
  EXPECT_EQ(back.gds.compat_source, "/etc/cufile.json");
}

TEST(InventoryJson, GpuModesAndIommuAreWrittenWhereExpected) {
  const auto json = to_json(two_socket_inventory());
  EXPECT_EQ(json.at("gpus").at(0).at("ecc_mode"), "enabled");
  EXPECT_EQ(json.at("gpus").at(0).at("persistence_mode"), "disabled");
  EXPECT_EQ(json.at("gpus").at(0).at("mig_mode"), "disabled");
  EXPECT_TRUE(json.at("gpus").at(1).at("ecc_mode").is_null());
  EXPECT_EQ(json.at("iommu"),
            (nlohmann::ordered_json{
                {"mode", "passthrough"}, {"groups", 112}, {"cmdline", "intel_iommu=on iommu=pt"}}));
  EXPECT_EQ(json.at("gds"), (nlohmann::ordered_json{{"library_found", true},
                                                    {"library", "libcufile.so.0"},
                                                    {"nvidia_fs", false},
                                                    {"nvidia_fs_where", ""},
                                                    {"compat_mode", "allowed"},
                                                    {"compat_source", "/etc/cufile.json"}}));
  // An inventory written before these fields existed still reads, with "unknown" and nulls.
  auto old = nlohmann::json::parse(json.dump());
  old.erase("iommu");
  old.erase("gds");
  for (auto& gpu : old["gpus"]) {
    gpu.erase("ecc_mode");
    gpu.erase("persistence_mode");
    gpu.erase("mig_mode");
  }
  const Inventory back = inventory_from_json(old);
  EXPECT_EQ(back.iommu.mode, "unknown");
  EXPECT_EQ(back.iommu.groups, 0);
  EXPECT_FALSE(back.gds.library_found);
  EXPECT_EQ(back.gds.library, "");
  EXPECT_FALSE(back.gpus[0].ecc_mode.has_value());
  EXPECT_FALSE(back.gpus[0].persistence_mode.has_value());
}

TEST(InventoryJson, GpuModesAndIommuAreNotTopology) {
  // State, not layout: flipping them must not make two runs of one node incomparable.
  const Inventory original = two_socket_inventory();
  Inventory changed = original;
  changed.iommu = IommuState{"off", 0, ""};
  changed.gds = GdsState{true, "libcufile.so.0", true, "/proc/driver/nvidia-fs", "", ""};
  changed.gpus[0].ecc_mode = "disabled";
  changed.gpus[0].persistence_mode = "enabled";
  changed.gpus[1].mig_mode.reset();
  EXPECT_EQ(topology_fingerprint(changed), topology_fingerprint(original));
  EXPECT_EQ(topology_canonical_text(changed).find("iommu"), std::string::npos);
  EXPECT_EQ(topology_canonical_text(changed).find("ecc"), std::string::npos);
}

TEST(InventoryJson, OptionalsAreNullAndKeysKeepTheirOrder) {
  const auto json = to_json(two_socket_inventory());
  EXPECT_TRUE(json.at("cuda_driver_version").is_null());
  EXPECT_TRUE(json.at("gpus").at(1).at("clock_sm_mhz").is_null());
  EXPECT_TRUE(json.at("gpus").at(0).at("clock_mem_mhz").is_null());
  EXPECT_EQ(json.at("numa_balancing"), 0);
  EXPECT_EQ(json.begin().key(), "tool_version");
  EXPECT_EQ(json.at("gpus").at(0).begin().key(), "index");
  Inventory no_gpu;
  EXPECT_TRUE(to_json(no_gpu).at("cpuset_aligned_with_gpu").is_null());
  EXPECT_TRUE(to_json(no_gpu).at("gpus").is_array());
  EXPECT_TRUE(to_json(no_gpu).at("links").is_array());
  EXPECT_TRUE(json.at("links").at(1).at("peer_access").is_null());
  EXPECT_TRUE(json.at("links").at(1).at("performance_rank").is_null());
  EXPECT_EQ(json.at("links").at(0).at("peer_access"), false);
  EXPECT_EQ(json.at("links").at(0).begin().key(), "from");
}

TEST(InventoryJson, EmptyInventoryRoundTrips) {
  const Inventory empty;
  EXPECT_EQ(to_json(inventory_from_json(to_json(empty))), to_json(empty));
}

TEST(InventoryJson, WrongTypesNameTheField) {
  auto json = nlohmann::json::parse(to_json(two_socket_inventory()).dump());
  const auto expect_error = testing::expect_inventory_json_error;
  auto bad = json;
  bad["gpus"][1]["pcie_width_max"] = "sixteen";
  expect_error(bad, "/gpus/1/pcie_width_max");
  bad = json;
  bad["mem_total_bytes"] = -1;
  expect_error(bad, "/mem_total_bytes");
  bad = json;
  bad["logical_cpus"] = 3.5;
  expect_error(bad, "/logical_cpus");
  bad = json;
  bad["numa_nodes"][0]["cpus"] = {0, "1"};
  expect_error(bad, "/numa_nodes/0/cpus/1");
  bad = json;
  bad["node_type_derived"] = 1;
  expect_error(bad, "/node_type_derived");
  bad = json;
  bad["links"][1]["nvlinks"] = "18";
  expect_error(bad, "/links/1/nvlinks");
  bad = json;
  bad["gpus"][0]["ecc_mode"] = true;
  expect_error(bad, "/gpus/0/ecc_mode");
  bad = json;
  bad["iommu"]["groups"] = "many";
  expect_error(bad, "/iommu/groups");
  EXPECT_THROW(inventory_from_json(nlohmann::json::array()), std::invalid_argument);
}

TEST(MachineFrom, KeepsNodesWithMemoryTheProcessMayUse) {
  Inventory inv = two_socket_inventory();
  inv.numa_nodes.push_back({2, {}, 0});  // memory-less node: never a placement target
  inv.numa_nodes.insert(inv.numa_nodes.begin(), {3, {}, 64 * kGiB});  // CXL memory, out of order
  inv.cpuset = {1, 2, 5};
  inv.mems_allowed = {0, 1, 3};
  const Machine m = machine_from(inv);
  EXPECT_EQ(m.numa_nodes, (std::vector<int>{0, 1, 3}));
  ASSERT_EQ(m.node_cpus.size(), 3u);
  EXPECT_EQ(m.node_cpus[0], (std::vector<int>{1, 2}));  // intersected with the cpuset
  EXPECT_EQ(m.node_cpus[1], (std::vector<int>{5}));
  EXPECT_TRUE(m.node_cpus[2].empty());
  EXPECT_EQ(m.mem_available_bytes, 500 * kGiB);
  EXPECT_EQ(m.hugetlb_free_pages, 12u);
  EXPECT_EQ(m.hugetlb_page_bytes, 1 * kGiB);
  EXPECT_EQ(m.thp_enabled, "madvise");
  EXPECT_EQ(m.memlock_limit_bytes, std::numeric_limits<std::uint64_t>::max());
  ASSERT_EQ(m.gpus.size(), 2u);
  EXPECT_EQ(m.gpus[1].index, 1);
  EXPECT_EQ(m.gpus[1].pci_bus_id, "0000:9a:00.0");
  EXPECT_EQ(m.gpus[1].numa_node, 1);
  EXPECT_EQ(m.gpus[1].memory_bytes, 80 * kGiB);
  EXPECT_TRUE(m.has_gpu());

  inv.mems_allowed = {1};
  EXPECT_EQ(machine_from(inv).numa_nodes, (std::vector<int>{1}));
}

TEST(MachineFrom, EmptyCpusetAndMemsMeanUnrestricted) {
  Inventory inv = two_socket_inventory();
  inv.cpuset.clear();
  inv.mems_allowed.clear();
  inv.hugepage_bytes = 0;
  inv.cuda_unavailable_reason = "no usable CUDA device";
  const Machine m = machine_from(inv);
  EXPECT_EQ(m.numa_nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(m.node_cpus[1], (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(m.hugetlb_page_bytes, 2u << 20);  // default kept when unknown
  EXPECT_FALSE(m.has_gpu());
  EXPECT_EQ(m.cuda_unavailable_reason, "no usable CUDA device");
}

Machine one_node_machine() {
  Machine m;
  m.numa_nodes = {0};
  m.node_cpus = {{0, 1, 2, 3}};
  m.gpus = {MachineGpu{0, "NVIDIA H200", "0000:19:00.0", 0, 141 * kGiB}};
  return m;
}

Machine two_node_machine() {
  Machine m;
  m.numa_nodes = {0, 1};
  m.node_cpus = {{0, 1}, {2, 3}};
  m.gpus = {MachineGpu{0, "NVIDIA H100", "0000:18:00.0", 0, 80 * kGiB},
            MachineGpu{1, "NVIDIA H100", "0000:9a:00.0", 1, 80 * kGiB}};
  return m;
}

TEST(MachineNodes, CpusOfNode) {
  const Machine m = two_node_machine();
  ASSERT_NE(m.cpus_of_node(1), nullptr);
  EXPECT_EQ(*m.cpus_of_node(1), (std::vector<int>{2, 3}));
  EXPECT_EQ(m.cpus_of_node(7), nullptr);
}

TEST(MachineNodes, OneNode) {
  const Machine m = one_node_machine();
  EXPECT_EQ(m.gpu_local_node(0), 0);
  EXPECT_FALSE(m.gpu_remote_node(0).has_value());
  EXPECT_FALSE(m.gpu_local_node(1).has_value());  // no such GPU
}

TEST(MachineNodes, OneNodeUnknownGpuNodeIsTheOnlyNode) {
  Machine m = one_node_machine();
  m.numa_nodes = {3};
  m.gpus[0].numa_node.reset();
  EXPECT_EQ(m.gpu_local_node(0), 3);
  EXPECT_FALSE(m.gpu_remote_node(0).has_value());
}

TEST(MachineNodes, TwoNodes) {
  const Machine m = two_node_machine();
  EXPECT_EQ(m.gpu_local_node(0), 0);
  EXPECT_EQ(m.gpu_remote_node(0), 1);
  EXPECT_EQ(m.gpu_local_node(1), 1);
  EXPECT_EQ(m.gpu_remote_node(1), 0);
}

TEST(MachineNodes, TwoNodesUnknownGpuNode) {
  Machine m = two_node_machine();
  m.gpus[0].numa_node.reset();
  EXPECT_FALSE(m.gpu_local_node(0).has_value());
  EXPECT_FALSE(m.gpu_remote_node(0).has_value());
}

TEST(MachineNodes, RemotePrefersANodeWithCpus) {
  Machine m = two_node_machine();
  m.numa_nodes = {0, 1, 2};
  m.node_cpus = {{0, 1}, {}, {2, 3}};  // node 1: memory only
  EXPECT_EQ(m.gpu_remote_node(0), 2);
  m.node_cpus = {{0, 1}, {}, {}};
  EXPECT_EQ(m.gpu_remote_node(0), 1);  // still remote memory, even without CPUs
}

TEST(Hwloc, LoadsThisMachine) {
  HwlocTopology topology;
  const auto nodes = topology.numa_nodes();
  ASSERT_GE(nodes.size(), 1u);
  std::size_t cpus = 0;
  for (const auto& node : nodes) {
    cpus += node.cpus.size();
    EXPECT_GT(node.memory_bytes, 0u);
  }
  EXPECT_EQ(static_cast<long>(cpus), sysconf(_SC_NPROCESSORS_ONLN));
  HwlocTopology moved = std::move(topology);
  EXPECT_EQ(moved.numa_nodes().size(), nodes.size());
}

TEST(Hwloc, UnknownDeviceHasNoHwlocLocality) {
  HwlocTopology topology;
  EXPECT_FALSE(topology.pci_locality("00ff:ff:1f.7").has_value());
  EXPECT_THROW(topology.pci_locality("not-a-bus-id"), std::invalid_argument);
}

TEST(Hwloc, RealPciDeviceOnASingleNodeMachineIsLocalToIt) {
  HwlocTopology topology;
  if (topology.numa_nodes().size() != 1) GTEST_SKIP() << "needs a one-node machine";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/bus/pci/devices", ec)) {
    auto found = topology.pci_locality(entry.path().filename().string());
    if (!found) continue;  // hwloc keeps only "important" devices
    EXPECT_EQ(found->source, "hwloc");
    EXPECT_EQ(found->numa_nodes, (std::vector<int>{topology.numa_nodes()[0].os_index}));
    EXPECT_FALSE(found->local_cpus.empty());
    return;
  }
  GTEST_SKIP() << "hwloc lists no PCI device here";
}

TEST(Hwloc, FallsBackToSysfs) {
  const auto root =
      std::filesystem::temp_directory_path() / ("pathbench-hwloc-" + std::to_string(::getpid()));
  const auto dir = root / "sys/bus/pci/devices/00ff:fe:00.0";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "numa_node") << "1\n";
  std::ofstream(dir / "local_cpulist") << "4-7\n";
  HwlocTopology topology;
  // nvidia-smi spelling; hwloc does not know the device, sysfs does.
  const PciLocality found = pci_locality(&topology, "000000FF:FE:00.0", root);
  EXPECT_EQ(found.source, "sysfs");
  EXPECT_EQ(found.numa_nodes, (std::vector<int>{1}));
  EXPECT_EQ(found.local_cpus, (std::vector<int>{4, 5, 6, 7}));
  const PciLocality none = pci_locality(nullptr, "00ff:fd:00.0", root);
  EXPECT_EQ(none.source, "");
  EXPECT_TRUE(none.numa_nodes.empty());
  std::filesystem::remove_all(root);
}

std::string read_smi_fixture(const std::string& name) {
  const std::string path = std::string(PATHBENCH_FIXTURES) + "/nvidia-smi/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

CudaDeviceInfo cuda_device(int index, const std::string& bus) {
  CudaDeviceInfo device;
  device.index = index;
  device.name = "NVIDIA H100 80GB HBM3";
  device.pci_bus_id = bus;
  device.memory_bytes = 79 * kGiB;
  return device;
}

TEST(MergeGpuSources, MatchesByBusIdNotIndex) {
  const auto rows = parse_nvidia_smi_query(read_smi_fixture("h100_sxm_x8.csv"));
  // CUDA_VISIBLE_DEVICES=5,2 in CUDA's upper-case spelling: CUDA index 0 is nvidia-smi's 5.
  std::vector<std::string> warnings;
  const auto gpus = merge_gpu_sources(
      {cuda_device(0, "0000:AB:00.0"), cuda_device(1, "0000:3A:00.0")}, rows, warnings);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].index, 0);
  EXPECT_EQ(gpus[0].pci_bus_id, "0000:ab:00.0");
  EXPECT_EQ(gpus[0].uuid, "GPU-a1b2c3d4-0000-1111-2222-333344445555");
  EXPECT_FALSE(gpus[0].clock_sm_mhz.has_value());  // row 5 has [N/A] clocks
  EXPECT_EQ(gpus[1].uuid, "GPU-a1b2c3d4-0000-1111-2222-333344445552");
  EXPECT_FALSE(gpus[1].pcie_gen_current.has_value());
  EXPECT_EQ(gpus[1].pcie_gen_max, 5);
  EXPECT_EQ(gpus[1].vbios, "96.00.99.00.01");
  EXPECT_EQ(gpus[1].memory_bytes, 79 * kGiB);  // CUDA's total wins over nvidia-smi's
  EXPECT_FALSE(gpus[1].ecc_mode.has_value());  // row 2 says [N/A]
  EXPECT_EQ(gpus[1].persistence_mode, "enabled");
  EXPECT_EQ(gpus[0].ecc_mode, "enabled");
  EXPECT_TRUE(warnings.empty());
}

TEST(MergeGpuSources, FallsBackToIndexWithoutBusIdAndWarnsForUnmatched) {
  const auto rows = parse_nvidia_smi_query(read_smi_fixture("h100_sxm_x8.csv"));
  std::vector<std::string> warnings;
  const auto gpus =
      merge_gpu_sources({cuda_device(3, ""), cuda_device(4, "0000:77:00.0")}, rows, warnings);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].pci_bus_id, "0000:5d:00.0");  // taken from the row with index 3
  EXPECT_EQ(gpus[0].uuid, "GPU-a1b2c3d4-0000-1111-2222-333344445553");
  EXPECT_EQ(gpus[1].uuid, "");  // no row has bus 77
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("CUDA device 4 (0000:77:00.0)"), std::string::npos) << warnings[0];
}

TEST(MergeGpuSources, WithoutCudaTheRowsDescribeTheGpus) {
  const auto rows = parse_nvidia_smi_query(read_smi_fixture("h200_x1.csv"));
  std::vector<std::string> warnings;
  const auto gpus = merge_gpu_sources({}, rows, warnings);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(gpus[0].pci_bus_id, "0000:19:00.0");
  EXPECT_EQ(gpus[0].memory_bytes, 143771ull << 20);
  EXPECT_EQ(gpus[0].clock_mem_max_mhz, 3201);
  EXPECT_TRUE(merge_gpu_sources({}, {}, warnings).empty());
  // CUDA devices without any nvidia-smi rows are not worth a warning each.
  EXPECT_EQ(merge_gpu_sources({cuda_device(0, "0000:18:00.0")}, {}, warnings).size(), 1u);
  EXPECT_TRUE(warnings.empty());
}

class FakePciRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("pathbench-pci-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void device(const std::string& bus, const std::string& node, const std::string& cpus) {
    auto dir = root_ / "sys/bus/pci/devices" / bus;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "numa_node") << node << "\n";
    std::ofstream(dir / "local_cpulist") << cpus << "\n";
  }
  std::filesystem::path root_;
};

TEST_F(FakePciRoot, LocateGpusOnTwoSockets) {
  device("0000:18:00.0", "0", "0-3");
  device("0000:9a:00.0", "1", "4-7");
  device("0000:c0:00.0", "-1", "0-7");  // firmware hides its locality
  Inventory inv = two_socket_inventory();
  inv.gpus.resize(3);
  for (auto& gpu : inv.gpus) {
    gpu.numa_node.reset();
    gpu.local_cpus.clear();
  }
  inv.gpus[2].pci_bus_id = "0000:c0:00.0";
  locate_gpus(inv, nullptr, root_);
  EXPECT_EQ(inv.gpus[0].numa_node, 0);
  EXPECT_EQ(inv.gpus[0].local_cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(inv.gpus[1].numa_node, 1);
  EXPECT_EQ(inv.gpus[1].local_cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_FALSE(inv.gpus[2].numa_node.has_value());  // two nodes: no guessing
}

TEST_F(FakePciRoot, LocateGpusOnOneNodeVm) {
  device("0000:19:00.0", "-1", "0-15");
  Inventory inv;
  inv.numa_nodes = {{0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 128 * kGiB}};
  inv.gpus.resize(2);
  inv.gpus[0].pci_bus_id = "0000:19:00.0";
  inv.gpus[1].pci_bus_id = "";  // not even a bus id
  locate_gpus(inv, nullptr, root_);
  EXPECT_EQ(inv.gpus[0].numa_node, 0);  // the only node is every device's node
  EXPECT_EQ(inv.gpus[0].local_cpus.size(), 16u);
  EXPECT_EQ(inv.gpus[1].numa_node, 0);
  EXPECT_EQ(inv.gpus[1].local_cpus.size(), 16u);
}

TEST(GpuAlignment, BoundToTheGpuNode) {
  Inventory inv = two_socket_inventory();
  inv.warnings.clear();
  inv.cpuset = {1, 2};
  inv.mems_allowed = {0};
  check_gpu_alignment(inv);
  EXPECT_EQ(inv.cpuset_aligned_with_gpu, true);
  EXPECT_TRUE(inv.warnings.empty());
}

TEST(GpuAlignment, UnboundProcessOnTwoSocketsIsWarned) {
  Inventory inv = two_socket_inventory();
  inv.warnings.clear();
  check_gpu_alignment(inv);  // cpuset 0-7, mems 0-1, GPU 0 on node 0 with CPUs 0-3
  EXPECT_EQ(inv.cpuset_aligned_with_gpu, false);
  ASSERT_EQ(inv.warnings.size(), 2u);
  EXPECT_NE(inv.warnings[0].find("CPU set 0-7 is not within GPU 0 (0000:18:00.0)'s local CPUs 0-3"),
            std::string::npos)
      << inv.warnings[0];
  EXPECT_NE(inv.warnings[1].find("memory nodes 0-1"), std::string::npos) << inv.warnings[1];
  EXPECT_NE(inv.warnings[1].find("--membind=0"), std::string::npos) << inv.warnings[1];
}

TEST(GpuAlignment, MemsOnTheWrongNodeAlone) {
  Inventory inv = two_socket_inventory();
  inv.warnings.clear();
  inv.cpuset = {0, 1};
  inv.mems_allowed = {1};
  check_gpu_alignment(inv);
  EXPECT_EQ(inv.cpuset_aligned_with_gpu, false);
  ASSERT_EQ(inv.warnings.size(), 1u);
  EXPECT_NE(inv.warnings[0].find("Mems_allowed"), std::string::npos);
}

TEST(GpuAlignment, UnknownLocalityAndNoGpu) {
  Inventory inv = two_socket_inventory();
  inv.warnings.clear();
  inv.gpus[0].numa_node.reset();
  inv.gpus[0].local_cpus.clear();
  check_gpu_alignment(inv);
  EXPECT_FALSE(inv.cpuset_aligned_with_gpu.has_value());
  ASSERT_EQ(inv.warnings.size(), 1u);
  EXPECT_NE(inv.warnings[0].find("no known NUMA locality"), std::string::npos);

  inv.warnings.clear();
  inv.gpus.clear();
  inv.cpuset_aligned_with_gpu = true;
  check_gpu_alignment(inv);
  EXPECT_FALSE(inv.cpuset_aligned_with_gpu.has_value());
  EXPECT_TRUE(inv.warnings.empty());
}

using pathbench::testing::FakeNvidiaSmi;

// These tests are about nvidia-smi: NVML, where a real driver has it, must not answer first.
InventoryOptions without_nvml() {
  InventoryOptions options;
  options.open_nvml = []() -> std::unique_ptr<NvmlSession> {
    throw std::runtime_error("NVML left out by the test");
  };
  return options;
}

TEST(CollectInventory, UsesNvidiaSmiWhenCudaHasNoDevice) {
  const std::string fixture = std::string(PATHBENCH_FIXTURES) + "/nvidia-smi/h200_x1.csv";
  // The fake checks it was called with the fixed query before answering.
  FakeNvidiaSmi fake("[ \"$2\" = \"--format=csv,noheader,nounits\" ] || exit 2\ncat '" + fixture +
                     "'");
  const Inventory inv = collect_inventory(without_nvml());
  if (inv.cuda_unavailable_reason.empty()) {
    GTEST_SKIP() << "CUDA sees a real GPU here; the fake rows would be merged into it";
  }
  EXPECT_EQ(inv.nvidia_smi_status, "ok");
  EXPECT_EQ(inv.driver_version, "580.159.04");
  ASSERT_EQ(inv.gpus.size(), 1u);
  EXPECT_EQ(inv.gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(inv.gpus[0].pci_bus_id, "0000:19:00.0");
  EXPECT_EQ(inv.gpus[0].ecc_mode, "enabled");
  EXPECT_EQ(inv.gpus[0].persistence_mode, "enabled");
  EXPECT_EQ(inv.gpus[0].mig_mode, "disabled");
  EXPECT_EQ(inv.topo_status, "one GPU: no GPU pairs");
  EXPECT_TRUE(inv.links.empty());
  if (inv.numa_nodes.size() == 1) {
    EXPECT_EQ(inv.gpus[0].numa_node, inv.numa_nodes[0].id);
    EXPECT_EQ(inv.node_type, "NVIDIA H200 x1 / PCIe Gen5 x16 / 1 NUMA");
    EXPECT_EQ(inv.cpuset_aligned_with_gpu, true);
  }
  EXPECT_FALSE(machine_from(inv).has_gpu());  // CUDA still cannot use it
}

TEST(CollectInventory, ReportsWhyNvidiaSmiFailed) {
  const std::string fixture = std::string(PATHBENCH_FIXTURES) + "/nvidia-smi/driver_failure.txt";
  {
    FakeNvidiaSmi fake("cat '" + fixture + "'\nexit 9");
    const Inventory inv = collect_inventory(without_nvml());
    EXPECT_EQ(inv.nvidia_smi_status,
              "nvidia-smi exited with status 9: NVIDIA-SMI has failed because it couldn't "
              "communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is "
              "installed and running.");
  }
  {
    const std::string malformed = std::string(PATHBENCH_FIXTURES) + "/nvidia-smi/malformed.csv";
    FakeNvidiaSmi fake("cat '" + malformed + "'");
    const Inventory inv = collect_inventory(without_nvml());
    EXPECT_EQ(inv.nvidia_smi_status.rfind("nvidia-smi output not understood: ", 0), 0u)
        << inv.nvidia_smi_status;
    EXPECT_NE(inv.nvidia_smi_status.find("line 2"), std::string::npos) << inv.nvidia_smi_status;
  }
}

TEST(CollectInventory, RunsOnThisMachine) {
  const Inventory inv = collect_inventory({});
  EXPECT_FALSE(inv.tool_version.empty());
  EXPECT_FALSE(inv.git_sha.empty());
  EXPECT_FALSE(inv.hostname.empty());
  EXPECT_GE(inv.numa_nodes.size(), 1u);
  EXPECT_GT(inv.logical_cpus, 0);
  EXPECT_FALSE(inv.cpuset.empty());
  EXPECT_FALSE(inv.mems_allowed.empty());
  EXPECT_GT(inv.mem_total_bytes, 0u);
  if (inv.numa_nodes.size() == 1) {
    EXPECT_EQ(inv.numa_nodes[0].memory_bytes, inv.mem_total_bytes);
  }
  EXPECT_EQ(inv.kernel.rfind("Linux ", 0), 0u);
  EXPECT_EQ(inv.topology_fingerprint, topology_fingerprint(inv));
  EXPECT_EQ(inv.topology_fingerprint.size(), 64u);
  EXPECT_TRUE(inv.node_type_derived);
  EXPECT_EQ(inv.node_type, derive_node_type(inv));
  EXPECT_FALSE(inv.nvidia_smi_status.empty());
  EXPECT_FALSE(inv.topo_status.empty());
  if (inv.gpus.size() < 2) {
    EXPECT_TRUE(inv.links.empty());
  }
  if (inv.gpus.empty()) {
    // The CI machine has no GPU and no nvidia-smi.
    EXPECT_NE(inv.nvidia_smi_status, "ok");
    EXPECT_FALSE(inv.cuda_unavailable_reason.empty());
    EXPECT_FALSE(inv.cpuset_aligned_with_gpu.has_value());
    EXPECT_EQ(inv.node_type.rfind("cpu-only / ", 0), 0u) << inv.node_type;
    EXPECT_FALSE(machine_from(inv).has_gpu());
  } else {
    EXPECT_TRUE(inv.gpus[0].numa_node.has_value() || inv.numa_nodes.size() > 1);
  }
  // The live inventory survives its own JSON.
  EXPECT_EQ(to_json(inventory_from_json(to_json(inv))), to_json(inv));
  EXPECT_FALSE(machine_from(inv).numa_nodes.empty());
}

TEST(CollectInventory, NodeTypeOverride) {
  InventoryOptions options;
  options.node_type_override = "lab-h200-vm";
  const Inventory inv = collect_inventory(options);
  EXPECT_EQ(inv.node_type, "lab-h200-vm");
  EXPECT_FALSE(inv.node_type_derived);
  // The label is not topology.
  EXPECT_EQ(inv.topology_fingerprint, collect_inventory({}).topology_fingerprint);
}

}  // namespace
}  // namespace pathbench::test_inventory
