// The copy family's host-side rules for the `gpus` axis (one GPU or every GPU at once): schema,
// decoding, invalid combinations, skip reasons, case ids and the shipped scenario file. No GPU
// needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/copy.hpp"
#include "case_spec.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_copy_family {
namespace {

constexpr std::int64_t k256MiB = std::int64_t{256} << 20;

CaseSpec make_spec(nlohmann::ordered_json params) {
  return testing::scenario_case("copy", std::move(params));
}

CaseSpec all_gpus(const std::string& direction, const std::string& host_memory,
                  std::int64_t bytes = k256MiB, const std::string& measure = "bandwidth") {
  return make_spec({{"measure", measure},
                    {"direction", direction},
                    {"host_memory", host_memory},
                    {"gpus", "all"},
                    {"bytes", bytes}});
}

Machine gpu_machine(int gpus, int nodes = 1) {
  Machine m;
  for (int n = 0; n < nodes; ++n) {
    m.numa_nodes.push_back(n);
    m.node_cpus.push_back({2 * n, 2 * n + 1});
  }
  m.mem_available_bytes = 64ull << 30;
  m.memlock_limit_bytes = UINT64_MAX;
  m.thp_enabled = "madvise";
  m.hugetlb_free_pages = 0;
  for (int i = 0; i < gpus; ++i) {
    MachineGpu g;
    g.index = i;
    g.name = "NVIDIA H200";
    g.numa_node = i % nodes;
    g.memory_bytes = 141ull << 30;
    m.gpus.push_back(g);
    m.selected_gpus.push_back(i);
  }
  return m;
}

TEST(CopyFamilyGpus, AxisSchema) {
  const auto family = make_copy_family();
  const auto& axes = family->axes();
  const auto it =
      std::find_if(axes.begin(), axes.end(), [](const AxisSchema& a) { return a.name == "gpus"; });
  ASSERT_NE(it, axes.end());
  EXPECT_EQ(it->kind, AxisSchema::Kind::kString);
  EXPECT_EQ(it->allowed, (std::vector<std::string>{"one", "all"}));
  // Optional: scenarios without it keep their cases and ids.
  const auto required = family->required_axes();
  EXPECT_EQ(std::find(required.begin(), required.end(), "gpus"), required.end());
}

TEST(CopyFamilyGpus, DecodeAndIds) {
  const CaseSpec all = all_gpus("h2d", "pinned");
  EXPECT_TRUE(decode_copy_request(all).all_gpus);
  EXPECT_EQ(all.id, "copy/measure=bandwidth/direction=h2d/host_memory=pinned/gpus=all/bytes=" +
                        std::to_string(k256MiB));
  const CaseSpec one = make_spec({{"measure", "bandwidth"},
                                  {"direction", "h2d"},
                                  {"host_memory", "pinned"},
                                  {"gpus", "one"},
                                  {"bytes", 4096}});
  EXPECT_FALSE(decode_copy_request(one).all_gpus);
  // Without the axis: today's behaviour and today's id.
  const CaseSpec plain = make_spec({{"measure", "bandwidth"},
                                    {"direction", "h2d"},
                                    {"host_memory", "pinned"},
                                    {"host_node", "local"},
                                    {"bytes", 268435456}});
  EXPECT_FALSE(decode_copy_request(plain).all_gpus);
  EXPECT_EQ(plain.id,
            "copy/measure=bandwidth/direction=h2d/host_memory=pinned/host_node=local/"
            "bytes=268435456");
}

TEST(CopyFamilyGpus, ValidCombinations) {
  const auto family = make_copy_family();
  for (const char* direction : {"h2d", "d2h"}) {
    for (const char* host : {"pinned", "registered-4k", "registered-thp", "registered-hugetlb"}) {
      EXPECT_FALSE(family->invalid_combination(all_gpus(direction, host)))
          << direction << " " << host;
    }
  }
  auto local = all_gpus("h2d", "pinned");
  local.params["host_node"] = "local";
  EXPECT_FALSE(family->invalid_combination(local));
  // gpus=one changes nothing about the existing rules.
  EXPECT_FALSE(family->invalid_combination(make_spec({{"measure", "latency"},
                                                      {"direction", "h2d"},
                                                      {"host_memory", "pageable-4k"},
                                                      {"gpus", "one"},
                                                      {"bytes", 4}})));
  EXPECT_TRUE(family->invalid_combination(
      make_spec({{"measure", "bandwidth"}, {"direction", "h2d"}, {"gpus", "one"}, {"bytes", 4}})));
}

TEST(CopyFamilyGpus, InvalidCombinationsSayWhy) {
  const auto family = make_copy_family();
  auto expect = [&](const CaseSpec& spec, const std::string& fragment) {
    const auto why = family->invalid_combination(spec);
    ASSERT_TRUE(why.has_value()) << spec.id;
    EXPECT_NE(why->find(fragment), std::string::npos) << spec.id << ": " << *why;
    EXPECT_NE(why->find("gpus=all"), std::string::npos) << *why;
  };
  expect(all_gpus("h2d", "pinned", 4, "latency"), "bandwidth only");
  expect(make_spec({{"measure", "alloc_cost"},
                    {"host_memory", "pinned"},
                    {"gpus", "all"},
                    {"bytes", k256MiB}}),
         "bandwidth only");
  expect(make_spec(
             {{"measure", "bandwidth"}, {"direction", "d2d"}, {"gpus", "all"}, {"bytes", k256MiB}}),
         "h2d or d2h");
  expect(make_spec({{"measure", "bandwidth"},
                    {"host_memory", "pinned"},
                    {"gpus", "all"},
                    {"bytes", k256MiB}}),
         "h2d or d2h");
  expect(all_gpus("h2d", "pageable-4k"), "pinned or registered");
  expect(all_gpus("d2h", "pageable-thp"), "pinned or registered");
  expect(make_spec(
             {{"measure", "bandwidth"}, {"direction", "h2d"}, {"gpus", "all"}, {"bytes", k256MiB}}),
         "pinned or registered");
  auto remote = all_gpus("h2d", "pinned");
  remote.params["host_node"] = "remote";
  expect(remote, "host_node=remote");
}

TEST(CopyFamilyGpus, MemoryNeedsArePerGpu) {
  const auto family = make_copy_family();
  const auto needs = family->memory_needs(all_gpus("h2d", "pinned"));
  EXPECT_EQ(needs.host_bytes, static_cast<std::uint64_t>(k256MiB));
  EXPECT_EQ(needs.device_bytes, static_cast<std::uint64_t>(k256MiB));
}

TEST(CopyFamilyGpus, TheGpusOfAnAllCase) {
  Machine m = gpu_machine(4);
  EXPECT_EQ(copy_all_gpus(m), (std::vector<int>{0, 1, 2, 3}));
  m.selected_gpus = {3, 1};  // run --devices 3,1
  EXPECT_EQ(copy_all_gpus(m), (std::vector<int>{1, 3}));
  m.selected_gpus.clear();  // a machine built without a selection: every GPU
  EXPECT_EQ(copy_all_gpus(m), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(copy_all_gpus(Machine{}).empty());
}

TEST(CopyFamilyGpus, SkipReasons) {
  const auto family = make_copy_family();
  const CaseSpec spec = all_gpus("h2d", "pinned");

  Machine no_cuda;
  no_cuda.cuda_unavailable_reason = "CUDA driver not loaded (cudaErrorInsufficientDriver)";
  EXPECT_EQ(family->skip_reason(spec, no_cuda, 0), no_cuda.cuda_unavailable_reason);
  const auto none = family->skip_reason(spec, Machine{}, 0);
  ASSERT_TRUE(none);
  EXPECT_NE(none->find("no CUDA device"), std::string::npos) << *none;

  // One GPU: a valid all-GPU run of that GPU. --device does not matter.
  EXPECT_FALSE(family->skip_reason(spec, gpu_machine(1), 0));
  EXPECT_FALSE(family->skip_reason(spec, gpu_machine(1), 5));
  // Eight GPUs on two sockets: each GPU's buffer on its own node.
  EXPECT_FALSE(family->skip_reason(spec, gpu_machine(8, 2), 0));

  // A selected GPU that does not exist.
  Machine m = gpu_machine(2);
  m.selected_gpus = {0, 4};
  auto why = family->skip_reason(spec, m, 0);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("GPU 4 does not exist"), std::string::npos) << *why;

  // A GPU whose NUMA node is unknown on a two-node machine.
  m = gpu_machine(2, 2);
  m.gpus[1].numa_node.reset();
  why = family->skip_reason(spec, m, 0);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("NUMA node of GPU 1 is unknown"), std::string::npos) << *why;

  // Host memory for one buffer per GPU.
  m = gpu_machine(8);
  m.mem_available_bytes = 1ull << 30;  // 1 GiB: 8 x 256 MiB does not fit
  why = family->skip_reason(spec, m, 0);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("8 GPUs"), std::string::npos) << *why;
  m.mem_available_bytes = 4ull << 30;
  EXPECT_FALSE(family->skip_reason(spec, m, 0));

  // A GPU too small for one copy.
  m = gpu_machine(2);
  m.gpus[1].memory_bytes = 128ull << 20;
  why = family->skip_reason(spec, m, 0);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("GPU 1 has"), std::string::npos) << *why;

  // Registered hugetlb needs pages for every GPU's buffer.
  m = gpu_machine(4);
  m.hugetlb_free_pages = 128;  // one 256 MiB buffer of 2 MiB pages
  why = family->skip_reason(all_gpus("h2d", "registered-hugetlb"), m, 0);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("needs 512 free hugetlb pages"), std::string::npos) << *why;
  m.hugetlb_free_pages = 512;
  EXPECT_FALSE(family->skip_reason(all_gpus("h2d", "registered-hugetlb"), m, 0));
  m.thp_enabled = "never";
  EXPECT_TRUE(family->skip_reason(all_gpus("d2h", "registered-thp"), m, 0));
}

TEST(CopyFamilyGpus, ShippedScenarioHasTheAllGpuCases) {
  FamilyRegistry families;
  families.add(make_copy_family());
  const auto file =
      load_scenario_file(std::string(PATHBENCH_SOURCE_DIR) + "/scenarios/copy.json", families, {0});
  const Family& family = *families.find("copy");
  std::vector<std::string> all_ids;
  std::size_t without_axis = 0;
  for (const auto& s : file.scenarios) {
    const auto cases = expand(s);
    EXPECT_NO_THROW(validate_cases(s, cases, family, gpu_machine(1), 0)) << s.name;
    for (const auto& c : cases) {
      if (c.params.contains("gpus")) {
        all_ids.push_back(c.id);
      } else {
        ++without_axis;
      }
    }
  }
  EXPECT_EQ(all_ids, (std::vector<std::string>{
                         "copy/measure=bandwidth/direction=h2d/host_memory=pinned/gpus=all/"
                         "bytes=268435456",
                         "copy/measure=bandwidth/direction=d2h/host_memory=pinned/gpus=all/"
                         "bytes=268435456"}));
  EXPECT_GT(without_axis, 100u);  // the existing sweeps, ids unchanged (no gpus param)
}

// direction=bidir: H2D and D2H at once, bandwidth only, page-locked host memory only.
CaseSpec bidir(const std::string& host_memory, const std::string& measure = "bandwidth",
               std::int64_t bytes = k256MiB) {
  return make_spec({{"measure", measure},
                    {"direction", "bidir"},
                    {"host_memory", host_memory},
                    {"host_node", "local"},
                    {"bytes", bytes}});
}

TEST(CopyFamilyBidir, DecodesValidatesAndNamesItsMetrics) {
  const auto family = make_copy_family();
  const CopyRequest r = decode_copy_request(bidir("pinned"));
  EXPECT_EQ(r.direction, CopyDirection::kBidir);
  for (const char* host : {"pinned", "registered-4k", "registered-thp", "registered-hugetlb"}) {
    EXPECT_FALSE(family->case_error(bidir(host))) << host;
  }
  EXPECT_EQ(bidir("pinned").id,
            "copy/measure=bandwidth/direction=bidir/host_memory=pinned/host_node=local/"
            "bytes=268435456");
  const auto names = family->metric_names(bidir("pinned"));
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"bandwidth", "bandwidth_h2d", "bandwidth_d2h",
                                              "time_per_copy"}));
  const auto metrics = copy_metrics(r);
  ASSERT_EQ(metrics.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(metrics[i].better, Better::kHigher);
  EXPECT_EQ(metrics[3].better, Better::kLower);
  // Two host buffers (source of the H2D, destination of the D2H) and two device buffers.
  const auto needs = family->memory_needs(bidir("pinned"));
  EXPECT_EQ(needs.host_bytes, 2u * k256MiB);
  EXPECT_EQ(needs.device_bytes, 2u * k256MiB);
}

TEST(CopyFamilyBidir, InvalidCombinationsSayWhy) {
  const auto family = make_copy_family();
  auto expect = [&](const CaseSpec& spec, const std::string& fragment) {
    const auto why = family->case_error(spec);
    ASSERT_TRUE(why.has_value()) << spec.id;
    EXPECT_NE(why->find(fragment), std::string::npos) << spec.id << ": " << *why;
  };
  expect(bidir("pinned", "latency", 4), "bidir measures bandwidth");
  expect(bidir("pageable-4k"), "pinned or registered");
  expect(bidir("pageable-thp"), "could not overlap");
  expect(make_spec({{"measure", "bandwidth"}, {"direction", "bidir"}, {"bytes", k256MiB}}),
         "need a host_memory axis");
  expect(all_gpus("bidir", "pinned"), "h2d or d2h");
}

TEST(CopyFamilyBidir, HugetlbNeedsPagesForBothHostBuffers) {
  const auto family = make_copy_family();
  Machine m = gpu_machine(1);
  m.hugetlb_page_bytes = 2u << 20;
  m.hugetlb_free_pages = 128;  // one 256 MiB buffer's worth, not two
  const auto why = family->skip_reason(bidir("registered-hugetlb"), m, 0);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("256"), std::string::npos) << *why;
  m.hugetlb_free_pages = 256;
  EXPECT_FALSE(family->skip_reason(bidir("registered-hugetlb"), m, 0));
}

}  // namespace
}  // namespace pathbench::test_copy_family
