// The peer family's host-side rules: axes, invalid combinations, decoding, memory needs, skip
// reasons with 0/1/2 GPUs, the derived `link` parameter, {"gpu_pairs": "all"} expansion, the
// --devices parser and the shipped scenario file. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/families.hpp"
#include "bench/peer.hpp"
#include "case_spec.hpp"
#include "core/errors.hpp"
#include "inventory/gpu_selection.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "scenario/typed_axis.hpp"
#include "test_machines.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_peer_family {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

CaseSpec make_spec(nlohmann::ordered_json params) {
  return testing::scenario_case("peer", std::move(params));
}

CaseSpec peer(const std::string& pair, const std::string& method, std::int64_t bytes,
              const std::string& direction = "uni", const std::string& measure = "bandwidth") {
  return make_spec({{"pair", pair},
                    {"method", method},
                    {"direction", direction},
                    {"measure", measure},
                    {"bytes", bytes}});
}

using pathbench::testing::make_link;

// `gpus` H200s; with two or more, every pair linked by NV18 with peer access.
Machine gpu_machine(int gpus) {
  Machine m = pathbench::testing::h200_machine(gpus);
  for (int s = 0; s < gpus; ++s) {
    for (int d = 0; d < gpus; ++d) {
      if (s != d) m.links.push_back(make_link(s, d, LinkType::kNvlink, 18, true));
    }
  }
  return m;
}

Machine no_cuda_machine() {
  Machine m = gpu_machine(0);
  m.cuda_unavailable_reason = "no CUDA-capable device is detected";
  return m;
}

bool has_text(const std::optional<std::string>& s, const std::string& text) {
  return s && s->find(text) != std::string::npos;
}

TEST(PeerFamily, DescribesItsAxes) {
  const auto family = make_peer_family();
  EXPECT_EQ(family->name(), "peer");
  EXPECT_FALSE(family->description().empty());
  std::vector<std::string> names;
  for (const auto& axis : family->axes()) names.push_back(axis.name);
  EXPECT_EQ(names, (std::vector<std::string>{"pair", "method", "direction", "measure", "bytes"}));
  const auto& pair = family->axes()[0];
  EXPECT_EQ(pair.kind, AxisSchema::Kind::kString);
  EXPECT_TRUE(pair.allowed.empty());  // "S-D" is checked by invalid_combination
  EXPECT_EQ(family->axes()[1].allowed,
            (std::vector<std::string>{"peer_access", "no_peer_access", "two_hop", "sm_read"}));
  EXPECT_EQ(family->axes()[2].allowed, (std::vector<std::string>{"uni", "bi"}));
  EXPECT_EQ(family->axes()[3].allowed, (std::vector<std::string>{"bandwidth", "latency"}));
  const auto& bytes = family->axes()[4];
  EXPECT_EQ(bytes.kind, AxisSchema::Kind::kInteger);
  EXPECT_EQ(bytes.min, 1);
  EXPECT_EQ(family->required_axes(), (std::vector<std::string>{"pair", "method", "bytes"}));
}

TEST(PeerFamily, DecodesRequests) {
  const auto r = decode_peer_request(peer("1-0", "sm_read", 64 * kMiB, "bi"));
  ASSERT_TRUE(r.gpus);
  EXPECT_EQ(r.src(), 1);
  EXPECT_EQ(r.dst(), 0);
  EXPECT_EQ(r.method, PeerRequest::Method::kSmRead);
  EXPECT_TRUE(r.bidirectional);
  EXPECT_EQ(r.measure, PeerRequest::Measure::kBandwidth);
  EXPECT_EQ(r.bytes, static_cast<std::uint64_t>(64 * kMiB));
  EXPECT_TRUE(r.needs_peer_access());
  // sm_read: the destination reads the source (0 reads 1), and for bi the other way too.
  EXPECT_EQ(r.peer_access_pairs(), (std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}));

  const auto lat = decode_peer_request(peer("0-1", "two_hop", 4, "uni", "latency"));
  EXPECT_EQ(lat.method, PeerRequest::Method::kTwoHop);
  EXPECT_EQ(lat.measure, PeerRequest::Measure::kLatency);
  EXPECT_FALSE(lat.bidirectional);
  EXPECT_FALSE(lat.needs_peer_access());
  EXPECT_TRUE(lat.peer_access_pairs().empty());

  EXPECT_EQ(decode_peer_request(peer("0-1", "sm_read", 4)).peer_access_pairs(),
            (std::vector<std::pair<int, int>>{{1, 0}}));
  EXPECT_EQ(decode_peer_request(peer("0-1", "peer_access", 4)).peer_access_pairs(),
            (std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}));
  EXPECT_EQ(decode_peer_request(peer("0-1", "no_peer_access", 4)).peer_access_pairs(),
            (std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}));
  EXPECT_FALSE(decode_peer_request(peer("0-1", "no_peer_access", 4)).needs_peer_access());

  // direction and measure are optional: uni bandwidth.
  const auto bare =
      decode_peer_request(make_spec({{"pair", "2-3"}, {"method", "peer_access"}, {"bytes", 4096}}));
  EXPECT_FALSE(bare.bidirectional);
  EXPECT_EQ(bare.measure, PeerRequest::Measure::kBandwidth);

  const auto none = decode_peer_request(peer("none", "peer_access", 4096));
  EXPECT_FALSE(none.gpus);
  EXPECT_EQ(none.src(), -1);
  EXPECT_TRUE(none.peer_access_pairs().empty());
  EXPECT_EQ(to_string(PeerRequest::Method::kNoPeerAccess), "no_peer_access");
}

TEST(PeerFamily, TwoHopStagingChunksAndMemoryNeeds) {
  auto req = [](std::int64_t bytes, const std::string& direction = "uni") {
    return decode_peer_request(peer("0-1", "two_hop", bytes, direction));
  };
  // Small copies: one chunk of the copy's size, one slot.
  EXPECT_EQ(req(4096).staging_chunk_bytes(), 4096u);
  EXPECT_EQ(req(4096).staging_chunks(), 1u);
  EXPECT_EQ(req(4096).host_bytes(), 4096u);
  // 4 MiB chunks up to 256 MiB (64 chunks), then larger chunks so a copy stays at 64.
  EXPECT_EQ(req(10 * kMiB).staging_chunk_bytes(), static_cast<std::uint64_t>(4 * kMiB));
  EXPECT_EQ(req(10 * kMiB).staging_chunks(), 3u);
  EXPECT_EQ(req(10 * kMiB).host_bytes(), static_cast<std::uint64_t>(3 * 4 * kMiB));
  EXPECT_EQ(req(256 * kMiB).staging_chunk_bytes(), static_cast<std::uint64_t>(4 * kMiB));
  EXPECT_EQ(req(256 * kMiB).staging_chunks(), 64u);
  EXPECT_EQ(req(kGiB).staging_chunk_bytes(), static_cast<std::uint64_t>(16 * kMiB));
  EXPECT_EQ(req(kGiB).staging_chunks(), 64u);
  EXPECT_EQ(req(kGiB).host_bytes(), static_cast<std::uint64_t>(kPeerStagingSlots * 16 * kMiB));
  // An odd size: whole pages per chunk, the last chunk shorter; never more than 64 chunks.
  const auto odd = req(kGiB + 12345);
  EXPECT_EQ(odd.staging_chunk_bytes() % 4096, 0u);
  EXPECT_LE(odd.staging_chunks(), kPeerMaxChunksPerCopy);
  EXPECT_GE(odd.staging_chunks() * odd.staging_chunk_bytes(), odd.bytes);
  // bi stages both directions.
  EXPECT_EQ(req(kGiB, "bi").host_bytes(), 2 * req(kGiB).host_bytes());

  const auto family = make_peer_family();
  const auto uni = family->memory_needs(peer("0-1", "peer_access", kGiB));
  EXPECT_EQ(uni.device_bytes, static_cast<std::uint64_t>(kGiB));  // per GPU of the pair
  EXPECT_EQ(uni.host_bytes, 0u);
  const auto bi = family->memory_needs(peer("0-1", "peer_access", kGiB, "bi"));
  EXPECT_EQ(bi.device_bytes, static_cast<std::uint64_t>(2 * kGiB));  // a source and a destination
  const auto staged = family->memory_needs(peer("0-1", "two_hop", kGiB, "bi"));
  EXPECT_EQ(staged.host_bytes, req(kGiB, "bi").host_bytes());
  EXPECT_EQ(family->memory_needs(peer("0-1", "no_peer_access", kGiB)).host_bytes, 0u);
}

TEST(PeerFamily, RejectsInvalidCombinations) {
  const auto family = make_peer_family();
  EXPECT_FALSE(family->invalid_combination(peer("0-1", "peer_access", 4096)));
  EXPECT_FALSE(family->invalid_combination(peer("none", "two_hop", 4096, "bi")));
  EXPECT_FALSE(family->invalid_combination(peer("12-3", "sm_read", 4, "uni", "latency")));
  for (const char* bad : {"0-0", "0", "a-b", "-1-0", "0-1-2", "0 - 1", "", "all"}) {
    const auto why = family->invalid_combination(peer(bad, "peer_access", 4096));
    ASSERT_TRUE(why) << bad;
    EXPECT_NE(why->find("S-D"), std::string::npos) << *why;
  }
  const auto bi_latency =
      family->invalid_combination(peer("0-1", "peer_access", 4, "bi", "latency"));
  ASSERT_TRUE(bi_latency);
  EXPECT_NE(bi_latency->find("latency"), std::string::npos);
}

TEST(PeerFamily, SkipReasonsWithZeroOneAndTwoGpus) {
  const auto family = make_peer_family();
  // No CUDA: the reason says why there is no GPU at all.
  const auto no_cuda = family->skip_reason(peer("none", "peer_access", 4096), no_cuda_machine(), 0);
  EXPECT_TRUE(has_text(no_cuda, "needs two GPUs")) << no_cuda.value_or("");
  EXPECT_TRUE(has_text(no_cuda, "no CUDA-capable device")) << no_cuda.value_or("");
  EXPECT_TRUE(has_text(family->skip_reason(peer("0-1", "two_hop", 4096), no_cuda_machine(), 0),
                       "needs two GPUs"));

  // One GPU: every case, every method, says the machine has only one.
  const Machine one = gpu_machine(1);
  for (const char* method : {"peer_access", "no_peer_access", "two_hop", "sm_read"}) {
    const auto why = family->skip_reason(peer("none", method, 4096), one, 0);
    ASSERT_TRUE(why) << method;
    EXPECT_EQ(*why, "needs two GPUs; this machine has 1 (GPU 0: NVIDIA H200)");
  }
  EXPECT_TRUE(
      has_text(family->skip_reason(peer("0-1", "peer_access", 4096), one, 0), "needs two GPUs"));

  // Two GPUs with NVLink: everything runs; `--device` does not matter.
  const Machine two = gpu_machine(2);
  for (const char* method : {"peer_access", "no_peer_access", "two_hop", "sm_read"}) {
    EXPECT_FALSE(family->skip_reason(peer("0-1", method, 4096, "bi"), two, 0)) << method;
    EXPECT_FALSE(family->skip_reason(peer("1-0", method, 4096), two, 7)) << method;
  }
  // A pair naming a GPU the machine lacks.
  EXPECT_TRUE(has_text(family->skip_reason(peer("0-2", "peer_access", 4096), two, 0),
                       "GPU 2 does not exist; this machine has 2"));
  // pair=none with two GPUs selected: a scenario mistake, said so.
  EXPECT_TRUE(
      has_text(family->skip_reason(peer("none", "peer_access", 4096), two, 0), "gpu_pairs"));

  // --devices narrowed the selection.
  Machine four = gpu_machine(4);
  four.selected_gpus = {0, 2};
  EXPECT_FALSE(family->skip_reason(peer("2-0", "peer_access", 4096), four, 0));
  EXPECT_TRUE(has_text(family->skip_reason(peer("0-1", "peer_access", 4096), four, 0),
                       "GPU 1 is not selected (--devices selects GPU 0, 2)"));
  four.selected_gpus = {3};
  EXPECT_TRUE(has_text(family->skip_reason(peer("none", "peer_access", 4096), four, 0),
                       "--devices selected only GPU 3 of this machine's 4"));
}

TEST(PeerFamily, MethodsNeedingPeerAccessSkipWithoutIt) {
  const auto family = make_peer_family();
  Machine m = gpu_machine(2);
  m.links = {make_link(0, 1, LinkType::kSys, 0, false), make_link(1, 0, LinkType::kSys, 0, false)};
  for (const char* method : {"peer_access", "sm_read"}) {
    const auto why = family->skip_reason(peer("0-1", method, 4096), m, 0);
    ASSERT_TRUE(why) << method;
    EXPECT_NE(why->find("cudaDeviceCanAccessPeer = 0"), std::string::npos) << *why;
    EXPECT_NE(why->find("host-staged"), std::string::npos) << *why;
    EXPECT_NE(why->find(method), std::string::npos) << *why;
  }
  // The staged methods measure exactly such a pair.
  EXPECT_FALSE(family->skip_reason(peer("0-1", "no_peer_access", 4096, "bi"), m, 0));
  EXPECT_FALSE(family->skip_reason(peer("0-1", "two_hop", 4096, "bi"), m, 0));

  // One-way access: sm_read 0->1 needs GPU 1 to read GPU 0, which works; bi needs both ways.
  m.links = {make_link(0, 1, LinkType::kPix, 0, false), make_link(1, 0, LinkType::kPix, 0, true)};
  EXPECT_FALSE(family->skip_reason(peer("0-1", "sm_read", 4096), m, 0));
  EXPECT_TRUE(has_text(family->skip_reason(peer("0-1", "sm_read", 4096, "bi"), m, 0),
                       "GPU 0 cannot access GPU 1"));
  EXPECT_TRUE(has_text(family->skip_reason(peer("1-0", "sm_read", 4096), m, 0),
                       "GPU 0 cannot access GPU 1"));
  // Unknown peer access (no CUDA attributes in the inventory): prepare() asks the driver.
  m.links = {make_link(0, 1, LinkType::kPix, 0, std::nullopt)};
  EXPECT_FALSE(family->skip_reason(peer("0-1", "peer_access", 4096), m, 0));
}

TEST(PeerFamily, DerivesTheLinkParameterIntoTheId) {
  const auto family = make_peer_family();
  Machine m = gpu_machine(3);
  m.links = {make_link(0, 1, LinkType::kNvlink, 18, true),
             make_link(1, 0, LinkType::kNvlink, 18, true), make_link(0, 2, LinkType::kPxb, 0, true),
             make_link(2, 0, LinkType::kSys, 0, false)};
  std::vector<CaseSpec> cases = {peer("0-1", "peer_access", 4096), peer("0-2", "two_hop", 4096),
                                 peer("2-0", "two_hop", 4096), peer("1-2", "two_hop", 4096),
                                 peer("none", "sm_read", 4096)};
  derive_case_params(cases, *family, m);
  EXPECT_EQ(cases[0].id,
            "peer/pair=0-1/link=nvlink18/method=peer_access/direction=uni/measure=bandwidth/"
            "bytes=4096");
  EXPECT_EQ(cases[0].str("link"), "nvlink18");
  // link comes right after pair in the params (and so in the id and the result).
  std::vector<std::string> keys;
  for (const auto& [k, v] : cases[0].params.items()) keys.push_back(k);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"pair", "link", "method", "direction", "measure", "bytes"}));
  EXPECT_EQ(cases[1].str("link"), "pcie-p2p");
  EXPECT_EQ(cases[2].str("link"), "host-staged");
  EXPECT_EQ(cases[3].str("link"), "unknown");  // the inventory has no 1->2 link
  EXPECT_EQ(cases[4].str("link"), "none");
  EXPECT_EQ(cases[4].id,
            "peer/pair=none/link=none/method=sm_read/direction=uni/measure=bandwidth/bytes=4096");
  // Deriving again replaces, never duplicates.
  derive_case_params(cases, *family, m);
  EXPECT_EQ(cases[0].params.size(), 6u);
  EXPECT_EQ(cases[0].str("link"), "nvlink18");

  EXPECT_EQ(GpuPairAxis("pair", "").link(peer("0-1", "two_hop", 4), m), "nvlink18");
  // Families without derived parameters keep their ids.
  FamilyRegistry registry = builtin_families();
  std::vector<CaseSpec> copy = {make_spec({{"measure", "bandwidth"}, {"bytes", 4}})};
  copy[0].family = "copy";
  copy[0].id = case_id("copy", copy[0].params);
  const std::string before = copy[0].id;
  derive_case_params(copy, *registry.find("copy"), m);
  EXPECT_EQ(copy[0].id, before);
}

TEST(PeerFamily, SkipReasonOfTheTwoGpuRequirement) {
  auto two_gpu_reason = [](const Machine& m) { return Requirements().two_gpus().unmet(m, 0); };
  EXPECT_FALSE(two_gpu_reason(gpu_machine(2)));
  EXPECT_TRUE(has_text(two_gpu_reason(gpu_machine(1)), "this machine has 1"));
  EXPECT_TRUE(has_text(two_gpu_reason(no_cuda_machine()), "none usable"));
  Machine none_selected = gpu_machine(2);
  none_selected.selected_gpus.clear();
  EXPECT_TRUE(has_text(two_gpu_reason(none_selected), "--devices selected none"));
}

FamilyRegistry peer_registry() {
  FamilyRegistry r;
  r.add(make_peer_family());
  return r;
}

std::vector<std::string> pair_values(const std::vector<int>& gpus) {
  static const FamilyRegistry families = peer_registry();
  const auto file = parse_scenario_file(
      "s.json",
      R"({"schema": "pathbench.scenario/v1", "scenarios": [{"name": "n", "family": "peer", )"
      R"("axes": {"pair": {"gpu_pairs": "all"}, "method": ["two_hop"], "bytes": [4096]}}]})",
      families, {0}, gpus);
  std::vector<std::string> out;
  for (const auto& v : file.scenarios[0].axes[0].values) out.push_back(v.get<std::string>());
  return out;
}

TEST(PeerFamily, GpuPairsExpandToEveryOrderedPairOfTheSelectedGpus) {
  EXPECT_EQ(pair_values({0, 1}), (std::vector<std::string>{"0-1", "1-0"}));
  EXPECT_EQ(pair_values({2, 0, 1}),
            (std::vector<std::string>{"0-1", "0-2", "1-0", "1-2", "2-0", "2-1"}));
  // Fewer than two: one value, so the cases exist and are skipped with the reason.
  EXPECT_EQ(pair_values({0}), (std::vector<std::string>{"none"}));
  EXPECT_EQ(pair_values({}), (std::vector<std::string>{"none"}));

  const FamilyRegistry families = peer_registry();
  auto error = [&](const std::string& axes) -> std::string {
    try {
      parse_scenario_file("s.json",
                          R"({"schema": "pathbench.scenario/v1", "scenarios": [{"name": "n", )"
                          R"("family": "peer", "axes": )" +
                              axes + "}]}",
                          families, {0}, {0, 1});
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error(R"({"pair": {"gpu_pairs": "some"}, "method": ["two_hop"], "bytes": [4]})")
                .find("/scenarios/0/axes/pair/gpu_pairs: expected \"all\""),
            std::string::npos);
  EXPECT_NE(error(R"({"pair": ["0-1"], "method": ["two_hop"], "bytes": {"gpu_pairs": "all"}})")
                .find("/scenarios/0/axes/bytes/gpu_pairs: gpu_pairs applies to string axes"),
            std::string::npos);
  EXPECT_NE(error(R"({"pair": {"pow2": [0, 1]}, "method": ["two_hop"], "bytes": [4]})")
                .find("ranges apply to integer axes only"),
            std::string::npos);
  // Mixed with plain values; duplicates are named.
  EXPECT_NE(error(R"({"pair": ["0-1", {"gpu_pairs": "all"}], "method": ["two_hop"], )"
                  R"("bytes": [4]})")
                .find("appears twice"),
            std::string::npos);
}

TEST(PeerFamily, ParsesDeviceLists) {
  const std::vector<int> four = {3, 0, 1, 2};
  EXPECT_EQ(parse_device_list("all", four), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_device_list(" all ", four), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_device_list("0,1", four), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_device_list(" 2 , 0 ", four), (std::vector<int>{0, 2}));
  EXPECT_EQ(parse_device_list("3", four), (std::vector<int>{3}));
  EXPECT_TRUE(parse_device_list("all", {}).empty());
  auto error = [&](const std::string& text, const std::vector<int>& available) -> std::string {
    try {
      parse_device_list(text, available);
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "--devices");
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(
      error("4", four).find("GPU 4 does not exist; this machine's CUDA devices are 0, 1, 2, 3"),
      std::string::npos);
  EXPECT_NE(error("0", {}).find("GPU 0 does not exist; this machine has no usable CUDA device"),
            std::string::npos);
  EXPECT_NE(error("0,0", four).find("GPU 0 is listed twice"), std::string::npos);
  // The list's form is checked before the machine: a typo is named as such.
  EXPECT_NE(error("7,x", four).find("\"x\" is not a CUDA device index"), std::string::npos);
  for (const char* bad : {"x", "-1", "0,,1", "0,", "1.5", "0;1", "ALL2", "99999"}) {
    EXPECT_NE(error(bad, four).find("is not a CUDA device index"), std::string::npos) << bad;
  }
  EXPECT_NE(error("", four).find("expected \"all\""), std::string::npos);
}

TEST(PeerFamily, PairHelpers) {
  EXPECT_EQ(gpu_pair_values({1, 0, 1}), (std::vector<std::string>{"0-1", "1-0"}));
  EXPECT_TRUE(gpu_pair_values({5}).empty());
  EXPECT_EQ(parse_gpu_pair("0-1"), std::make_pair(0, 1));
  EXPECT_EQ(parse_gpu_pair("12-3"), std::make_pair(12, 3));
  for (const char* bad : {"0-0", "none", "-1", "0-", "-0", "a-1", "0 -1", "+0-1", "0-1-2"}) {
    EXPECT_FALSE(parse_gpu_pair(bad)) << bad;
  }
  EXPECT_EQ(join_indexes({0, 2, 3}), "0, 2, 3");
}

std::vector<CaseSpec> shipped_cases(const Machine& machine, std::size_t* scenarios = nullptr) {
  const FamilyRegistry families = peer_registry();
  const auto file = load_scenario_file(std::string(PATHBENCH_SOURCE_DIR) + "/scenarios/peer.json",
                                       families, machine.numa_nodes, machine.selected_gpus);
  const Family& family = *families.find("peer");
  std::vector<CaseSpec> all;
  for (const auto& s : file.scenarios) {
    EXPECT_EQ(s.family, "peer");
    // Thresholds come from each node type's baseline: a shipped gate block names metrics only.
    EXPECT_TRUE(s.gate.is_null() || !s.gate.contains("threshold_pct")) << s.name;
    auto cases = expand(s);
    derive_case_params(cases, family, machine);
    EXPECT_NO_THROW(validate_cases(s, cases, family, machine, 0)) << s.name;
    all.insert(all.end(), cases.begin(), cases.end());
  }
  if (scenarios) *scenarios = file.scenarios.size();
  return all;
}

TEST(PeerFamily, ShippedScenarioFileOnTwoGpus) {
  const Machine two = gpu_machine(2);
  const auto cases = shipped_cases(two);
  // Per pair: 4 methods x uni/bi x 6 sizes of bandwidth, 4 methods x 4 sizes of latency.
  EXPECT_EQ(cases.size(), 2u * (4 * 2 * 6 + 4 * 4));
  std::vector<std::string> ids;
  for (const auto& c : cases) ids.push_back(c.id);
  auto has = [&](const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  EXPECT_TRUE(
      has("peer/pair=0-1/link=nvlink18/method=peer_access/direction=uni/"
          "measure=bandwidth/bytes=268435456"));
  EXPECT_TRUE(
      has("peer/pair=1-0/link=nvlink18/method=two_hop/direction=bi/"
          "measure=bandwidth/bytes=1073741824"));
  EXPECT_TRUE(
      has("peer/pair=0-1/link=nvlink18/method=sm_read/direction=uni/"
          "measure=latency/bytes=4"));
  EXPECT_FALSE(
      has("peer/pair=0-1/link=nvlink18/method=sm_read/direction=bi/"
          "measure=latency/bytes=4"));
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "ids must be unique";
  const auto family = make_peer_family();
  for (const auto& c : cases) EXPECT_FALSE(family->skip_reason(c, two, 0)) << c.id;
}

TEST(PeerFamily, ShippedScenarioFileOnOneGpuSkipsEveryCaseWithTheReason) {
  const auto family = make_peer_family();
  for (const Machine& m : {gpu_machine(1), no_cuda_machine()}) {
    const auto cases = shipped_cases(m);
    EXPECT_EQ(cases.size(), 4u * 2 * 6 + 4 * 4);
    for (const auto& c : cases) {
      EXPECT_EQ(c.str("pair"), "none");
      EXPECT_EQ(c.str("link"), "none");
      const auto why = family->skip_reason(c, m, 0);
      EXPECT_TRUE(has_text(why, "needs two GPUs")) << c.id;
    }
  }
}

}  // namespace
}  // namespace pathbench::test_peer_family
