// RunContext (result/run_context.hpp): the typed context the readers share. Round trips keep what
// the struct does not model; every modelled field of the wrong type is refused, naming it.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "result/result.hpp"
#include "result/run_context.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_run_context {
namespace {

using ojson = nlohmann::ordered_json;

// A context as inventory/to_json and the run write it, with fields no reader models.
ojson written_context() {
  return ojson::parse(R"({
    "tool_version": "0.1.0", "git_sha": "abc123", "hostname": "node-a",
    "node_type": "NVIDIA H200 / PCIe5x16 / 1 NUMA", "node_type_derived": true,
    "topology_fingerprint": "f00d", "cpu_model": "Xeon", "logical_cpus": 16,
    "numa_nodes": [{"id": 0, "cpus": [0, 1], "memory_bytes": 1024}],
    "cpuset": [0, 1], "mems_allowed": [0], "cpuset_aligned_with_gpu": null,
    "thp_enabled": "madvise", "thp_defrag": "madvise", "numa_balancing": null,
    "hugepages_total": 0, "hugepages_free": 0, "hugepage_bytes": 2097152,
    "memlock_limit_bytes": 18446744073709551615,
    "kernel": "6.8.0", "bios_vendor": "SeaBIOS", "bios_version": "1.16", "bios_date": "04/01/2014",
    "iommu": {"mode": "off", "groups": 0, "cmdline": ""},
    "cuda_runtime_version": 13000, "cuda_driver_version": null, "driver_version": "580.159.04",
    "gpus": [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-1", "pci_bus_id": "0000:00:06.0",
              "pcie_gen_current": 1, "pcie_gen_max": 5, "pcie_width_current": 16,
              "pcie_width_max": null, "numa_node": 0, "local_cpus": [0, 1],
              "clock_sm_mhz": 1980, "clock_mem_mhz": null, "clock_sm_max_mhz": 1980,
              "clock_mem_max_mhz": 3201, "memory_bytes": 150109880320, "vbios": "96.00",
              "compute_capability": "9.0", "ecc_mode": "enabled", "persistence_mode": null,
              "mig_mode": "disabled", "nvlink": {"active_links": 18, "link_gb_per_s": 25,
              "future_counter": 7}, "future_gpu_field": {"x": [1, 2.50]}}],
    "links": [{"from": 0, "to": 1, "type": "NV18", "nvlinks": 18, "peer_access": true,
               "param": "nvlink18"}],
    "device": 0, "devices": [0, 1],
    "environment": {"start": {"time": "t"}, "end": null},
    "some_future_field": {"nested": [1, "two", null]},
    "scenario_files": [], "start_time": "2026-11-29T13:54:07Z", "end_time": ""
  })");
}

RunContext read(const ojson& j) { return RunContext::from_json(j, "r.json"); }

TEST(RunContext, RoundTripIsByteForByte) {
  const ojson j = written_context();
  const RunContext c = read(j);
  // 25 stays 25 (not 25.0), the largest uint64 stays as it is, unknown fields keep their place.
  EXPECT_EQ(c.to_json().dump(2), j.dump(2));
  EXPECT_EQ(read(c.to_json()).to_json().dump(), j.dump());
}

TEST(RunContext, RoundTripOfAWrittenResultFile) {
  for (const char* name :
       {"h200-default.json", "cpu-only-default.json", "h200-copy-hugetlb.json"}) {
    const ojson doc = load_json_document(std::string(PATHBENCH_FIXTURES) + "/results/" + name);
    EXPECT_EQ(read(doc.at("context")).to_json().dump(), doc.at("context").dump()) << name;
  }
}

TEST(RunContext, ReadsTheModelledFields) {
  const RunContext c = read(written_context());
  EXPECT_EQ(c.node_type.value_or(""), "NVIDIA H200 / PCIe5x16 / 1 NUMA");
  EXPECT_EQ(c.hostname.value_or(""), "node-a");
  EXPECT_EQ(c.node_type_derived.value_or(false), true);
  EXPECT_EQ(c.cuda_runtime_version.value_or(0), 13000);
  // null is recorded, not absent: "what changed" tells the two apart.
  EXPECT_TRUE(c.cuda_driver_version.present);
  EXPECT_FALSE(c.cuda_driver_version.known());
  EXPECT_FALSE(read(ojson::object()).cuda_driver_version.present);
  EXPECT_EQ(c.memlock_limit_bytes.value_or(0), 18446744073709551615u);
  EXPECT_EQ(c.cpuset.value_or({}), (std::vector<int>{0, 1}));
  ASSERT_TRUE(c.iommu.has_value());
  EXPECT_EQ(c.iommu->mode.value_or(""), "off");
  ASSERT_EQ(c.gpus.size(), 1u);
  const GpuContext& g = c.gpus[0];
  EXPECT_EQ(g.pci_bus_id.value_or(""), "0000:00:06.0");
  EXPECT_EQ(g.pcie_gen_current.value_or(0), 1);
  EXPECT_EQ(g.pcie_gen_max.value_or(0), 5);
  EXPECT_TRUE(g.pcie_width_max.present);
  EXPECT_FALSE(g.pcie_width_max.known());
  EXPECT_EQ(g.memory_bytes.value_or(0), 150109880320u);
  ASSERT_TRUE(g.nvlink.has_value());
  EXPECT_EQ(g.nvlink->active_links.value_or(0), 18);
  EXPECT_DOUBLE_EQ(g.nvlink->link_gb_per_s.value_or(0), 25.0);
  ASSERT_EQ(c.links.size(), 1u);
  EXPECT_EQ(c.links[0].param.value_or(""), "nvlink18");
  EXPECT_EQ(c.device.value_or(-1), 0);
  EXPECT_EQ(c.devices.value_or({}), (std::vector<int>{0, 1}));
  ASSERT_TRUE(c.environment.has_value());
  EXPECT_EQ(c.environment->at("start").at("time"), "t");
  EXPECT_EQ(c.gpu(0), &c.gpus[0]);
  EXPECT_EQ(c.gpu(1), nullptr);
  EXPECT_EQ(c.gpu(-1), nullptr);
}

TEST(RunContext, AnEditedFieldIsWrittenInItsPlace) {
  RunContext c = read(written_context());
  c.driver_version = "590.10.01";
  c.gpus[0].pcie_gen_current = 5;
  c.gpus[0].nvlink->link_gb_per_s = 26.562;
  c.iommu.reset();
  const ojson out = c.to_json();
  ojson expected = written_context();
  expected["driver_version"] = "590.10.01";
  expected["gpus"][0]["pcie_gen_current"] = 5;
  expected["gpus"][0]["nvlink"]["link_gb_per_s"] = 26.562;
  expected["iommu"] = nullptr;
  EXPECT_EQ(out.dump(), expected.dump());
}

TEST(RunContext, AnOlderContextLacksFieldsAndStaysSo) {
  const ojson older = {{"node_type", "n"}, {"hostname", "h"}};
  const RunContext c = read(older);
  EXPECT_FALSE(c.device.present);
  EXPECT_TRUE(c.gpus.empty());
  EXPECT_FALSE(c.environment.has_value());
  EXPECT_EQ(c.to_json().dump(), older.dump());
}

struct BadField {
  const char* pointer;  // below /context
  ojson value;
  const char* says;
};

// Sets the field at `pointer` (below the context) to `value`.
ojson with(const BadField& bad) {
  ojson j = written_context();
  j[ojson::json_pointer(bad.pointer)] = bad.value;
  return j;
}

TEST(RunContext, EachBadFieldIsNamed) {
  const std::vector<BadField> cases = {
      {"/node_type", 5, "expected a string, found integer"},
      {"/hostname", nullptr, "expected a string, found null"},
      {"/topology_fingerprint", ojson::array(), "expected a string, found array"},
      {"/tool_version", 1.5, "expected a string, found number"},
      {"/git_sha", true, "expected a string, found boolean"},
      {"/cpu_model", ojson::object(), "expected a string, found object"},
      {"/driver_version", 580, "expected a string, found integer"},
      {"/kernel", 6, "expected a string, found integer"},
      {"/bios_version", 2, "expected a string, found integer"},
      {"/node_type_derived", "yes", "expected true or false, found string"},
      {"/cuda_driver_version", "13.0", "expected an integer or null, found string"},
      {"/cuda_runtime_version", 1e10, "expected an integer or null, found 10000000000.0"},
      {"/numa_balancing", 4294967296, "expected an integer or null, found 4294967296"},
      {"/hugepages_total", -1, "expected a non-negative integer, found -1"},
      {"/memlock_limit_bytes", 1.5, "expected a non-negative integer, found 1.5"},
      {"/cpuset", "0-15", "expected an array of integers, found string"},
      {"/cpuset/1", "x", "expected an integer, found string"},
      {"/cpuset_aligned_with_gpu", 1, "expected true, false or null, found integer"},
      {"/iommu", "off", "expected an object or null, found string"},
      {"/iommu/mode", 0, "expected a string, found integer"},
      {"/gpus", ojson::object(), "expected an array, found object"},
      {"/gpus/0", 3, "expected an object, found integer"},
      {"/gpus/0/index", "0", "expected an integer, found string"},
      {"/gpus/0/pci_bus_id", 6, "expected a string, found integer"},
      {"/gpus/0/pcie_gen_current", "5", "expected an integer or null, found string"},
      {"/gpus/0/pcie_width_max", 16.5, "expected an integer or null, found 16.5"},
      {"/gpus/0/numa_node", true, "expected an integer or null, found boolean"},
      {"/gpus/0/clock_sm_max_mhz", "fast", "expected an integer or null, found string"},
      {"/gpus/0/memory_bytes", -5, "expected a non-negative integer, found -5"},
      {"/gpus/0/ecc_mode", true, "expected a string or null, found boolean"},
      {"/gpus/0/compute_capability", 9.0, "expected a string, found number"},
      {"/gpus/0/nvlink", 18, "expected an object or null, found integer"},
      {"/gpus/0/nvlink/active_links", nullptr, "expected an integer, found null"},
      {"/gpus/0/nvlink/link_gb_per_s", "25", "expected a number or null, found string"},
      {"/links", "none", "expected an array, found string"},
      {"/links/0", ojson::array(), "expected an object, found array"},
      {"/links/0/from", "0", "expected an integer, found string"},
      {"/links/0/param", 18, "expected a string, found integer"},
      {"/device", "0", "expected an integer, found string"},
      {"/devices", 0, "expected an array of integers, found integer"},
      {"/devices/1", -1.0, "expected an integer, found -1.0"},
  };
  for (const auto& bad : cases) {
    try {
      (void)RunContext::from_json(with(bad), "r.json", "/runs/2/context");
      ADD_FAILURE() << bad.pointer << ": accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "r.json") << bad.pointer;
      EXPECT_EQ(e.pointer(), std::string("/runs/2/context") + bad.pointer);
      EXPECT_NE(std::string(e.what()).find(bad.says), std::string::npos)
          << bad.pointer << ": " << e.what();
    }
  }
}

TEST(RunContext, AContextThatIsNoObjectIsNamed) {
  try {
    (void)RunContext::from_json(ojson::array(), "b.json", "/context");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "b.json: /context: expected an object, found array");
  }
}

}  // namespace
}  // namespace pathbench::test_run_context
