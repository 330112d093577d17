#include <gtest/gtest.h>

#include <unistd.h>
#include "fake_nvidia_smi.hpp"
#include "inventory_json_errors.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "inventory/fingerprint.hpp"
#include "inventory/inventory.hpp"
#include "inventory/topology.hpp"

namespace pathbench::test_topology {
namespace {

using pathbench::testing::nvidia_smi_fixture_path;
using pathbench::testing::read_nvidia_smi_fixture;

P2PMatrix all_peers(int gpus, bool access, int rank, bool atomics) {
  P2PMatrix p2p;
  for (int i = 0; i < gpus; ++i) {
    for (int j = 0; j < gpus; ++j) {
      if (i != j) p2p.push_back(PeerInfo{i, j, access, rank, atomics});
    }
  }
  return p2p;
}

TEST(TopoParse, Argv) {
  EXPECT_EQ(nvidia_smi_topo_argv(), (std::vector<std::string>{"nvidia-smi", "topo", "-m"}));
}

TEST(TopoParse, OneGpuWithAnsiUnderline) {
  const std::string text = read_nvidia_smi_fixture("topo_1gpu.txt");
  ASSERT_NE(text.find("\x1b[4m"), std::string::npos);  // the fixture really has the escapes
  const TopoMatrix topo = parse_nvidia_smi_topo(text);
  EXPECT_EQ(topo.gpus, (std::vector<std::string>{"GPU0"}));
  ASSERT_EQ(topo.cells.size(), 1u);
  EXPECT_EQ(topo.cells[0], (std::vector<std::string>{"X"}));
  EXPECT_TRUE(build_link_map(topo, {}).empty());
}

TEST(TopoParse, TwoGpusNv18) {
  const TopoMatrix topo = parse_nvidia_smi_topo(read_nvidia_smi_fixture("topo_2gpu_nv18.txt"));
  EXPECT_EQ(topo.gpus, (std::vector<std::string>{"GPU0", "GPU1"}));
  ASSERT_EQ(topo.cells.size(), 2u);
  EXPECT_EQ(topo.cells[0], (std::vector<std::string>{"X", "NV18"}));
  EXPECT_EQ(topo.cells[1], (std::vector<std::string>{"NV18", "X"}));
  for (const auto& gpu : topo.gpus) EXPECT_EQ(gpu.find('\x1b'), std::string::npos);

  const auto links = build_link_map(topo, all_peers(2, true, 0, true));
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].from, 0);
  EXPECT_EQ(links[0].to, 1);
  EXPECT_EQ(links[1].from, 1);
  EXPECT_EQ(links[1].to, 0);
  for (const auto& link : links) {
    EXPECT_EQ(link.type, LinkType::kNvlink);
    EXPECT_EQ(link.nvlinks, 18);
    EXPECT_EQ(link.param, "nvlink18");
    EXPECT_EQ(link.peer_access, true);
    EXPECT_EQ(link.performance_rank, 0);
    EXPECT_EQ(link.native_atomics, true);
  }
}

TEST(TopoParse, TwoGpusPcie) {
  const TopoMatrix topo = parse_nvidia_smi_topo(read_nvidia_smi_fixture("topo_2gpu_pcie.txt"));
  ASSERT_EQ(topo.gpus.size(), 2u);
  EXPECT_EQ(topo.cells[0][1], "PIX");
  EXPECT_EQ(topo.cells[1][0], "PIX");

  auto with_peer = build_link_map(topo, all_peers(2, true, 1, false));
  ASSERT_EQ(with_peer.size(), 2u);
  EXPECT_EQ(with_peer[0].type, LinkType::kPix);
  EXPECT_EQ(with_peer[0].nvlinks, 0);
  EXPECT_EQ(with_peer[0].param, "pcie-p2p");
  EXPECT_EQ(with_peer[0].performance_rank, 1);
  EXPECT_EQ(with_peer[0].native_atomics, false);

  auto without_peer = build_link_map(topo, all_peers(2, false, 0, false));
  EXPECT_EQ(without_peer[0].param, "host-staged");
  EXPECT_EQ(without_peer[1].param, "host-staged");

  // Without CUDA the driver attributes are unknown: PIX still reads as P2P-capable.
  auto unknown = build_link_map(topo, {});
  EXPECT_FALSE(unknown[0].peer_access.has_value());
  EXPECT_FALSE(unknown[0].performance_rank.has_value());
  EXPECT_FALSE(unknown[0].native_atomics.has_value());
  EXPECT_EQ(unknown[0].param, "pcie-p2p");
}

TEST(TopoParse, EightGpusNicColumnsAndRowsAreIgnored) {
  const TopoMatrix topo = parse_nvidia_smi_topo(read_nvidia_smi_fixture("topo_8gpu_nv18_nics.txt"));
  ASSERT_EQ(topo.gpus.size(), 8u);
  EXPECT_EQ(topo.gpus.back(), "GPU7");
  ASSERT_EQ(topo.cells.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    ASSERT_EQ(topo.cells[i].size(), 8u) << "NIC columns must be dropped";
    for (std::size_t j = 0; j < 8; ++j) EXPECT_EQ(topo.cells[i][j], i == j ? "X" : "NV18");
  }
  const auto links = build_link_map(topo, all_peers(8, true, 0, true));
  EXPECT_EQ(links.size(), 56u);
  for (const auto& link : links) {
    EXPECT_NE(link.from, link.to);
    EXPECT_EQ(link.param, "nvlink18");
    EXPECT_EQ(link.nvlinks, 18);
  }
  EXPECT_EQ(links.front().from, 0);
  EXPECT_EQ(links.front().to, 1);
  EXPECT_EQ(links.back().from, 7);
  EXPECT_EQ(links.back().to, 6);
}

TEST(TopoParse, MalformedNamesTheLine) {
  try {
    parse_nvidia_smi_topo(read_nvidia_smi_fixture("topo_malformed.txt"));
    ADD_FAILURE() << "accepted the malformed fixture";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
  auto expect_line = [](const std::string& text, const std::string& line) {
    try {
      parse_nvidia_smi_topo(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(line), std::string::npos) << e.what();
    }
  };
  EXPECT_THROW(parse_nvidia_smi_topo(""), std::invalid_argument);
  expect_line("No devices were found\n", "line 1");
  expect_line("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\t0-3\n", "line 1");  // GPU1 row missing
  expect_line("\tGPU0\tGPU1\tCPU Affinity\nGPU1\tNV18\t X \t0-3\n", "line 2");  // out of order
  expect_line("\tGPU0\tGPU1\tCPU Affinity\nGPU0\tNV18\t X \t0-3\n", "line 2");  // self not X
  expect_line("\tGPU0\tCPU Affinity\nGPU0\t X \t0-3\nGPU9\t X \t0-3\n", "line 3");  // not a column
}

TEST(TopoParse, CrLfAndSpacesInsteadOfTabs) {
  const TopoMatrix topo = parse_nvidia_smi_topo(
      "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity\r\n"
      "GPU0     X      SYS     PHB     0-7     0\r\n"
      "GPU1    SYS      X      SYS     8-15    1\r\n"
      "NIC0    PHB     SYS      X\r\n");
  ASSERT_EQ(topo.gpus.size(), 2u);
  EXPECT_EQ(topo.cells[0], (std::vector<std::string>{"X", "SYS"}));
  auto links = build_link_map(topo, {});
  EXPECT_EQ(links[0].type, LinkType::kSys);
  EXPECT_EQ(links[0].param, "host-staged");
}

TEST(LinkParam, Rules) {
  EXPECT_EQ(link_param(LinkType::kNvlink, 18, std::nullopt), "nvlink18");
  EXPECT_EQ(link_param(LinkType::kNvlink, 4, true), "nvlink4");
  for (LinkType type : {LinkType::kPix, LinkType::kPxb, LinkType::kPhb, LinkType::kNode}) {
    EXPECT_EQ(link_param(type, 0, true), "pcie-p2p") << link_type_name(type);
    EXPECT_EQ(link_param(type, 0, false), "host-staged") << link_type_name(type);
  }
  EXPECT_EQ(link_param(LinkType::kSys, 0, false), "host-staged");
  EXPECT_EQ(link_param(LinkType::kSys, 0, std::nullopt), "host-staged");
  EXPECT_EQ(link_param(LinkType::kPix, 0, std::nullopt), "pcie-p2p");
  EXPECT_EQ(link_param(LinkType::kPxb, 0, std::nullopt), "pcie-p2p");
  EXPECT_EQ(link_param(LinkType::kPhb, 0, std::nullopt), "host-staged");
  EXPECT_EQ(link_param(LinkType::kNode, 0, std::nullopt), "host-staged");
  EXPECT_EQ(link_param(LinkType::kUnknown, 0, std::nullopt), "host-staged");
}

TEST(LinkType, CellsAndNames) {
  int nvlinks = -1;
  EXPECT_EQ(link_type_from_cell("NV18", &nvlinks), LinkType::kNvlink);
  EXPECT_EQ(nvlinks, 18);
  EXPECT_EQ(link_type_from_cell("NV4", &nvlinks), LinkType::kNvlink);
  EXPECT_EQ(nvlinks, 4);
  EXPECT_EQ(link_type_from_cell("PIX", &nvlinks), LinkType::kPix);
  EXPECT_EQ(nvlinks, 0);
  EXPECT_EQ(link_type_from_cell("PXB"), LinkType::kPxb);
  EXPECT_EQ(link_type_from_cell("PHB"), LinkType::kPhb);
  EXPECT_EQ(link_type_from_cell("NODE"), LinkType::kNode);
  EXPECT_EQ(link_type_from_cell("SYS"), LinkType::kSys);
  EXPECT_EQ(link_type_from_cell("SOC"), LinkType::kSys);
  EXPECT_EQ(link_type_from_cell("X"), LinkType::kSelf);
  EXPECT_EQ(link_type_from_cell("NV"), LinkType::kUnknown);
  EXPECT_EQ(link_type_from_cell("C2C"), LinkType::kUnknown);
  for (LinkType type : {LinkType::kNvlink, LinkType::kPix, LinkType::kPxb, LinkType::kPhb,
                        LinkType::kNode, LinkType::kSys, LinkType::kSelf, LinkType::kUnknown}) {
    EXPECT_EQ(link_type_from_name(link_type_name(type)), type);
  }
  EXPECT_EQ(link_type_name(LinkType::kNvlink), "nvlink");
  EXPECT_FALSE(link_type_from_name("NV18").has_value());
}

TEST(BuildLinkMap, UsesLabelsAndMatchesPeersByPair) {
  TopoMatrix topo;
  topo.gpus = {"GPU2", "GPU5"};
  topo.cells = {{"X", "PXB"}, {"PXB", "X"}};
  const auto links = build_link_map(topo, {PeerInfo{5, 2, false, 3, false}});
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].from, 2);
  EXPECT_EQ(links[0].to, 5);
  EXPECT_FALSE(links[0].peer_access.has_value());
  EXPECT_EQ(links[0].param, "pcie-p2p");
  EXPECT_EQ(links[1].from, 5);
  EXPECT_EQ(links[1].peer_access, false);
  EXPECT_EQ(links[1].performance_rank, 3);
  EXPECT_EQ(links[1].param, "host-staged");

  topo.gpus = {"GPU0", "NIC0"};
  EXPECT_THROW(build_link_map(topo, {}), std::invalid_argument);
  topo.gpus = {"GPU0", "GPU1", "GPU2"};
  EXPECT_THROW(build_link_map(topo, {}), std::invalid_argument);
}

Inventory two_gpu_inventory() {
  Inventory inv;
  inv.hostname = "gpu-node-2";
  inv.cpu_model = "AMD EPYC 9454 48-Core Processor";
  inv.logical_cpus = 32;
  inv.numa_nodes = {{0, {0, 1, 2, 3}, std::uint64_t{128} << 30}};
  for (int i = 0; i < 2; ++i) {
    GpuInventory gpu;
    gpu.index = i;
    gpu.name = "NVIDIA H200";
    gpu.pci_bus_id = i == 0 ? "0000:19:00.0" : "0000:3b:00.0";
    gpu.memory_bytes = std::uint64_t{141} << 30;
    inv.gpus.push_back(gpu);
  }
  inv.nvidia_smi_status = "ok";
  inv.topo_status = "ok";
  inv.links = build_link_map(parse_nvidia_smi_topo(read_nvidia_smi_fixture("topo_2gpu_nv18.txt")),
                             all_peers(2, true, 0, true));
  inv.links[1].performance_rank.reset();  // a null survives too
  return inv;
}

TEST(InventoryLinks, JsonRoundTrip) {
  const Inventory original = two_gpu_inventory();
  const auto json = to_json(original);
  EXPECT_EQ(json.at("topo_status"), "ok");
  ASSERT_EQ(json.at("links").size(), 2u);
  const auto& first = json.at("links").at(0);
  EXPECT_EQ(first.at("from"), 0);
  EXPECT_EQ(first.at("to"), 1);
  EXPECT_EQ(first.at("type"), "nvlink");
  EXPECT_EQ(first.at("nvlinks"), 18);
  EXPECT_EQ(first.at("peer_access"), true);
  EXPECT_EQ(first.at("performance_rank"), 0);
  EXPECT_EQ(first.at("native_atomics"), true);
  EXPECT_EQ(first.at("param"), "nvlink18");
  EXPECT_TRUE(json.at("links").at(1).at("performance_rank").is_null());

  const Inventory back = inventory_from_json(nlohmann::json::parse(json.dump()));
  EXPECT_EQ(to_json(back), json);
  ASSERT_EQ(back.links.size(), 2u);
  EXPECT_EQ(back.links[0].type, LinkType::kNvlink);
  EXPECT_EQ(back.links[0].nvlinks, 18);
  EXPECT_EQ(back.links[0].peer_access, true);
  EXPECT_FALSE(back.links[1].performance_rank.has_value());
  EXPECT_EQ(back.links[1].param, "nvlink18");
  EXPECT_EQ(back.topo_status, "ok");
  EXPECT_EQ(topology_fingerprint(back), topology_fingerprint(original));
}

TEST(InventoryLinks, JsonErrorsNameTheField) {
  auto json = nlohmann::json::parse(to_json(two_gpu_inventory()).dump());
  const auto expect_error = testing::expect_inventory_json_error;
  auto bad = json;
  bad["links"][1]["type"] = "warp-drive";
  expect_error(bad, "/links/1/type");
  bad = json;
  bad["links"][0]["peer_access"] = "yes";
  expect_error(bad, "/links/0/peer_access");
  bad = json;
  bad["links"] = 3;
  expect_error(bad, "/links");
  // Results written before the link map still load.
  bad = json;
  bad.erase("links");
  bad.erase("topo_status");
  EXPECT_TRUE(inventory_from_json(bad).links.empty());
}

TEST(InventoryLinks, CanonicalTextHasOneLinePerLink) {
  const std::string text = topology_canonical_text(two_gpu_inventory());
  EXPECT_NE(text.find("link 0->1 type=nvlink nvlinks=18\n"), std::string::npos) << text;
  EXPECT_NE(text.find("link 1->0 type=nvlink nvlinks=18\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("rank"), std::string::npos) << text;
  EXPECT_EQ(text.find("peer"), std::string::npos) << text;
}

using pathbench::testing::FakeNvidiaSmi;

TEST(CollectInventoryLinks, EightGpusFromNvidiaSmi) {
  FakeNvidiaSmi fake("if [ \"$1\" = topo ]; then [ \"$2\" = -m ] || exit 2; cat '" +
                     nvidia_smi_fixture_path("topo_8gpu_nv18_nics.txt") + "'; else cat '" +
                     nvidia_smi_fixture_path("h100_sxm_x8.csv") + "'; fi");
  const Inventory inv = collect_inventory({});
  if (inv.cuda_unavailable_reason.empty()) {
    GTEST_SKIP() << "CUDA sees a real GPU here; the fake rows would be merged into it";
  }
  ASSERT_EQ(inv.gpus.size(), 8u);
  EXPECT_EQ(inv.topo_status, "ok");
  ASSERT_EQ(inv.links.size(), 56u);
  for (const auto& link : inv.links) {
    EXPECT_EQ(link.param, "nvlink18");
    EXPECT_FALSE(link.peer_access.has_value());  // no CUDA: the driver was not asked
  }
  EXPECT_NE(topology_canonical_text(inv).find("link 7->6 type=nvlink nvlinks=18\n"),
            std::string::npos);
  EXPECT_EQ(to_json(inventory_from_json(to_json(inv))), to_json(inv));
}

TEST(CollectInventoryLinks, StatusSaysWhyThereAreNoLinks) {
  {
    FakeNvidiaSmi fake("[ \"$1\" = topo ] && exit 7\ncat '" +
                       nvidia_smi_fixture_path("h200_x1.csv") + "'");
    const Inventory inv = collect_inventory({});
    if (inv.cuda_unavailable_reason.empty()) GTEST_SKIP() << "CUDA sees a real GPU here";
    EXPECT_EQ(inv.topo_status, "one GPU: no GPU pairs");
    EXPECT_TRUE(inv.links.empty());
  }
  {
    FakeNvidiaSmi fake("if [ \"$1\" = topo ]; then cat '" +
                       nvidia_smi_fixture_path("topo_malformed.txt") + "'; else cat '" +
                       nvidia_smi_fixture_path("h100_sxm_x8.csv") + "'; fi");
    const Inventory inv = collect_inventory({});
    EXPECT_EQ(inv.topo_status.rfind("nvidia-smi topo -m output not understood: ", 0), 0u)
        << inv.topo_status;
    EXPECT_NE(inv.topo_status.find("line 3"), std::string::npos) << inv.topo_status;
    EXPECT_TRUE(inv.links.empty());
  }
  {
    FakeNvidiaSmi fake("exit 9");
    const Inventory inv = collect_inventory({});
    EXPECT_EQ(inv.topo_status.rfind("no topology: nvidia-smi unavailable", 0), 0u)
        << inv.topo_status;
  }
}

}  // namespace
}  // namespace pathbench::test_topology
