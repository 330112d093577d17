#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "inventory/fingerprint.hpp"
#include "inventory/inventory.hpp"

namespace pathbench::test_fingerprint {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

GpuInventory h200(int index, const std::string& bus, int node) {
  GpuInventory gpu;
  gpu.index = index;
  gpu.name = "NVIDIA H200";
  gpu.uuid = "GPU-3f1c2b7e-8d4a-5c6b-9e0f-1a2b3c4d5e6" + std::to_string(index);
  gpu.pci_bus_id = bus;
  gpu.pcie_gen_current = 5;
  gpu.pcie_gen_max = 5;
  gpu.pcie_width_current = 16;
  gpu.pcie_width_max = 16;
  gpu.numa_node = node;
  gpu.local_cpus = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  gpu.clock_sm_mhz = 1980;
  gpu.clock_mem_mhz = 3201;
  gpu.clock_sm_max_mhz = 1980;
  gpu.clock_mem_max_mhz = 3201;
  gpu.memory_bytes = 143771 * kMiB;
  gpu.vbios = "96.00.AF.00.01";
  return gpu;
}

Inventory sample() {
  Inventory inv;
  inv.tool_version = "0.1.0";
  inv.git_sha = "abcdef123456";
  inv.hostname = "gpu-node-17";
  inv.cpu_model = "AMD EPYC 9454 48-Core Processor";
  inv.logical_cpus = 16;
  inv.numa_nodes = {{0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 128 * kGiB}};
  inv.cpuset = inv.numa_nodes[0].cpus;
  inv.mems_allowed = {0};
  inv.thp_enabled = "madvise";
  inv.hugepages_total = 0;
  inv.hugepages_free = 0;
  inv.hugepage_bytes = 2 * kMiB;
  inv.mem_total_bytes = 131890360ull * 1024;
  inv.mem_available_bytes = 127520932ull * 1024;
  inv.kernel = "Linux 6.8.0-49-generic x86_64";
  inv.driver_version = "580.159.04";
  inv.cuda_runtime_version = 13000;
  inv.cuda_driver_version = 13000;
  inv.nvidia_smi_status = "ok";
  inv.gpus = {h200(0, "0000:19:00.0", 0)};
  return inv;
}

using Mutation = std::function<void(Inventory&)>;

TEST(Fingerprint, IsAStableHexDigest) {
  const std::string a = topology_fingerprint(sample());
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(a, topology_fingerprint(sample()));
}

TEST(Fingerprint, IgnoresEverythingThatIsNotTopology) {
  const std::string base = topology_fingerprint(sample());
  const std::pair<const char*, Mutation> unrelated[] = {
      {"sm clock", [](Inventory& i) { i.gpus[0].clock_sm_mhz = 345; }},
      {"mem clock", [](Inventory& i) { i.gpus[0].clock_mem_mhz.reset(); }},
      {"max clocks", [](Inventory& i) { i.gpus[0].clock_sm_max_mhz = 1755; }},
      {"current link gen", [](Inventory& i) { i.gpus[0].pcie_gen_current = 1; }},
      {"current link width", [](Inventory& i) { i.gpus[0].pcie_width_current = 8; }},
      {"free memory", [](Inventory& i) { i.mem_available_bytes /= 2; }},
      {"hostname", [](Inventory& i) { i.hostname = "gpu-node-18"; }},
      {"hugepages",
       [](Inventory& i) {
         i.hugepages_total = 1024;
         i.hugepages_free = 1000;
       }},
      {"driver",
       [](Inventory& i) {
         i.driver_version = "590.1.2";
         i.cuda_driver_version = 13010;
       }},
      {"vbios", [](Inventory& i) { i.gpus[0].vbios = "96.00.B0.00.01"; }},
      {"uuid", [](Inventory& i) { i.gpus[0].uuid = "GPU-other"; }},
      {"tool and time",
       [](Inventory& i) {
         i.tool_version = "0.2.0";
         i.git_sha = "000000000000";
       }},
      {"process binding",
       [](Inventory& i) {
         i.cpuset = {0, 1};
         i.cpuset_aligned_with_gpu = false;
       }},
      {"thp and warnings",
       [](Inventory& i) {
         i.thp_enabled = "always";
         i.warnings.push_back("something");
       }},
      {"node type label", [](Inventory& i) { i.node_type = "custom"; }},
      {"GPU memory within a GiB", [](Inventory& i) { i.gpus[0].memory_bytes -= 100 * kMiB; }},
      {"node memory within a GiB",
       [](Inventory& i) { i.numa_nodes[0].memory_bytes += 200 * kMiB; }},
      // Ballooning VMs change node memory between runs (seen on the H200 machine).
      {"node memory", [](Inventory& i) { i.numa_nodes[0].memory_bytes = 256 * kGiB; }},
  };
  for (const auto& [what, mutate] : unrelated) {
    Inventory inv = sample();
    mutate(inv);
    EXPECT_EQ(topology_fingerprint(inv), base) << what;
  }
}

TEST(Fingerprint, IgnoresCudaDeviceOrder) {
  // CUDA_DEVICE_ORDER / CUDA_VISIBLE_DEVICES permute indexes; the hardware is the same.
  Inventory pci_order = sample();
  pci_order.gpus.push_back(h200(1, "0000:1a:00.0", 0));
  Inventory fastest_first = pci_order;
  std::swap(fastest_first.gpus[0], fastest_first.gpus[1]);
  fastest_first.gpus[0].index = 0;
  fastest_first.gpus[1].index = 1;
  EXPECT_EQ(topology_fingerprint(pci_order), topology_fingerprint(fastest_first));
}

TEST(Fingerprint, NumaNodeOrderDoesNotMatter) {
  Inventory a = sample();
  a.numa_nodes = {{0, {0, 1, 2, 3}, 64 * kGiB}, {1, {4, 5, 6, 7}, 64 * kGiB}};
  Inventory b = a;
  std::swap(b.numa_nodes[0], b.numa_nodes[1]);
  EXPECT_EQ(topology_fingerprint(a), topology_fingerprint(b));
}

TEST(Fingerprint, ChangesWithTopology) {
  const std::string base = topology_fingerprint(sample());
  const std::pair<const char*, Mutation> relevant[] = {
      {"GPU model", [](Inventory& i) { i.gpus[0].name = "NVIDIA H100 80GB HBM3"; }},
      {"bus id", [](Inventory& i) { i.gpus[0].pci_bus_id = "0000:65:00.0"; }},
      {"max width", [](Inventory& i) { i.gpus[0].pcie_width_max = 8; }},
      {"max gen", [](Inventory& i) { i.gpus[0].pcie_gen_max = 4; }},
      {"GPU NUMA node", [](Inventory& i) { i.gpus[0].numa_node.reset(); }},
      {"GPU memory", [](Inventory& i) { i.gpus[0].memory_bytes = 80 * kGiB; }},
      {"GPU count", [](Inventory& i) { i.gpus.push_back(h200(1, "0000:1a:00.0", 0)); }},
      {"no GPU", [](Inventory& i) { i.gpus.clear(); }},
      {"NUMA layout",
       [](Inventory& i) {
         i.numa_nodes = {{0, {0, 1, 2, 3, 4, 5, 6, 7}, 64 * kGiB},
                         {1, {8, 9, 10, 11, 12, 13, 14, 15}, 64 * kGiB}};
       }},
      {"node cpus", [](Inventory& i) { i.numa_nodes[0].cpus.pop_back(); }},
      {"CPU model", [](Inventory& i) { i.cpu_model = "AMD EPYC 9654 96-Core Processor"; }},
      {"logical CPUs", [](Inventory& i) { i.logical_cpus = 32; }},
  };
  for (const auto& [what, mutate] : relevant) {
    Inventory inv = sample();
    mutate(inv);
    EXPECT_NE(topology_fingerprint(inv), base) << what;
  }
}

TEST(Fingerprint, CanonicalTextListsTheFacts) {
  const std::string text = topology_canonical_text(sample());
  EXPECT_NE(text.find("cpu_model=AMD EPYC 9454 48-Core Processor\n"), std::string::npos) << text;
  EXPECT_NE(text.find("logical_cpus=16\n"), std::string::npos) << text;
  EXPECT_NE(text.find("numa id=0 cpus=0-15\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpu name=NVIDIA H200 bus=0000:19:00.0 pcie_gen_max=5 pcie_width_max=16 "
                      "numa=0 mem_gib=140\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("gpu-node-17"), std::string::npos);
  EXPECT_EQ(text.find("580.159"), std::string::npos);
}

Inventory two_linked_gpus() {
  Inventory inv = sample();
  inv.gpus.push_back(h200(1, "0000:1a:00.0", 0));
  for (int from = 0; from < 2; ++from) {
    GpuLink link;
    link.from = from;
    link.to = 1 - from;
    link.type = LinkType::kNvlink;
    link.nvlinks = 18;
    link.peer_access = true;
    link.performance_rank = 0;
    link.native_atomics = true;
    link.param = "nvlink18";
    inv.links.push_back(link);
  }
  return inv;
}

TEST(Fingerprint, LinkTypeChangesTheFingerprint) {
  const std::string base = topology_fingerprint(two_linked_gpus());
  const std::pair<const char*, Mutation> relevant[] = {
      {"link type",
       [](Inventory& i) {
         for (auto& link : i.links) {
           link.type = LinkType::kPix;
           link.nvlinks = 0;
         }
       }},
      {"NVLink count", [](Inventory& i) { i.links[0].nvlinks = 12; }},
      {"links lost", [](Inventory& i) { i.links.clear(); }},
  };
  for (const auto& [what, mutate] : relevant) {
    Inventory inv = two_linked_gpus();
    mutate(inv);
    EXPECT_NE(topology_fingerprint(inv), base) << what;
  }
  EXPECT_NE(topology_canonical_text(two_linked_gpus()).find("link 0->1 type=nvlink nvlinks=18\n"),
            std::string::npos)
      << topology_canonical_text(two_linked_gpus());
}

TEST(Fingerprint, PerformanceRankDoesNot) {
  const std::string base = topology_fingerprint(two_linked_gpus());
  const std::pair<const char*, Mutation> unrelated[] = {
      {"performance rank", [](Inventory& i) { i.links[0].performance_rank = 3; }},
      {"no rank", [](Inventory& i) { i.links[1].performance_rank.reset(); }},
      {"peer access and atomics",
       [](Inventory& i) {
         i.links[0].peer_access = false;
         i.links[0].native_atomics.reset();
         i.links[0].param = "host-staged";
       }},
      {"topo status", [](Inventory& i) { i.topo_status = "ok"; }},
      {"link order", [](Inventory& i) { std::swap(i.links[0], i.links[1]); }},
  };
  for (const auto& [what, mutate] : unrelated) {
    Inventory inv = two_linked_gpus();
    mutate(inv);
    EXPECT_EQ(topology_fingerprint(inv), base) << what;
  }
}

TEST(Fingerprint, LinksIgnoreCudaDeviceOrder) {
  Inventory pci_order = two_linked_gpus();
  pci_order.links[0].nvlinks = 4;  // asymmetric, so a wrong mapping would show
  Inventory fastest_first = pci_order;
  std::swap(fastest_first.gpus[0], fastest_first.gpus[1]);
  fastest_first.gpus[0].index = 0;
  fastest_first.gpus[1].index = 1;
  for (auto& link : fastest_first.links) std::swap(link.from, link.to);
  EXPECT_EQ(topology_fingerprint(pci_order), topology_fingerprint(fastest_first));
}

TEST(NodeType, SingleH200) {
  EXPECT_EQ(derive_node_type(sample()), "NVIDIA H200 x1 / PCIe Gen5 x16 / 1 NUMA");
}

TEST(NodeType, EightGpusTwoSockets) {
  Inventory inv = sample();
  inv.gpus.clear();
  for (int i = 0; i < 8; ++i) {
    GpuInventory gpu = h200(i, "0000:1" + std::to_string(i) + ":00.0", i / 4);
    gpu.name = "NVIDIA H100 80GB HBM3";
    inv.gpus.push_back(gpu);
  }
  inv.numa_nodes = {{0, {0, 1}, 64 * kGiB}, {1, {2, 3}, 64 * kGiB}};
  EXPECT_EQ(derive_node_type(inv), "NVIDIA H100 80GB HBM3 x8 / PCIe Gen5 x16 / 2 NUMA");
}

TEST(NodeType, MixedModelsAndUnknownLink) {
  Inventory inv = sample();
  inv.gpus[0].pcie_gen_max.reset();
  inv.gpus[0].pcie_width_max.reset();
  GpuInventory l4 = h200(1, "0000:65:00.0", 0);
  l4.name = "NVIDIA L4";
  inv.gpus.push_back(l4);
  EXPECT_EQ(derive_node_type(inv), "NVIDIA H200 x1 + NVIDIA L4 x1 / PCIe unknown / 1 NUMA");
  inv.gpus[0].pcie_width_max = 8;
  EXPECT_EQ(derive_node_type(inv), "NVIDIA H200 x1 + NVIDIA L4 x1 / PCIe Gen? x8 / 1 NUMA");
}

TEST(NodeType, MemoryOnlyNodesAreNotCounted) {
  Inventory inv = sample();
  inv.numa_nodes.push_back({1, {}, 96 * kGiB});  // e.g. Grace Hopper's GPU memory as a node
  EXPECT_EQ(derive_node_type(inv), "NVIDIA H200 x1 / PCIe Gen5 x16 / 1 NUMA");
}

TEST(NodeType, CpuOnly) {
  Inventory inv = sample();
  inv.gpus.clear();
  inv.cpu_model = "Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz";
  inv.numa_nodes = {{0, {0, 1}, 64 * kGiB}, {1, {2, 3}, 64 * kGiB}};
  EXPECT_EQ(derive_node_type(inv), "cpu-only / Intel Xeon Platinum 8480+ / 2 NUMA");
  inv.cpu_model.clear();
  EXPECT_EQ(derive_node_type(inv), "cpu-only / 2 NUMA");
  inv.numa_nodes.clear();
  EXPECT_EQ(derive_node_type(inv), "cpu-only / unknown NUMA");
}

TEST(NodeType, CondensesCpuModels) {
  EXPECT_EQ(condense_cpu_model("AMD EPYC 9654 96-Core Processor"), "AMD EPYC 9654");
  EXPECT_EQ(condense_cpu_model("Intel(R) Xeon(R) Platinum 8480+"), "Intel Xeon Platinum 8480+");
  EXPECT_EQ(condense_cpu_model("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz"), "Intel Xeon Gold 6338");
  EXPECT_EQ(condense_cpu_model("ARM Neoverse-V2"), "ARM Neoverse-V2");
  EXPECT_EQ(condense_cpu_model(""), "");
}

}  // namespace
}  // namespace pathbench::test_fingerprint
