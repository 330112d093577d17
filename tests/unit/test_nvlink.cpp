// NVLink facts in the inventory: the `nvidia-smi nvlink -s` parser, the per-generation rate
// table, the rate a floor uses, link labels, and gpus[].nvlink / compute_capability in the
// context. No GPU needed (nvidia-smi is faked).
#include <gtest/gtest.h>

#include "fake_nvidia_smi.hpp"

#include <stdexcept>
#include <string>

#include "inventory/inventory.hpp"
#include "inventory/nvidia_smi.hpp"
#include "inventory/nvlink.hpp"

namespace pathbench::test_nvlink {
namespace {

using pathbench::testing::nvidia_smi_fixture_path;
using pathbench::testing::read_nvidia_smi_fixture;

void expect_rejected(const std::string& text, const std::string& fragment) {
  try {
    parse_nvidia_smi_nvlink(text);
    ADD_FAILURE() << "accepted: " << text;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(NvlinkParse, Argv) {
  EXPECT_EQ(nvidia_smi_nvlink_argv(), (std::vector<std::string>{"nvidia-smi", "nvlink", "-s"}));
}

TEST(NvlinkParse, OneGpuWithoutNvlink) {
  const auto gpus = parse_nvidia_smi_nvlink(read_nvidia_smi_fixture("nvlink_1gpu.txt"));
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].index, 0);
  EXPECT_EQ(gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(gpus[0].uuid, "GPU-3f1c2b7e-8d4a-5c6b-9e0f-1a2b3c4d5e6f");
  EXPECT_EQ(gpus[0].links, 0);
  EXPECT_EQ(gpus[0].active_links, 0);
  EXPECT_FALSE(gpus[0].link_gb_per_s.has_value());
  EXPECT_NE(gpus[0].note.find("all links are inActive"), std::string::npos) << gpus[0].note;

  // Some drivers print the header and nothing under it.
  const auto bare = parse_nvidia_smi_nvlink("GPU 0: NVIDIA H200 (UUID: GPU-x)\n");
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_EQ(bare[0].active_links, 0);
  EXPECT_TRUE(bare[0].note.empty());
  EXPECT_TRUE(parse_nvidia_smi_nvlink("").empty());
  EXPECT_TRUE(parse_nvidia_smi_nvlink("\n\n").empty());
}

TEST(NvlinkParse, TwoH200Nv18) {
  const auto gpus = parse_nvidia_smi_nvlink(read_nvidia_smi_fixture("nvlink_2gpu_h200_nv18.txt"));
  ASSERT_EQ(gpus.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(gpus[i].index, i);
    EXPECT_EQ(gpus[i].name, "NVIDIA H200");
    EXPECT_EQ(gpus[i].links, 18);
    EXPECT_EQ(gpus[i].active_links, 18);
    ASSERT_TRUE(gpus[i].link_gb_per_s.has_value());
    EXPECT_DOUBLE_EQ(*gpus[i].link_gb_per_s, 26.562);
    EXPECT_TRUE(gpus[i].note.empty());
  }
  EXPECT_EQ(gpus[1].uuid, "GPU-7b0e5a1c-2d3f-4a5b-8c6d-9e0f1a2b3c41");
}

TEST(NvlinkParse, EightH100Nv18) {
  const auto gpus = parse_nvidia_smi_nvlink(read_nvidia_smi_fixture("nvlink_8gpu_h100_nv18.txt"));
  ASSERT_EQ(gpus.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(gpus[i].index, i);
    EXPECT_EQ(gpus[i].name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpus[i].uuid, "GPU-a1b2c3d4-0000-1111-2222-33334444555" + std::to_string(i));
    EXPECT_EQ(gpus[i].active_links, 18);
  }
}

TEST(NvlinkParse, InactiveLinksAndTheSlowestActiveRate) {
  // The V100 output format, with two links down and one trained to a lower rate; CRLF endings.
  const auto gpus = parse_nvidia_smi_nvlink(
      "GPU 3: Tesla V100-SXM2-32GB (UUID: GPU-v)\r\n"
      "         Link 0: 25.781 GB/s\r\n"
      "         Link 1: 25.781 GB/s\r\n"
      "         Link 2: 12.891 GB/s\r\n"
      "         Link 3: <inactive>\r\n"
      "         Link 4: 25.781 GB/s\r\n"
      "         Link 5: <inactive>\r\n");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].index, 3);
  EXPECT_EQ(gpus[0].name, "Tesla V100-SXM2-32GB");
  EXPECT_EQ(gpus[0].uuid, "GPU-v");
  EXPECT_EQ(gpus[0].links, 6);
  EXPECT_EQ(gpus[0].active_links, 4);
  EXPECT_DOUBLE_EQ(*gpus[0].link_gb_per_s, 12.891);

  const auto all_inactive =
      parse_nvidia_smi_nvlink("GPU 0: NVIDIA A100 (UUID: GPU-a)\n\t Link 0: <inactive>\n");
  EXPECT_EQ(all_inactive[0].links, 1);
  EXPECT_EQ(all_inactive[0].active_links, 0);
  EXPECT_FALSE(all_inactive[0].link_gb_per_s.has_value());

  const auto no_uuid = parse_nvidia_smi_nvlink("GPU 1: NVIDIA A100\n\t Link 0: 25.781 GB/s\n");
  EXPECT_EQ(no_uuid[0].name, "NVIDIA A100");
  EXPECT_EQ(no_uuid[0].uuid, "");
}

TEST(NvlinkParse, RejectsWhatIsNotItsFormat) {
  // The --query-gpu CSV (a fake nvidia-smi that answers everything with it) is not this output.
  expect_rejected(read_nvidia_smi_fixture("h200_x1.csv"), "line 1");
  expect_rejected("GPU 0: H200 (UUID: GPU-x)\n\t Link 0: fast\n", "line 2");
  expect_rejected("GPU 0: H200 (UUID: GPU-x)\n\t Link 0: 26.5 GiB/s\n", "GB/s");
  expect_rejected("GPU 0: H200 (UUID: GPU-x)\n\t Link 0: -3 GB/s\n", "line 2");
  expect_rejected("GPU 0: H200\n\t Link 0: 26.562 GB/s\n\t Link 0: 26.562 GB/s\n", "listed twice");
  expect_rejected("\n\t Link 0: 26.562 GB/s\n", "line 2");
}

TEST(NvlinkGeneration, Table) {
  const auto volta = nvlink_generation(7, 0);
  ASSERT_TRUE(volta);
  EXPECT_EQ(volta->version, 2);
  EXPECT_DOUBLE_EQ(volta->data_gb_per_s, 25.0);
  const auto ampere = nvlink_generation("8.0");
  ASSERT_TRUE(ampere);
  EXPECT_EQ(ampere->version, 3);
  EXPECT_DOUBLE_EQ(ampere->data_gb_per_s, 25.0);
  const auto hopper = nvlink_generation("9.0");
  ASSERT_TRUE(hopper);
  EXPECT_EQ(hopper->version, 4);
  EXPECT_DOUBLE_EQ(hopper->data_gb_per_s, 25.0);
  EXPECT_DOUBLE_EQ(hopper->line_gb_per_s, 26.5625);
  for (const char* blackwell : {"10.0", "10.3"}) {
    const auto g = nvlink_generation(blackwell);
    ASSERT_TRUE(g) << blackwell;
    EXPECT_EQ(g->version, 5);
    EXPECT_DOUBLE_EQ(g->data_gb_per_s, 50.0);
  }
  // 18 Hopper links: NVIDIA's 450 GB/s per direction.
  EXPECT_DOUBLE_EQ(18 * hopper->data_gb_per_s, 450.0);
  for (const char* other : {"8.6", "8.9", "12.0", "7.5", "", "9", "nine.0", "9.x"}) {
    EXPECT_FALSE(nvlink_generation(other).has_value()) << other;
  }
}

TEST(NvlinkRate, DriverRateThroughTheGenerationsCoding) {
  const auto r = nvlink_link_rate(26.562, "9.0");
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->gb_per_s, 25.0, 0.01);
  EXPECT_NE(r->source.find("nvidia-smi nvlink -s"), std::string::npos) << r->source;
  EXPECT_NE(r->source.find("NVLink4"), std::string::npos) << r->source;
  EXPECT_NEAR(nvlink_link_rate(25.781, "7.0")->gb_per_s, 25.0, 0.01);
  EXPECT_NEAR(nvlink_link_rate(53.125, "10.0")->gb_per_s, 50.0, 1e-9);
  // A link trained down is scaled the same way.
  EXPECT_NEAR(nvlink_link_rate(13.281, "9.0")->gb_per_s, 12.5, 0.01);
}

TEST(NvlinkRate, DriverRateWithoutAKnownGenerationIsTakenAsPrinted) {
  const auto r = nvlink_link_rate(14.0625, "8.6");
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->gb_per_s, 14.0625);
  EXPECT_NE(r->source.find("not taken off"), std::string::npos) << r->source;
  EXPECT_DOUBLE_EQ(nvlink_link_rate(20.0, "")->gb_per_s, 20.0);
}

TEST(NvlinkRate, TableWhenTheDriverGivesNone) {
  const auto r = nvlink_link_rate(std::nullopt, "9.0");
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->gb_per_s, 25.0);
  EXPECT_NE(r->source.find("table"), std::string::npos) << r->source;
  EXPECT_DOUBLE_EQ(nvlink_link_rate(std::nullopt, "10.0")->gb_per_s, 50.0);
  EXPECT_DOUBLE_EQ(nvlink_link_rate(0.0, "8.0")->gb_per_s, 25.0);  // 0 is no rate
  EXPECT_FALSE(nvlink_link_rate(std::nullopt, "8.6").has_value());
  EXPECT_FALSE(nvlink_link_rate(std::nullopt, "").has_value());
}

TEST(NvlinkCount, LinkClassification) {
  EXPECT_EQ(nvlink_count("nvlink18"), 18);
  EXPECT_EQ(nvlink_count("nvlink1"), 1);
  EXPECT_EQ(nvlink_count("nvlink4"), 4);
  for (const char* other : {"pcie-p2p", "host-staged", "none", "unknown", "nvlink", "nvlink0",
                            "nvlink-2", "nvlink18x", "NV18", "", "nvlink 18"}) {
    EXPECT_FALSE(nvlink_count(other).has_value()) << other;
  }
}

NvidiaSmiGpu smi_row(int index, const std::string& bus, const std::string& uuid) {
  NvidiaSmiGpu row;
  row.index = index;
  row.pci_bus_id = bus;
  row.uuid = uuid;
  return row;
}

GpuInventory gpu(int index, const std::string& bus, const std::string& uuid) {
  GpuInventory g;
  g.index = index;
  g.pci_bus_id = bus;
  g.uuid = uuid;
  return g;
}

TEST(ApplyNvlinkStatus, MatchesByUuidThenByBusId) {
  // CUDA_VISIBLE_DEVICES=1,0: CUDA's GPU 0 is nvidia-smi's GPU 1.
  std::vector<GpuInventory> gpus = {gpu(0, "0000:2a:00.0", "GPU-b"),
                                    gpu(1, "0000:18:00.0", "GPU-a")};
  NvlinkGpuStatus a;
  a.index = 0;
  a.uuid = "GPU-a";
  a.active_links = 18;
  a.link_gb_per_s = 26.562;
  NvlinkGpuStatus b = a;
  b.index = 1;
  b.uuid = "GPU-b";
  b.active_links = 12;
  EXPECT_EQ(apply_nvlink_status(gpus, {a, b}, {}), 2u);
  ASSERT_TRUE(gpus[0].nvlink && gpus[1].nvlink);
  EXPECT_EQ(gpus[0].nvlink->active_links, 12);
  EXPECT_EQ(gpus[1].nvlink->active_links, 18);
  EXPECT_DOUBLE_EQ(*gpus[1].nvlink->link_gb_per_s, 26.562);

  // No UUIDs in the inventory (rows without them): nvidia-smi index -> row -> bus id.
  std::vector<GpuInventory> bare = {gpu(0, "0000:2a:00.0", ""), gpu(1, "0000:18:00.0", "")};
  const std::vector<NvidiaSmiGpu> rows = {smi_row(0, "0000:18:00.0", ""),
                                          smi_row(1, "0000:2a:00.0", "")};
  EXPECT_EQ(apply_nvlink_status(bare, {a, b}, rows), 2u);
  EXPECT_EQ(bare[0].nvlink->active_links, 12);
  EXPECT_EQ(bare[1].nvlink->active_links, 18);

  // A block of a GPU CUDA does not see is dropped; GPUs without a block keep no entry.
  std::vector<GpuInventory> one = {gpu(0, "0000:18:00.0", "GPU-a"), gpu(1, "0000:99:00.0", "")};
  NvlinkGpuStatus hidden = a;
  hidden.uuid = "GPU-z";
  hidden.index = 7;
  EXPECT_EQ(apply_nvlink_status(one, {a, hidden}, rows), 1u);
  EXPECT_TRUE(one[0].nvlink.has_value());
  EXPECT_FALSE(one[1].nvlink.has_value());
}

Inventory inventory_with_nvlink() {
  Inventory inv;
  inv.nvidia_smi_status = "ok";
  inv.nvlink_status = "ok";
  GpuInventory a = gpu(0, "0000:18:00.0", "GPU-a");
  a.name = "NVIDIA H200";
  a.compute_capability = "9.0";
  a.nvlink = GpuNvlink{18, 26.562};
  GpuInventory b = gpu(1, "0000:2a:00.0", "GPU-b");
  b.name = "NVIDIA H200";
  b.compute_capability = "9.0";
  b.nvlink = GpuNvlink{0, std::nullopt};
  GpuInventory c = gpu(2, "0000:3a:00.0", "GPU-c");  // the driver said nothing about it
  inv.gpus = {a, b, c};
  return inv;
}

TEST(InventoryNvlinkJson, FieldsUnderEachGpuAndRoundTrip) {
  const Inventory inv = inventory_with_nvlink();
  const auto json = to_json(inv);
  const auto& g0 = json.at("gpus").at(0);
  EXPECT_EQ(g0.at("compute_capability"), "9.0");
  EXPECT_EQ(g0.at("nvlink").at("active_links"), 18);
  EXPECT_DOUBLE_EQ(g0.at("nvlink").at("link_gb_per_s").get<double>(), 26.562);
  EXPECT_EQ(g0.at("nvlink").begin().key(), "active_links");
  EXPECT_EQ(json.at("gpus").at(1).at("nvlink").at("active_links"), 0);
  EXPECT_TRUE(json.at("gpus").at(1).at("nvlink").at("link_gb_per_s").is_null());
  EXPECT_TRUE(json.at("gpus").at(2).at("nvlink").is_null());
  EXPECT_EQ(json.at("gpus").at(2).at("compute_capability"), "");
  EXPECT_EQ(json.at("nvlink_status"), "ok");

  const Inventory back = inventory_from_json(nlohmann::json::parse(json.dump()));
  EXPECT_EQ(to_json(back), json);
  ASSERT_TRUE(back.gpus[0].nvlink);
  EXPECT_EQ(back.gpus[0].nvlink->active_links, 18);
  EXPECT_FALSE(back.gpus[2].nvlink.has_value());
}

TEST(InventoryNvlinkJson, OlderContextsLoadAndWrongTypesNameTheField) {
  auto json = nlohmann::json::parse(to_json(inventory_with_nvlink()).dump());
  auto old = json;
  for (auto& g : old["gpus"]) {
    g.erase("nvlink");
    g.erase("compute_capability");
  }
  old.erase("nvlink_status");
  const Inventory loaded = inventory_from_json(old);
  EXPECT_FALSE(loaded.gpus[0].nvlink.has_value());
  EXPECT_EQ(loaded.gpus[0].compute_capability, "");

  auto bad = json;
  bad["gpus"][0]["nvlink"]["active_links"] = "18";
  try {
    inventory_from_json(bad);
    ADD_FAILURE() << "accepted a string link count";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/gpus/0/nvlink/active_links"), std::string::npos)
        << e.what();
  }
  bad = json;
  bad["gpus"][1]["nvlink"] = 3;
  EXPECT_THROW(inventory_from_json(bad), std::invalid_argument);
}

using pathbench::testing::FakeNvidiaSmi;

TEST(CollectInventoryNvlink, EightH100FromNvidiaSmi) {
  FakeNvidiaSmi fake("case \"$1\" in\n  topo) cat '" +
                     nvidia_smi_fixture_path("topo_8gpu_nv18_nics.txt") +
                     "' ;;\n  nvlink) [ \"$2\" = -s ] || exit 2; cat '" +
                     nvidia_smi_fixture_path("nvlink_8gpu_h100_nv18.txt") + "' ;;\n  *) cat '" +
                     nvidia_smi_fixture_path("h100_sxm_x8.csv") + "' ;;\nesac");
  const Inventory inv = collect_inventory({});
  if (inv.cuda_unavailable_reason.empty()) {
    GTEST_SKIP() << "CUDA sees a real GPU here; the fake rows would be merged into it";
  }
  EXPECT_EQ(inv.nvlink_status, "ok");
  ASSERT_EQ(inv.gpus.size(), 8u);
  for (const auto& g : inv.gpus) {
    ASSERT_TRUE(g.nvlink.has_value()) << g.index;
    EXPECT_EQ(g.nvlink->active_links, 18);
    EXPECT_DOUBLE_EQ(*g.nvlink->link_gb_per_s, 26.562);
  }
  const auto json = to_json(inv);
  EXPECT_EQ(json.at("gpus").at(5).at("nvlink").at("active_links"), 18);
  EXPECT_EQ(to_json(inventory_from_json(nlohmann::json::parse(json.dump()))), json);
}

TEST(CollectInventoryNvlink, OneGpuWithoutNvlinkAndFailures) {
  {
    FakeNvidiaSmi fake("[ \"$1\" = nvlink ] && { cat '" +
                       nvidia_smi_fixture_path("nvlink_1gpu.txt") + "'; exit 0; }\ncat '" +
                       nvidia_smi_fixture_path("h200_x1.csv") + "'");
    const Inventory inv = collect_inventory({});
    if (inv.cuda_unavailable_reason.empty()) GTEST_SKIP() << "CUDA sees a real GPU here";
    EXPECT_EQ(inv.nvlink_status, "ok");
    ASSERT_EQ(inv.gpus.size(), 1u);
    ASSERT_TRUE(inv.gpus[0].nvlink.has_value());
    EXPECT_EQ(inv.gpus[0].nvlink->active_links, 0);
    EXPECT_FALSE(inv.gpus[0].nvlink->link_gb_per_s.has_value());
  }
  {
    // Drivers without the subcommand, or a failure: no entry, and the status says why.
    FakeNvidiaSmi fake(
        "[ \"$1\" = nvlink ] && { echo 'Invalid combination of input arguments.'; "
        "exit 3; }\ncat '" +
        nvidia_smi_fixture_path("h200_x1.csv") + "'");
    const Inventory inv = collect_inventory({});
    EXPECT_EQ(inv.nvlink_status.rfind("nvidia-smi nvlink -s: ", 0), 0u) << inv.nvlink_status;
    EXPECT_NE(inv.nvlink_status.find("Invalid combination"), std::string::npos)
        << inv.nvlink_status;
    for (const auto& g : inv.gpus) EXPECT_FALSE(g.nvlink.has_value());
  }
  {
    // A fake that answers every call with the CSV: not this output, and not an error either.
    FakeNvidiaSmi fake("cat '" + nvidia_smi_fixture_path("h200_x1.csv") + "'");
    const Inventory inv = collect_inventory({});
    EXPECT_EQ(inv.nvlink_status.rfind("nvidia-smi nvlink -s output not understood: ", 0), 0u)
        << inv.nvlink_status;
  }
  {
    FakeNvidiaSmi fake("exit 9");
    const Inventory inv = collect_inventory({});
    EXPECT_EQ(inv.nvlink_status.rfind("not read: nvidia-smi unavailable", 0), 0u)
        << inv.nvlink_status;
  }
}

}  // namespace
}  // namespace pathbench::test_nvlink
