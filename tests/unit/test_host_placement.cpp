// The host_node and threads axes of the request-level families (serving, overlap): decoding, what
// each asks of the machine (skip reasons on one NUMA node), and where each resolves to on one-
// and two-node machines, the GPU's node unknown among them. No GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/overlap.hpp"
#include "bench/serving.hpp"
#include "case_spec.hpp"
#include "core/errors.hpp"
#include "measure/host_placement.hpp"
#include "scenario/scenario_file.hpp"
#include "test_machines.hpp"

namespace pathbench::test_host_placement {
namespace {

// Two nodes of four CPUs each, the GPU on node 0; with `memory_only_remote` node 1 has no CPUs
// this process may use (a CXL or HBM node, or a cpuset without them).
Machine two_node_machine(bool memory_only_remote = false) {
  Machine m = testing::h200_machine();
  m.numa_nodes = {0, 1};
  m.node_cpus = {{0, 1, 2, 3},
                 memory_only_remote ? std::vector<int>{} : std::vector<int>{4, 5, 6, 7}};
  return m;
}

CaseSpec serving_case(nlohmann::ordered_json axes) {
  axes["strategy"] = "pinned_pool";
  axes["request_bytes"] = 65536;
  return testing::scenario_case("serving", std::move(axes));
}

std::optional<std::string> serving_skip(const nlohmann::ordered_json& axes, const Machine& m) {
  return make_serving_family()->requirements(serving_case(axes)).unmet(m, 0);
}

TEST(HostPlacement, BothAxesDefaultToLocal) {
  const auto r = decode_host_placement(serving_case({}));
  EXPECT_FALSE(r.remote_memory);
  EXPECT_EQ(r.threads, ThreadBinding::kLocal);
  const auto remote =
      decode_host_placement(serving_case({{"host_node", "remote"}, {"threads", "unbound"}}));
  EXPECT_TRUE(remote.remote_memory);
  EXPECT_EQ(remote.threads, ThreadBinding::kUnbound);
  EXPECT_EQ(decode_host_placement(serving_case({{"threads", "one_cpu"}})).threads,
            ThreadBinding::kOneCpu);
}

TEST(HostPlacement, OneNodeSkipsRemoteMemoryAndRemoteThreadsSayingWhy) {
  const Machine one = testing::h200_machine();
  EXPECT_EQ(serving_skip({{"host_node", "remote"}}, one),
            "host_node=remote needs a second NUMA node with memory; this machine has 1 (the "
            "GPU's node is 0)");
  EXPECT_EQ(serving_skip({{"threads", "remote"}}, one),
            "threads=remote needs a second NUMA node with CPUs this process may run on; this "
            "machine has 1 (the GPU's node is 0)");
  for (const char* t : {"local", "one_cpu", "unbound"}) {
    EXPECT_EQ(serving_skip({{"threads", t}}, one), std::nullopt) << t;
  }
  EXPECT_EQ(make_overlap_family()
                ->requirements(testing::scenario_case("overlap", {{"variant", "pinned_event_wait"},
                                                                  {"kernel_us", 100},
                                                                  {"bytes", 1 << 20},
                                                                  {"threads", "remote"}}))
                .unmet(one, 0)
                .value_or(""),
            "threads=remote needs a second NUMA node with CPUs this process may run on; this "
            "machine has 1 (the GPU's node is 0)");
}

TEST(HostPlacement, AMemoryOnlyRemoteNodeTakesMemoryButNotThreads) {
  const Machine m = two_node_machine(true);
  EXPECT_EQ(serving_skip({{"host_node", "remote"}}, m), std::nullopt);
  EXPECT_NE(serving_skip({{"threads", "remote"}}, m), std::nullopt);
  const auto at = resolve_host_placement(m, 0, {true, ThreadBinding::kLocal});
  EXPECT_EQ(at.memory_node, 1);
  EXPECT_EQ(at.thread_node, 0);
  EXPECT_EQ(at.cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_THROW(resolve_host_placement(m, 0, {false, ThreadBinding::kRemote}), SkipCase);
}

TEST(HostPlacement, EachBindingResolvesToItsCpus) {
  const Machine m = two_node_machine();
  const auto local = resolve_host_placement(m, 0, {});
  EXPECT_EQ(local.memory_node, 0);
  EXPECT_EQ(local.cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(local.where, "node 0");
  const auto remote = resolve_host_placement(m, 0, {true, ThreadBinding::kRemote});
  EXPECT_EQ(remote.memory_node, 1);
  EXPECT_EQ(remote.thread_node, 1);
  EXPECT_EQ(remote.cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(remote.where, "node 1 (remote)");
  // Remote memory with local threads: the split a server gets when its pool was allocated by a
  // thread on the wrong socket.
  const auto split = resolve_host_placement(m, 0, {true, ThreadBinding::kLocal});
  EXPECT_EQ(split.memory_node, 1);
  EXPECT_EQ(split.thread_node, 0);
  const auto one = resolve_host_placement(m, 0, {false, ThreadBinding::kOneCpu});
  EXPECT_EQ(one.cpus, (std::vector<int>{3}));
  EXPECT_EQ(one.where, "CPU 3 of node 0");
  const auto unbound = resolve_host_placement(m, 0, {false, ThreadBinding::kUnbound});
  EXPECT_EQ(unbound.thread_node, std::nullopt);
  EXPECT_EQ(unbound.cpus, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(unbound.where, "unbound");
}

TEST(HostPlacement, AnUnknownGpuNodeLeavesDefaultsUnplacedAndSkipsWhatNeedsIt) {
  Machine m = two_node_machine();
  m.gpus[0].numa_node.reset();
  EXPECT_EQ(serving_skip({}, m), std::nullopt);
  const auto at = resolve_host_placement(m, 0, {});
  EXPECT_EQ(at.memory_node, std::nullopt);
  EXPECT_TRUE(at.cpus.empty());  // the thread stays where the OS puts it, and its check says so
  const auto reason = serving_skip({{"threads", "one_cpu"}}, m).value_or("");
  EXPECT_EQ(reason.rfind("the NUMA node of GPU 0 is unknown", 0), 0u) << reason;
  EXPECT_NE(serving_skip({{"host_node", "remote"}}, m), std::nullopt);
  EXPECT_EQ(serving_skip({{"threads", "unbound"}}, m), std::nullopt);
}

TEST(HostPlacement, ABadValueIsAnInputErrorNamingTheFileAndTheAxis) {
  FamilyRegistry families;
  families.add(make_serving_family());
  families.add(make_overlap_family());
  const auto load = [&](const std::string& family, const std::string& axes) {
    const std::string text =
        R"({"schema": "pathbench.scenario/v1", "scenarios": [{"name": "s", "family": ")" + family +
        R"(", "axes": )" + axes + "}]}";
    try {
      parse_scenario_file("p.json", text, families, {0});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string serving = load(
      "serving", R"({"strategy": ["pageable"], "request_bytes": [65536], "threads": ["pinned"]})");
  EXPECT_EQ(serving.rfind("p.json: /scenarios/0/axes/threads", 0), 0u) << serving;
  EXPECT_NE(serving.find("unbound"), std::string::npos) << serving;  // the allowed values
  const std::string overlap = load(
      "overlap",
      R"({"variant": ["pinned_event_wait"], "kernel_us": [100], "bytes": [65536], "host_node": ["far"]})");
  EXPECT_EQ(overlap.rfind("p.json: /scenarios/0/axes/host_node", 0), 0u) << overlap;
}

}  // namespace
}  // namespace pathbench::test_host_placement
