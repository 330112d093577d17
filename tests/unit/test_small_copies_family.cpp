// The small_copies family's host-side rules: axes, invalid combinations, memory needs, skip
// reasons and the shipped scenario file. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/small_copies.hpp"
#include "case_spec.hpp"
#include "core/errors.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "test_machines.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_small_copies_family {
namespace {

const std::vector<std::string> kMethods = {"individual", "coalesced", "batched", "graph",
                                           "gather_kernel"};

CaseSpec make_spec(nlohmann::ordered_json params) {
  return testing::scenario_case("small_copies", std::move(params));
}

CaseSpec copies(const std::string& method, std::int64_t count, std::int64_t bytes,
                const std::string& direction = "h2d") {
  return make_spec(
      {{"method", method}, {"direction", direction}, {"count", count}, {"bytes", bytes}});
}

using pathbench::testing::h200_machine;

TEST(SmallCopiesFamily, DescribesItsAxes) {
  const auto family = make_small_copies_family();
  EXPECT_EQ(family->name(), "small_copies");
  EXPECT_FALSE(family->description().empty());
  std::vector<std::string> names;
  for (const auto& axis : family->axes()) names.push_back(axis.name);
  EXPECT_EQ(names, (std::vector<std::string>{"method", "count", "bytes", "direction"}));
  const auto& method = family->axes()[0];
  EXPECT_EQ(method.kind, AxisSchema::Kind::kString);
  EXPECT_EQ(method.allowed, kMethods);
  const auto& count = family->axes()[1];
  EXPECT_EQ(count.kind, AxisSchema::Kind::kInteger);
  EXPECT_EQ(count.min, 1);
  EXPECT_EQ(count.max, 65536);
  const auto& bytes = family->axes()[2];
  EXPECT_EQ(bytes.kind, AxisSchema::Kind::kInteger);
  EXPECT_EQ(bytes.min, 1);
  EXPECT_EQ(bytes.max, 64 << 20);
  EXPECT_EQ(family->axes()[3].allowed, (std::vector<std::string>{"h2d", "d2h"}));
  EXPECT_EQ(family->required_axes(), (std::vector<std::string>{"method", "count", "bytes"}));
}

TEST(SmallCopiesFamily, InvalidCombinations) {
  const auto family = make_small_copies_family();
  for (const auto& m : kMethods) {
    EXPECT_FALSE(family->invalid_combination(copies(m, 1024, 4096))) << m;
    EXPECT_FALSE(family->invalid_combination(copies(m, 1, 1))) << m;
    EXPECT_FALSE(family->invalid_combination(copies(m, 65536, 64 << 20))) << m;
    // direction is optional and defaults to h2d
    EXPECT_FALSE(
        family->invalid_combination(make_spec({{"method", m}, {"count", 256}, {"bytes", 65536}})))
        << m;
  }
  for (const auto& m : {"individual", "coalesced", "batched", "graph"}) {
    EXPECT_FALSE(family->invalid_combination(copies(m, 1024, 4096, "d2h"))) << m;
  }
  const auto gather_d2h = family->invalid_combination(copies("gather_kernel", 1024, 4096, "d2h"));
  ASSERT_TRUE(gather_d2h);
  EXPECT_NE(gather_d2h->find("gather_kernel"), std::string::npos) << *gather_d2h;
  EXPECT_NE(gather_d2h->find("d2h"), std::string::npos) << *gather_d2h;

  // Missing required axes and values outside the schema (for callers that skip the parser).
  EXPECT_TRUE(family->case_error(make_spec({{"count", 4}, {"bytes", 4096}})));
  EXPECT_TRUE(family->case_error(make_spec({{"method", "graph"}, {"bytes", 4096}})));
  EXPECT_TRUE(family->case_error(make_spec({{"method", "graph"}, {"count", 4}})));
  EXPECT_TRUE(family->case_error(copies("individual", 0, 4096)));
  EXPECT_TRUE(family->case_error(copies("individual", 65537, 4096)));
  EXPECT_TRUE(family->case_error(copies("individual", 4, 0)));
  EXPECT_TRUE(family->case_error(copies("individual", 4, (64 << 20) + 1)));
}

TEST(SmallCopiesFamily, RequestLayoutAndCallCounts) {
  const auto r = decode_small_copies_request(copies("individual", 1024, 4096));
  EXPECT_EQ(r.method, SmallCopiesRequest::Method::kIndividual);
  EXPECT_EQ(r.direction, SmallCopiesRequest::Direction::kH2D);
  EXPECT_EQ(r.count, 1024u);
  EXPECT_EQ(r.bytes, 4096u);
  EXPECT_EQ(r.batch_bytes(), 4u << 20);
  // Pieces are 4 KiB aligned and never contiguous.
  for (std::uint64_t s : {1ull, 8ull, 4095ull, 4096ull, 4097ull, 65536ull, 1ull << 20}) {
    auto q = r;
    q.bytes = s;
    EXPECT_EQ(q.piece_pitch() % 4096, 0u) << s;
    EXPECT_GE(q.piece_pitch(), s + 4096) << s;
    EXPECT_LT(q.piece_pitch(), s + 2 * 4096) << s;
  }
  EXPECT_EQ(r.piece_pitch(), 8192u);

  const std::vector<std::pair<std::string, std::uint64_t>> calls = {
      {"individual", 1024}, {"coalesced", 1}, {"batched", 1}, {"graph", 1}, {"gather_kernel", 1}};
  const std::vector<std::uint64_t> copy_ops = {1024, 1, 1024, 1024, 0};
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const auto q = decode_small_copies_request(copies(calls[i].first, 1024, 4096));
    EXPECT_EQ(to_string(q.method), calls[i].first);
    EXPECT_EQ(q.api_calls_per_batch(), calls[i].second) << calls[i].first;
    EXPECT_EQ(q.copy_operations_per_batch(), copy_ops[i]) << calls[i].first;
  }
  EXPECT_EQ(decode_small_copies_request(copies("graph", 4, 4, "d2h")).direction,
            SmallCopiesRequest::Direction::kD2H);
}

TEST(SmallCopiesFamily, LatchedBlocksAndProbeStayWithinTheDriversQueue) {
  auto calls = [](const std::string& method, std::int64_t count) {
    const auto r = decode_small_copies_request(copies(method, count, 4096));
    return std::pair(r.calls_per_block(), r.probe_batches());
  };
  using P = std::pair<std::uint64_t, std::uint64_t>;
  // At most 256 calls per block; a block holds several batches of individual copies, and a
  // batch of more than 256 spans blocks. The probe is as many batches as 256 calls hold, 1 to 4.
  EXPECT_EQ(calls("individual", 64), P(256, 4));
  EXPECT_EQ(calls("individual", 100), P(256, 2));
  EXPECT_EQ(calls("individual", 1024), P(256, 1));
  for (const auto* m : {"coalesced", "gather_kernel"}) EXPECT_EQ(calls(m, 65536), P(256, 4)) << m;
  // cudaMemcpyBatchAsync queues its N copies: at most 1024 copies per block, at least one call.
  EXPECT_EQ(calls("batched", 1), P(256, 4));
  EXPECT_EQ(calls("batched", 64), P(16, 4));
  EXPECT_EQ(calls("batched", 1024), P(1, 4));
  EXPECT_EQ(calls("batched", 4096), P(1, 4));
  // A graph launch queues every copy node at once: one launch per block.
  EXPECT_EQ(calls("graph", 1), P(1, 4));
  EXPECT_EQ(calls("graph", 1024), P(1, 4));
}

TEST(SmallCopiesFamily, MemoryNeeds) {
  const auto family = make_small_copies_family();
  // 1024 pieces of 4 KiB, one every 8 KiB; a contiguous 4 MiB device buffer.
  auto n = family->memory_needs(copies("individual", 1024, 4096));
  EXPECT_EQ(n.host_bytes, 8u << 20);
  EXPECT_EQ(n.device_bytes, 4u << 20);
  // Coalesced also holds the N*S staging buffer.
  n = family->memory_needs(copies("coalesced", 1024, 4096));
  EXPECT_EQ(n.host_bytes, (8u << 20) + (4u << 20));
  EXPECT_EQ(n.device_bytes, 4u << 20);
  n = family->memory_needs(copies("gather_kernel", 256, 65536));
  EXPECT_EQ(n.host_bytes, 256u * (65536 + 4096));
  EXPECT_EQ(n.device_bytes, 256u * 65536);
  n = family->memory_needs(copies("graph", 3, 5000, "d2h"));
  EXPECT_EQ(n.host_bytes, 3u * 12288);
  EXPECT_EQ(n.device_bytes, 15000u);
  // The largest case is measured in TiB, and validation must reject it rather than overflow.
  n = family->memory_needs(copies("coalesced", 65536, 64 << 20));
  EXPECT_EQ(n.device_bytes, std::uint64_t{65536} << 26);
  EXPECT_GT(n.host_bytes, 2 * n.device_bytes);
}

TEST(SmallCopiesFamily, SkipReasons) {
  const auto family = make_small_copies_family();
  const CaseSpec spec = copies("individual", 1024, 4096);

  Machine no_cuda;
  no_cuda.cuda_unavailable_reason = "CUDA driver not loaded (cudaErrorInsufficientDriver)";
  EXPECT_EQ(family->skip_reason(spec, no_cuda, 0), no_cuda.cuda_unavailable_reason);

  Machine no_gpu;
  const auto none = family->skip_reason(spec, no_gpu, 0);
  ASSERT_TRUE(none);
  EXPECT_NE(none->find("no CUDA device"), std::string::npos) << *none;

  const Machine one = h200_machine(1);
  const auto missing = family->skip_reason(spec, one, 1);
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->find("GPU 1 does not exist"), std::string::npos) << *missing;
  EXPECT_TRUE(family->skip_reason(spec, one, -1));
  EXPECT_FALSE(family->skip_reason(spec, h200_machine(2), 1));

  // Every method runs on a machine with a GPU; batched only when this build's CUDA runtime has
  // cudaMemcpyBatchAsync (12.8+; a build without CUDA skips in prepare() instead).
  for (const auto& m : kMethods) {
    const auto why = family->skip_reason(copies(m, 256, 4096), one, 0);
    if (m == "batched" && why) {
      EXPECT_NE(why->find("12.8"), std::string::npos) << *why;
    } else {
      EXPECT_FALSE(why) << m << ": " << *why;
    }
  }
  // One NUMA node with an unknown GPU node is no reason to skip: placement is best effort.
  Machine unknown_node = h200_machine(1);
  unknown_node.gpus[0].numa_node.reset();
  unknown_node.numa_nodes = {0, 1};
  unknown_node.node_cpus = {{0}, {1}};
  EXPECT_FALSE(family->skip_reason(spec, unknown_node, 0));

  // A runtime without cudaMemcpyBatchAsync skips only the batched method, saying why.
  // (A build against CUDA 12.6.)
  const auto old = make_small_copies_family(12060);
  const auto batched = old->skip_reason(copies("batched", 256, 4096), one, 0);
  ASSERT_TRUE(batched);
  EXPECT_NE(batched->find("12.8"), std::string::npos) << *batched;
  EXPECT_NE(batched->find("12.6"), std::string::npos) << *batched;
  EXPECT_FALSE(old->skip_reason(copies("graph", 256, 4096), one, 0));
  // No GPU comes first.
  EXPECT_EQ(old->skip_reason(copies("batched", 256, 4096), no_cuda, 0),
            no_cuda.cuda_unavailable_reason);
  // A build against 12.8 or newer runs it.
  EXPECT_FALSE(make_small_copies_family(12080)->skip_reason(copies("batched", 256, 4096), one, 0));
}

FamilyRegistry small_copies_registry() {
  FamilyRegistry r;
  r.add(make_small_copies_family());
  return r;
}

TEST(SmallCopiesFamily, ShippedScenarioFileExpandsAndValidates) {
  const FamilyRegistry families = small_copies_registry();
  const auto file = load_scenario_file(
      std::string(PATHBENCH_SOURCE_DIR) + "/scenarios/small_copies.json", families, {0});
  const Family& family = *families.find("small_copies");
  std::vector<std::string> ids;
  for (const auto& s : file.scenarios) {
    EXPECT_EQ(s.family, "small_copies");
    EXPECT_EQ(s.repetitions, 9);
    const auto cases = expand(s);
    EXPECT_NO_THROW(validate_cases(s, cases, family, h200_machine(), 0)) << s.name;
    for (const auto& c : cases) ids.push_back(c.id);
  }
  EXPECT_EQ(ids.size(), 3u * 5 + 4);
  auto has = [&](const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  EXPECT_TRUE(has("small_copies/method=individual/direction=h2d/count=1024/bytes=4096"));
  EXPECT_TRUE(has("small_copies/method=coalesced/direction=h2d/count=1024/bytes=4096"));
  EXPECT_TRUE(has("small_copies/method=gather_kernel/direction=h2d/count=256/bytes=65536"));
  EXPECT_TRUE(has("small_copies/method=batched/direction=h2d/count=64/bytes=1048576"));
  EXPECT_TRUE(has("small_copies/method=graph/direction=d2h/count=1024/bytes=4096"));
  EXPECT_FALSE(has("small_copies/method=gather_kernel/direction=d2h/count=1024/bytes=4096"));
}

TEST(SmallCopiesFamily, ScenarioValidationRejectsGatherD2hAndOversizedBatches) {
  const FamilyRegistry families = small_copies_registry();
  const Family& family = *families.find("small_copies");
  auto scenario = [&](const std::string& axes) {
    return parse_scenario_file("s.json",
                               R"({"schema": "pathbench.scenario/v1", "scenarios": [{"name": "n", )"
                               R"("family": "small_copies", "axes": )" +
                                   axes + "}]}",
                               families, {0})
        .scenarios[0];
  };
  const auto gather_d2h = scenario(
      R"({"method": ["gather_kernel"], "direction": ["d2h"], "count": [4], "bytes": [4096]})");
  try {
    validate_cases(gather_d2h, expand(gather_d2h), family, h200_machine(), 0);
    ADD_FAILURE() << "gather_kernel d2h was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gather_kernel"), std::string::npos) << e.what();
  }
  // 65536 x 64 MiB = 4 TiB does not fit this machine.
  const auto huge = scenario(R"({"method": ["coalesced"], "count": [65536], "bytes": ["64MiB"]})");
  EXPECT_THROW(validate_cases(huge, expand(huge), family, h200_machine(), 0), InputError);
  // Values outside the axis schema are refused by the parser itself.
  EXPECT_THROW(scenario(R"({"method": ["individual"], "count": [0], "bytes": [4096]})"),
               InputError);
  EXPECT_THROW(scenario(R"({"method": ["scatter"], "count": [1], "bytes": [4096]})"), InputError);
  EXPECT_THROW(scenario(R"({"method": ["graph"], "count": [1], "bytes": ["128MiB"]})"), InputError);
  EXPECT_THROW(scenario(R"({"method": ["graph"], "bytes": [4096]})"), InputError);
}

}  // namespace
}  // namespace pathbench::test_small_copies_family
