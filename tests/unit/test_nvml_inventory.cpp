// The NVML inventory on fake NVML functions (tests/unit/fake_nvml.hpp), and its fallback to
// nvidia-smi (tests/unit/fake_nvidia_smi.hpp) when NVML cannot be used.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "inventory/inventory.hpp"
#include "inventory/nvml_library.hpp"

#if PATHBENCH_HAVE_NVML_H

#include "fake_nvidia_smi.hpp"
#include "fake_nvml.hpp"
#include "inventory/gpu_inventory_nvml.hpp"
#include "inventory/nvml_api.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_nvml_inventory {
namespace {

using testing::FakeGpu;
using testing::FakeNvidiaSmi;
using testing::FakeNvlink;
using testing::FakeNvml;

// Two H200s joined by 18 direct links, as the second validation machine.
void two_nvlink_gpus(FakeNvml& fake) {
  FakeGpu a;
  FakeGpu b;
  b.bus = "00000000:1A:00.0";
  b.uuid = "GPU-fake-1";
  for (int i = 0; i < 18; ++i) {
    a.links.push_back(FakeNvlink{true, 6, 26562, b.bus, NVML_NVLINK_DEVICE_TYPE_GPU});
    b.links.push_back(FakeNvlink{true, 6, 26562, a.bus, NVML_NVLINK_DEVICE_TYPE_GPU});
  }
  fake.gpus = {a, b};
  fake.ancestors[{0, 1}] = NVML_TOPOLOGY_NODE;
  fake.ancestors[{1, 0}] = NVML_TOPOLOGY_NODE;
}

InventoryOptions fake_options(const NvmlApi& api) {
  InventoryOptions options;
  options.open_nvml = [api] { return std::make_unique<NvmlSession>(api); };
  return options;
}

// On a node where CUDA sees GPUs the fake's are not merged into them: the tests that describe
// GPUs through collect_inventory need CUDA to see none (CI).
bool cuda_sees_gpus(const Inventory& inventory) {
  return inventory.cuda_unavailable_reason.empty();
}

TEST(NvmlInventory, ReadsEveryGpuFact) {
  FakeNvml fake;
  two_nvlink_gpus(fake);
  {
    const NvmlSession session(fake.api());
    const NvmlInventory nvml = read_nvml_inventory(session);
    EXPECT_EQ(nvml.driver_version, "580.159.04");
    ASSERT_EQ(nvml.gpus.size(), 2u);
    const NvidiaSmiGpu& row = nvml.gpus[0].row;
    EXPECT_EQ(row.index, 0);
    EXPECT_EQ(row.pci_bus_id, "0000:19:00.0");  // canonical, as nvidia-smi's rows
    EXPECT_EQ(row.name, "NVIDIA H200");
    EXPECT_EQ(row.uuid, "GPU-fake-0");
    EXPECT_EQ(row.vbios, "96.00.A5.00.1A");
    EXPECT_EQ(row.driver_version, "580.159.04");
    EXPECT_EQ(row.pcie_gen_current, 5);
    EXPECT_EQ(row.pcie_width_max, 16);
    EXPECT_EQ(row.clock_sm_mhz, 1980);
    EXPECT_EQ(row.clock_mem_max_mhz, 3201);
    EXPECT_EQ(row.memory_bytes, 143771ull << 20);  // whole MiB, as nvidia-smi prints it
    EXPECT_EQ(row.ecc_mode, "enabled");
    EXPECT_EQ(row.persistence_mode, "enabled");
    EXPECT_EQ(row.mig_mode, "disabled");
    EXPECT_EQ(nvml.gpus[0].clock_event_reasons_mask, 0x1u);
    ASSERT_TRUE(nvml.gpus[0].nvlink.has_value());
    const GpuNvlink& nvlink = *nvml.gpus[0].nvlink;
    EXPECT_EQ(nvlink.active_links, 18);
    EXPECT_DOUBLE_EQ(*nvlink.link_gb_per_s, 26.562);
    EXPECT_EQ(nvlink.version, 4);
    ASSERT_EQ(nvlink.links.size(), 18u);
    EXPECT_EQ(nvlink.links[17].remote_pci_bus_id, "0000:1a:00.0");
    EXPECT_EQ(nvlink.links[17].remote_type, "gpu");
    ASSERT_EQ(nvml.topo.gpus, (std::vector<std::string>{"GPU0", "GPU1"}));
    EXPECT_EQ(nvml.topo.cells[0][1], "NV18");
    EXPECT_EQ(nvml.topo.cells[1][1], "X");
    ASSERT_EQ(nvml.pairs.size(), 2u);
    EXPECT_EQ(nvml.pairs[0].common_ancestor, "node");
    ASSERT_EQ(nvml.pairs[0].p2p_status.size(), 5u);
    EXPECT_EQ(nvml.pairs[0].p2p_status[2], (std::pair<std::string, std::string>{"nvlink", "ok"}));
    EXPECT_TRUE(nvml.warnings.empty());
    EXPECT_EQ(fake.init_calls, 1);
  }
  EXPECT_EQ(fake.shutdown_calls, 1);  // the session's end
}

TEST(NvmlInventory, NotSupportedLeavesFieldsEmpty) {
  FakeNvml fake;
  FakeGpu pcie_card;
  pcie_card.nvlink_rc = NVML_ERROR_NOT_SUPPORTED;
  pcie_card.ecc_rc = NVML_ERROR_NOT_SUPPORTED;
  pcie_card.mig_rc = NVML_ERROR_NOT_SUPPORTED;
  pcie_card.pcie_rc = NVML_ERROR_NOT_SUPPORTED;
  fake.gpus = {pcie_card};
  const NvmlSession session(fake.api());
  const NvmlInventory nvml = read_nvml_inventory(session);
  ASSERT_EQ(nvml.gpus.size(), 1u);
  const NvmlGpuFacts& gpu = nvml.gpus[0];
  EXPECT_FALSE(gpu.row.ecc_mode.has_value());
  EXPECT_FALSE(gpu.row.mig_mode.has_value());
  EXPECT_FALSE(gpu.row.pcie_gen_current.has_value());
  EXPECT_FALSE(gpu.row.pcie_width_max.has_value());
  EXPECT_EQ(gpu.row.persistence_mode, "enabled");  // the rest is still read
  // No NVLink is an answer (0 links), as nvidia-smi nvlink -s gives for a PCIe card.
  ASSERT_TRUE(gpu.nvlink.has_value());
  EXPECT_EQ(gpu.nvlink->active_links, 0);
  EXPECT_FALSE(gpu.nvlink->link_gb_per_s.has_value());
  EXPECT_TRUE(gpu.nvlink->links.empty());
}

TEST(NvmlInventory, MissingSymbolsAreUnknownFields) {
  FakeNvml fake;
  two_nvlink_gpus(fake);
  NvmlApi api = fake.api();
  api.nvlink_state = nullptr;  // a driver without the function
  api.mig_mode = nullptr;
  api.error_string = nullptr;
  api.clocks_event_reasons = nullptr;
  const NvmlSession session(api);
  const NvmlInventory nvml = read_nvml_inventory(session);
  ASSERT_EQ(nvml.gpus.size(), 2u);
  EXPECT_FALSE(nvml.gpus[0].nvlink.has_value());  // not asked: unknown, not "no NVLink"
  EXPECT_FALSE(nvml.gpus[0].row.mig_mode.has_value());
  EXPECT_FALSE(nvml.gpus[0].clock_event_reasons_mask.has_value());
  EXPECT_EQ(nvml.gpus[0].row.ecc_mode, "enabled");
  EXPECT_EQ(nvml.topo.cells[0][1], "NODE");  // without links, the PCIe path
}

TEST(NvmlInventory, NvswitchLinksAndCommonSpeedOfOlderDrivers) {
  FakeNvml fake;
  two_nvlink_gpus(fake);
  for (auto& gpu : fake.gpus) {
    gpu.per_link_speed_field = false;
    for (auto& link : gpu.links) {
      link.remote_bus = "00000000:C0:00.0";  // an NVSwitch
      link.remote_type = NVML_NVLINK_DEVICE_TYPE_SWITCH;
    }
    gpu.links[3].active = false;
  }
  const NvmlSession session(fake.api());
  NvmlInventory nvml = read_nvml_inventory(session);
  EXPECT_EQ(nvml.topo.cells[0][1], "NV17");  // through the switches, over every active link
  EXPECT_EQ(nvml.gpus[0].nvlink->active_links, 17);
  EXPECT_DOUBLE_EQ(*nvml.gpus[0].nvlink->link_gb_per_s, 26.562);
  EXPECT_FALSE(nvml.gpus[0].nvlink->links[3].gb_per_s.has_value());

  fake.p2p_nvlink = NVML_P2P_STATUS_NOT_SUPPORTED;  // switches, but this pair cannot use them
  nvml = read_nvml_inventory(session);
  EXPECT_EQ(nvml.topo.cells[0][1], "NODE");
  EXPECT_EQ(nvml.pairs[0].p2p_status[2].second, "not_supported");
}

TEST(NvmlInventory, PcieAncestorsBecomeTopologyCells) {
  FakeNvml fake;
  FakeGpu a;
  a.nvlink_rc = NVML_ERROR_NOT_SUPPORTED;
  FakeGpu b = a;
  b.bus = "0000:3b:00.0";
  FakeGpu c = a;
  c.bus = "0000:d8:00.0";
  fake.gpus = {a, b, c};
  fake.ancestors[{0, 1}] = fake.ancestors[{1, 0}] = NVML_TOPOLOGY_SINGLE;
  fake.ancestors[{0, 2}] = fake.ancestors[{2, 0}] = NVML_TOPOLOGY_SYSTEM;
  fake.ancestors[{1, 2}] = NVML_TOPOLOGY_HOSTBRIDGE;  // {2, 1}: NOT_SUPPORTED
  const NvmlSession session(fake.api());
  const NvmlInventory nvml = read_nvml_inventory(session);
  EXPECT_EQ(nvml.topo.cells[0], (std::vector<std::string>{"X", "PIX", "SYS"}));
  EXPECT_EQ(nvml.topo.cells[1], (std::vector<std::string>{"PIX", "X", "PHB"}));
  EXPECT_EQ(nvml.topo.cells[2], (std::vector<std::string>{"SYS", "UNKNOWN", "X"}));
  ASSERT_EQ(nvml.pairs.size(), 6u);
  EXPECT_FALSE(nvml.pairs[5].common_ancestor.has_value());
}

TEST(NvmlInventory, CountFailureThrowsAndUnreadableGpusAreLeftOut) {
  FakeNvml fake;
  fake.gpus = {FakeGpu{}, FakeGpu{}};
  fake.gpus[1].bus = "not a bus id";
  {
    const NvmlSession session(fake.api());
    const NvmlInventory nvml = read_nvml_inventory(session);
    ASSERT_EQ(nvml.gpus.size(), 1u);
    ASSERT_EQ(nvml.warnings.size(), 1u);
    EXPECT_NE(nvml.warnings[0].find("NVML GPU 1: PCI bus id \"not a bus id\""), std::string::npos)
        << nvml.warnings[0];
  }
  fake.count_rc = NVML_ERROR_DRIVER_NOT_LOADED;
  const NvmlSession session(fake.api());
  try {
    (void)read_nvml_inventory(session);
    ADD_FAILURE() << "a failed count was taken for zero GPUs";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "nvmlDeviceGetCount_v2 failed: Driver Not Loaded");
  }
}

TEST(NvmlSessionTest, InitFailureAndMissingRequiredSymbolsThrow) {
  FakeNvml fake;
  fake.init_rc = NVML_ERROR_DRIVER_NOT_LOADED;
  try {
    const NvmlSession session(fake.api());
    ADD_FAILURE() << "opened";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "nvmlInit_v2 failed: Driver Not Loaded");
  }
  EXPECT_EQ(fake.shutdown_calls, 0);  // nothing to shut down after a failed init

  fake.init_rc = NVML_SUCCESS;
  NvmlApi api = fake.api();
  api.device_count = nullptr;
  api.handle_by_bus_id = nullptr;
  try {
    const NvmlSession session(api);
    ADD_FAILURE() << "opened";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "libnvidia-ml.so.1 lacks nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByPciBusId_v2 "
              "(driver too old)");
  }
  EXPECT_EQ(fake.init_calls, 1);  // never initialised without its required functions
}

TEST(NvmlSessionTest, SampleOfAGpuNvmlDoesNotKnow) {
  FakeNvml fake;
  const NvmlSession session(fake.api());
  GpuEnvironment gpu;
  gpu.pci_bus_id = "0000:19:00.0";
  session.sample(gpu);
  EXPECT_EQ(gpu.source, "unavailable: NVML has no GPU at 0000:19:00.0: Unknown Error");
}

TEST(CollectInventoryNvml, NvmlIsTheSourceWhenItAnswers) {
  FakeNvml fake;
  two_nvlink_gpus(fake);
  // nvidia-smi must not be needed: this one fails every call.
  FakeNvidiaSmi smi("exit 9");
  const Inventory inv = collect_inventory(fake_options(fake.api()));
  if (cuda_sees_gpus(inv)) GTEST_SKIP() << "CUDA sees a real GPU here; the fake is not merged";
  EXPECT_EQ(inv.inventory_source, "nvml");
  EXPECT_EQ(inv.nvml_status, "ok");
  EXPECT_EQ(inv.nvidia_smi_status, "not run: NVML described the GPUs");
  EXPECT_EQ(inv.driver_version, "580.159.04");
  ASSERT_EQ(inv.gpus.size(), 2u);
  EXPECT_EQ(inv.gpus[0].inventory_source, "nvml");
  EXPECT_EQ(inv.gpus[1].pci_bus_id, "0000:1a:00.0");
  EXPECT_EQ(inv.gpus[0].ecc_mode, "enabled");
  EXPECT_EQ(inv.gpus[0].clock_event_reasons_mask, 0x1u);
  ASSERT_TRUE(inv.gpus[0].nvlink.has_value());
  EXPECT_EQ(inv.gpus[0].nvlink->active_links, 18);
  EXPECT_EQ(inv.topo_status, "ok");
  EXPECT_EQ(inv.nvlink_status, "ok");
  ASSERT_EQ(inv.links.size(), 2u);
  EXPECT_EQ(inv.links[0].type, LinkType::kNvlink);
  EXPECT_EQ(inv.links[0].nvlinks, 18);
  EXPECT_EQ(inv.links[0].param, "nvlink18");
  EXPECT_EQ(inv.links[0].topology_source, "nvml");
  EXPECT_EQ(inv.links[0].common_ancestor, "node");
  EXPECT_EQ(inv.links[1].p2p_status.size(), 5u);
  if (inv.numa_nodes.size() == 1) {
    EXPECT_EQ(inv.node_type, "NVIDIA H200 x2 / PCIe Gen5 x16 / 1 NUMA");
  }

  const auto json = to_json(inv);
  EXPECT_EQ(json.at("inventory_source"), "nvml");
  const auto& gpu = json.at("gpus").at(0);
  EXPECT_EQ(gpu.at("inventory_source"), "nvml");
  EXPECT_NEAR(gpu.at("pcie").at("raw_gbps_per_direction").at("current").get<double>(), 63.015,
              1e-3);
  EXPECT_EQ(gpu.at("clock_event_reasons"), nlohmann::ordered_json({"gpu_idle"}));
  EXPECT_EQ(gpu.at("nvlink").at("version"), 4);
  // 18 x 25 GB/s of data: the coding of NVLink4 known from NVML, CUDA being silent here.
  EXPECT_NEAR(gpu.at("nvlink").at("raw_gbps_per_direction").get<double>(), 450.0, 0.01);
  EXPECT_EQ(json.at("links").at(0).at("p2p_status").at("nvlink"), "ok");
  EXPECT_EQ(to_json(inventory_from_json(nlohmann::json::parse(json.dump()))), json);
}

TEST(CollectInventoryNvml, FallsBackToNvidiaSmiWhenNvmlCannotBeUsed) {
  const std::string fixture = std::string(PATHBENCH_FIXTURES) + "/nvidia-smi/h200_x1.csv";
  FakeNvidiaSmi smi("[ \"$2\" = \"--format=csv,noheader,nounits\" ] || exit 2\ncat '" + fixture +
                    "'");
  FakeNvml fake;
  two_nvlink_gpus(fake);
  struct Case {
    const char* what;
    NvmlApi api;
    std::string status;
  };
  NvmlApi init_fails = fake.api();
  init_fails.init = [] { return NVML_ERROR_DRIVER_NOT_LOADED; };
  NvmlApi too_old = fake.api();
  too_old.handle_by_index = nullptr;
  NvmlApi count_fails = fake.api();
  count_fails.device_count = [](unsigned int*) { return NVML_ERROR_DRIVER_NOT_LOADED; };
  NvmlApi no_gpus = fake.api();
  no_gpus.device_count = [](unsigned int* n) {
    *n = 0;
    return NVML_SUCCESS;
  };
  for (const Case& c :
       {Case{"init", init_fails, "nvmlInit_v2 failed: Driver Not Loaded"},
        Case{"symbol", too_old,
             "libnvidia-ml.so.1 lacks nvmlDeviceGetHandleByIndex_v2 (driver too old)"},
        Case{"count", count_fails, "nvmlDeviceGetCount_v2 failed: Driver Not Loaded"},
        Case{"none", no_gpus, "NVML lists no GPUs"}}) {
    SCOPED_TRACE(c.what);
    const Inventory inv = collect_inventory(fake_options(c.api));
    if (cuda_sees_gpus(inv)) GTEST_SKIP() << "CUDA sees a real GPU here";
    EXPECT_EQ(inv.nvml_status, c.status);
    EXPECT_EQ(inv.inventory_source, "nvidia-smi");
    EXPECT_EQ(inv.nvidia_smi_status, "ok");
    ASSERT_EQ(inv.gpus.size(), 1u);
    EXPECT_EQ(inv.gpus[0].inventory_source, "nvidia-smi");
    EXPECT_EQ(inv.gpus[0].name, "NVIDIA H200");
    EXPECT_FALSE(inv.gpus[0].clock_event_reasons_mask.has_value());
    EXPECT_EQ(inv.topo_status, "one GPU: no GPU pairs");
  }
}

TEST(CollectInventoryNvml, NeitherSourceIsNone) {
  FakeNvidiaSmi smi("exit 9");
  InventoryOptions options;
  options.open_nvml = []() -> std::unique_ptr<NvmlSession> {
    throw std::runtime_error("libnvidia-ml.so.1 cannot be loaded: not here");
  };
  const Inventory inv = collect_inventory(options);
  if (cuda_sees_gpus(inv)) GTEST_SKIP() << "CUDA sees a real GPU here";
  EXPECT_EQ(inv.inventory_source, "none");
  EXPECT_EQ(inv.nvml_status, "libnvidia-ml.so.1 cannot be loaded: not here");
  EXPECT_EQ(inv.nvidia_smi_status.rfind("nvidia-smi exited with status 9", 0), 0u)
      << inv.nvidia_smi_status;
  EXPECT_TRUE(inv.gpus.empty());
}

}  // namespace
}  // namespace pathbench::test_nvml_inventory

#else

TEST(NvmlInventory, NeedsNvmlHeader) {
  GTEST_SKIP() << "built without nvml.h: the NVML inventory is unavailable and untested";
}

#endif
