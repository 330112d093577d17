// The context fields of issue 11's inventory: where each GPU's facts came from, the raw link rates
// derived from the link state, NVML's per-link and per-pair facts; read back type-checked.
#include <gtest/gtest.h>

#include "inventory_json_errors.hpp"

#include <string>

#include "inventory/inventory.hpp"
#include "inventory/nvml_topology.hpp"

namespace pathbench::test_inventory_context_fields {
namespace {

Inventory nvml_inventory() {
  Inventory inv;
  inv.inventory_source = "nvml";
  inv.nvml_status = "ok";
  inv.nvidia_smi_status = "not run: NVML described the GPUs";
  GpuInventory gpu;
  gpu.index = 0;
  gpu.name = "NVIDIA H200";
  gpu.pci_bus_id = "0000:19:00.0";
  gpu.compute_capability = "9.0";
  gpu.pcie_gen_current = 1;  // an idle GPU lowers its link
  gpu.pcie_width_current = 16;
  gpu.pcie_gen_max = 5;
  gpu.pcie_width_max = 16;
  gpu.inventory_source = "nvml";
  gpu.clock_event_reasons_mask = 0x1 | 0x4;
  GpuNvlink nvlink;
  nvlink.active_links = 2;
  nvlink.link_gb_per_s = 26.5625;
  nvlink.version = 4;
  nvlink.links = {{0, true, 4, 26.5625, "0000:1a:00.0", "gpu"},
                  {1, true, 4, 26.5625, "0000:1a:00.0", "gpu"},
                  {2, false, std::nullopt, std::nullopt, "", ""}};
  gpu.nvlink = nvlink;
  inv.gpus = {gpu};
  GpuLink link;
  link.from = 0;
  link.to = 1;
  link.type = LinkType::kNvlink;
  link.nvlinks = 2;
  link.param = "nvlink2";
  link.topology_source = "nvml";
  link.common_ancestor = "system";
  link.p2p_status = {{"read", "ok"}, {"nvlink", "ok"}, {"atomics", "not_supported"}};
  inv.links = {link};
  return inv;
}

TEST(InventoryContextFields, WrittenWithDerivedRates) {
  const auto json = to_json(nvml_inventory());
  EXPECT_EQ(json.at("inventory_source"), "nvml");
  EXPECT_EQ(json.at("nvml_status"), "ok");
  const auto& gpu = json.at("gpus").at(0);
  EXPECT_EQ(gpu.at("inventory_source"), "nvml");
  EXPECT_DOUBLE_EQ(gpu.at("pcie").at("raw_gbps_per_direction").at("current").get<double>(), 4.0);
  EXPECT_NEAR(gpu.at("pcie").at("raw_gbps_per_direction").at("max").get<double>(), 63.015, 1e-3);
  EXPECT_EQ(gpu.at("clock_event_reasons"), nlohmann::ordered_json({"gpu_idle", "sw_power_cap"}));
  EXPECT_EQ(gpu.at("clock_event_reasons_mask"), 5);
  const auto& nvlink = gpu.at("nvlink");
  EXPECT_EQ(nvlink.at("active_links"), 2);
  EXPECT_EQ(nvlink.at("version"), 4);
  EXPECT_NEAR(nvlink.at("data_gb_per_s_per_link").get<double>(), 25.0, 1e-9);
  EXPECT_NEAR(nvlink.at("raw_gbps_per_direction").get<double>(), 50.0, 1e-9);
  ASSERT_EQ(nvlink.at("links").size(), 3u);
  EXPECT_EQ(nvlink.at("links").at(1).at("remote_pci_bus_id"), "0000:1a:00.0");
  EXPECT_FALSE(nvlink.at("links").at(2).at("active").get<bool>());
  EXPECT_TRUE(nvlink.at("links").at(2).at("gb_per_s").is_null());
  const auto& link = json.at("links").at(0);
  EXPECT_EQ(link.at("topology_source"), "nvml");
  EXPECT_EQ(link.at("common_ancestor"), "system");
  EXPECT_EQ(
      link.at("p2p_status"),  // by capability name
      (nlohmann::ordered_json{{"atomics", "not_supported"}, {"nvlink", "ok"}, {"read", "ok"}}));
}

TEST(InventoryContextFields, UnknownLinkStateHasNullRates) {
  Inventory inv = nvml_inventory();
  inv.gpus[0].pcie_gen_current.reset();
  inv.gpus[0].pcie_gen_max = 9;  // a generation pathbench does not know
  inv.gpus[0].nvlink->active_links = 0;
  inv.gpus[0].clock_event_reasons_mask.reset();
  inv.links[0].p2p_status.clear();
  inv.links[0].common_ancestor.reset();
  const auto json = to_json(inv);
  const auto& gpu = json.at("gpus").at(0);
  EXPECT_TRUE(gpu.at("pcie").at("raw_gbps_per_direction").at("current").is_null());
  EXPECT_TRUE(gpu.at("pcie").at("raw_gbps_per_direction").at("max").is_null());
  EXPECT_TRUE(gpu.at("nvlink").at("raw_gbps_per_direction").is_null());
  EXPECT_TRUE(gpu.at("clock_event_reasons").is_null());
  EXPECT_TRUE(json.at("links").at(0).at("p2p_status").is_null());
  EXPECT_TRUE(json.at("links").at(0).at("common_ancestor").is_null());
}

TEST(InventoryContextFields, RoundTripAndOlderContexts) {
  const auto json = to_json(nvml_inventory());
  const Inventory back = inventory_from_json(nlohmann::json::parse(json.dump()));
  EXPECT_EQ(to_json(back), json);
  EXPECT_EQ(back.gpus[0].nvlink->links.size(), 3u);
  EXPECT_EQ(back.links[0].p2p_status.size(), 3u);
  EXPECT_EQ(back.gpus[0].clock_event_reasons_mask, 5u);

  // A context written before these fields existed still reads, with empty values.
  auto old = nlohmann::json::parse(json.dump());
  old.erase("inventory_source");
  old.erase("nvml_status");
  for (const char* key :
       {"inventory_source", "pcie", "clock_event_reasons", "clock_event_reasons_mask"}) {
    old["gpus"][0].erase(key);
  }
  for (const char* key : {"version", "links", "raw_gbps_per_direction", "data_gb_per_s_per_link"}) {
    old["gpus"][0]["nvlink"].erase(key);
  }
  for (const char* key : {"topology_source", "common_ancestor", "p2p_status"}) {
    old["links"][0].erase(key);
  }
  const Inventory older = inventory_from_json(old);
  EXPECT_EQ(older.inventory_source, "");
  EXPECT_EQ(older.gpus[0].inventory_source, "");
  EXPECT_FALSE(older.gpus[0].nvlink->version.has_value());
  EXPECT_TRUE(older.gpus[0].nvlink->links.empty());
  EXPECT_TRUE(older.links[0].p2p_status.empty());
  // The derived rates come back from the link state alone.
  EXPECT_EQ(to_json(older).at("gpus").at(0).at("pcie"), json.at("gpus").at(0).at("pcie"));
}

TEST(InventoryContextFields, WrongTypesNameTheField) {
  const auto json = nlohmann::json::parse(to_json(nvml_inventory()).dump());
  const auto expect_error = testing::expect_inventory_json_error;
  auto bad = json;
  bad["inventory_source"] = 1;
  expect_error(bad, "/inventory_source");
  bad = json;
  bad["gpus"][0]["inventory_source"] = false;
  expect_error(bad, "/gpus/0/inventory_source");
  bad = json;
  bad["gpus"][0]["clock_event_reasons_mask"] = -1;
  expect_error(bad, "/gpus/0/clock_event_reasons_mask");
  bad = json;
  bad["gpus"][0]["nvlink"]["links"][1]["active"] = "yes";
  expect_error(bad, "/gpus/0/nvlink/links/1/active");
  bad = json;
  bad["gpus"][0]["nvlink"]["links"] = "18";
  expect_error(bad, "/gpus/0/nvlink/links");
  bad = json;
  bad["gpus"][0]["nvlink"]["version"] = 4.5;
  expect_error(bad, "/gpus/0/nvlink/version");
  bad = json;
  bad["links"][0]["p2p_status"]["read"] = true;
  expect_error(bad, "/links/0/p2p_status/read");
  bad = json;
  bad["links"][0]["p2p_status"] = nlohmann::json::array({"ok"});
  expect_error(bad, "/links/0/p2p_status");
  bad = json;
  bad["links"][0]["common_ancestor"] = 40;
  expect_error(bad, "/links/0/common_ancestor");
}

TEST(NvmlTopology, CellsAsNvidiaSmiPrintsThem) {
  EXPECT_EQ(topology_cell(18, "system"), "NV18");
  EXPECT_EQ(topology_cell(0, "internal"), "PIX");
  EXPECT_EQ(topology_cell(0, "single"), "PIX");
  EXPECT_EQ(topology_cell(0, "multiple"), "PXB");
  EXPECT_EQ(topology_cell(0, "hostbridge"), "PHB");
  EXPECT_EQ(topology_cell(0, "node"), "NODE");
  EXPECT_EQ(topology_cell(0, "system"), "SYS");
  EXPECT_EQ(topology_cell(0, std::nullopt), "UNKNOWN");
  EXPECT_EQ(topology_cell(0, "elsewhere"), "UNKNOWN");
  int nvlinks = -1;
  EXPECT_EQ(link_type_from_cell(topology_cell(0, "multiple"), &nvlinks), LinkType::kPxb);
  EXPECT_EQ(link_type_from_cell(topology_cell(6, "node"), &nvlinks), LinkType::kNvlink);
  EXPECT_EQ(nvlinks, 6);
  EXPECT_EQ(link_type_from_cell(topology_cell(0, std::nullopt)), LinkType::kUnknown);
}

TEST(NvmlTopology, LinksBetweenGpusDirectAndThroughSwitches) {
  GpuNvlink gpu;
  gpu.links = {{0, true, 4, 26.5, "0000:1a:00.0", "gpu"},
               {1, true, 4, 26.5, "0000:1a:00.0", "gpu"},
               {2, false, 4, std::nullopt, "0000:1a:00.0", "gpu"},  // inactive: not counted
               {3, true, 4, 26.5, "0000:1b:00.0", "gpu"}};
  EXPECT_EQ(nvlinks_between(gpu, "0000:1a:00.0", false), 2);
  EXPECT_EQ(nvlinks_between(gpu, "0000:1b:00.0", true), 1);
  EXPECT_EQ(nvlinks_between(gpu, "0000:1c:00.0", true), 0);  // no switch to go through

  GpuNvlink switched;
  for (int i = 0; i < 18; ++i)
    switched.links.push_back({i, true, 4, 26.5, "0000:c0:00.0", "switch"});
  EXPECT_EQ(nvlinks_between(switched, "0000:1a:00.0", true), 18);
  EXPECT_EQ(nvlinks_between(switched, "0000:1a:00.0", false), 0);  // NVML: no NVLink P2P
  EXPECT_EQ(nvlinks_between(GpuNvlink{}, "", true), 0);
}

}  // namespace
}  // namespace pathbench::test_inventory_context_fields
