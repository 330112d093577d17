#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/floors.hpp"
#include "result/result.hpp"

namespace pathbench::test_floors {
namespace {

using ojson = nlohmann::ordered_json;

constexpr std::uint64_t k256MiB = 256ull << 20;
const double kGen5x16 = 32.0 * 16 * 128.0 / 130.0 / 8.0;  // 63.015... GB/s

ojson gpu_json(std::optional<int> gen_cur, std::optional<int> gen_max, std::optional<int> width_cur,
               std::optional<int> width_max) {
  auto opt = [](std::optional<int> v) { return v ? ojson(*v) : ojson(nullptr); };
  ojson g;
  g["name"] = "NVIDIA H200";
  g["pcie_gen_current"] = opt(gen_cur);
  g["pcie_gen_max"] = opt(gen_max);
  g["pcie_width_current"] = opt(width_cur);
  g["pcie_width_max"] = opt(width_max);
  g["numa_node"] = 0;
  return g;
}

ojson context_with(std::vector<ojson> gpus, std::optional<int> device = std::nullopt) {
  ojson c;
  c["tool_version"] = "0.1.0";
  c["gpus"] = ojson::array();
  for (auto& g : gpus) c["gpus"].push_back(std::move(g));
  if (device) c["device"] = *device;
  return c;
}

ojson healthy_gen5() { return gpu_json(5, 5, 16, 16); }

CaseResult copy_case(const std::string& direction, const std::string& host_memory,
                     std::uint64_t bytes, std::vector<double> gb_per_s,
                     CaseStatus status = CaseStatus::kOk) {
  CaseResult c;
  c.family = "copy";
  c.scenario = "copy-bandwidth";
  c.params = ojson::object();
  c.params["measure"] = "bandwidth";
  c.params["direction"] = direction;
  c.params["host_memory"] = host_memory;
  c.params["host_node"] = "local";
  c.params["bytes"] = bytes;
  c.id = "copy/measure=bandwidth/direction=" + direction + "/host_memory=" + host_memory +
         "/host_node=local/bytes=" + std::to_string(bytes);
  c.status = status;
  if (status == CaseStatus::kOk) {
    MetricResult m;
    m.name = "bandwidth";
    m.unit = "GB/s";
    m.better = Better::kHigher;
    m.samples = std::move(gb_per_s);
    m.stats = summarize(m.samples);
    c.metrics.push_back(std::move(m));
  } else {
    c.reason = "no GPU";
  }
  return c;
}

// Nine samples around `median` GB/s.
std::vector<double> around(double median) {
  return {median - 0.2,  median - 0.1,  median,        median + 0.1, median + 0.2,
          median - 0.05, median + 0.05, median - 0.15, median + 0.15};
}

const FloorCheck* find(const std::vector<FloorCheck>& checks, const std::string& id) {
  auto it =
      std::find_if(checks.begin(), checks.end(), [&](const FloorCheck& f) { return f.id == id; });
  return it == checks.end() ? nullptr : &*it;
}

std::size_t count_cases(const std::vector<FloorCheck>& checks) {
  return std::count_if(checks.begin(), checks.end(), [](const FloorCheck& f) {
    return f.id.find("/pcie_link") == std::string::npos;
  });
}

TEST(PcieRate, KnownGenerations) {
  EXPECT_NEAR(*pcie_raw_gb_per_s(5, 16), 63.015, 1e-3);
  EXPECT_NEAR(*pcie_raw_gb_per_s(4, 16), 31.508, 1e-3);
  EXPECT_NEAR(*pcie_raw_gb_per_s(3, 8), 7.877, 1e-3);
  EXPECT_DOUBLE_EQ(*pcie_raw_gb_per_s(1, 1), 0.25);
  EXPECT_DOUBLE_EQ(*pcie_raw_gb_per_s(2, 4), 2.0);
  EXPECT_DOUBLE_EQ(*pcie_raw_gb_per_s(6, 16), 121.0);  // FLIT: 242/256 of each flit is data
}

TEST(PcieRate, UnknownGenerationOrWidthIsEmpty) {
  EXPECT_FALSE(pcie_raw_gb_per_s(0, 16).has_value());
  EXPECT_FALSE(pcie_raw_gb_per_s(9, 16).has_value());
  EXPECT_FALSE(pcie_raw_gb_per_s(-1, 16).has_value());
  EXPECT_FALSE(pcie_raw_gb_per_s(5, 0).has_value());
}

TEST(Floor, VerdictNames) {
  EXPECT_EQ(to_string(FloorVerdict::kPass), "pass");
  EXPECT_EQ(to_string(FloorVerdict::kBelowFloor), "below_floor");
  EXPECT_EQ(to_string(FloorVerdict::kLinkDegraded), "link_degraded");
  EXPECT_EQ(to_string(FloorVerdict::kUnknownLink), "unknown_link");
}

// The acceptance criterion: a pinned 256 MiB H2D copy at half the link rate fails the floor.
TEST(Floor, HalfLinkRateIsBelowFloor) {
  Result r;
  r.context = context_with({healthy_gen5()});
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(0.50 * kGen5x16)));
  const auto checks = check_floors(r, FloorOptions{});

  const FloorCheck* link = find(checks, "gpu0/pcie_link");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->verdict, FloorVerdict::kPass);
  EXPECT_NEAR(link->link_raw_gb_per_s, kGen5x16, 1e-9);

  const FloorCheck* c = find(checks, r.cases[0].id);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, FloorVerdict::kBelowFloor);
  EXPECT_EQ(c->gpu, 0);
  EXPECT_NEAR(c->measured_gb_per_s, 0.5 * kGen5x16, 1e-9);
  EXPECT_NEAR(c->link_raw_gb_per_s, kGen5x16, 1e-9);
  EXPECT_NEAR(c->floor_gb_per_s, 0.8 * kGen5x16, 1e-9);
  EXPECT_NEAR(c->fraction, 0.5, 1e-9);
  EXPECT_NE(c->detail.find("50.0 %"), std::string::npos) << c->detail;

  const auto j = to_json(*c);
  EXPECT_EQ(j.at("verdict"), "below_floor");
  EXPECT_EQ(j.at("id"), r.cases[0].id);
  EXPECT_EQ(j.begin().key(), "id");
}

TEST(Floor, GoodPinnedCopyPasses) {
  Result r;
  r.context = context_with({healthy_gen5()});
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(0.88 * kGen5x16)));
  r.cases.push_back(copy_case("d2h", "pinned", 1ull << 30, around(0.88 * kGen5x16)));
  const auto checks = check_floors(r, FloorOptions{});
  ASSERT_EQ(count_cases(checks), 2u);
  for (const auto& c : r.cases) {
    const FloorCheck* f = find(checks, c.id);
    ASSERT_NE(f, nullptr) << c.id;
    EXPECT_EQ(f->verdict, FloorVerdict::kPass) << f->detail;
    EXPECT_NEAR(f->fraction, 0.88, 1e-9);
  }
}

TEST(Floor, RegisteredCopiesAreHeldToTheFloor) {
  Result r;
  r.context = context_with({healthy_gen5()});
  r.cases.push_back(copy_case("h2d", "registered-4k", k256MiB, around(0.5 * kGen5x16)));
  r.cases.push_back(copy_case("d2h", "registered-thp", k256MiB, around(0.9 * kGen5x16)));
  const auto checks = check_floors(r, FloorOptions{});
  EXPECT_EQ(find(checks, r.cases[0].id)->verdict, FloorVerdict::kBelowFloor);
  EXPECT_EQ(find(checks, r.cases[1].id)->verdict, FloorVerdict::kPass);
}

TEST(Floor, PageableSmallD2dAndOtherMeasuresAreIgnored) {
  Result r;
  r.context = context_with({healthy_gen5()});
  r.cases.push_back(copy_case("h2d", "pageable-4k", k256MiB, around(10.0)));
  r.cases.push_back(copy_case("h2d", "pageable-thp", k256MiB, around(10.0)));
  r.cases.push_back(copy_case("h2d", "pinned", 4ull << 20, around(10.0)));  // 4 MiB
  r.cases.push_back(copy_case("d2d", "pinned", k256MiB, around(10.0)));
  CaseResult latency = copy_case("h2d", "pinned", k256MiB, around(10.0));
  latency.params["measure"] = "latency";
  latency.id += "/latency";
  r.cases.push_back(latency);
  const auto checks = check_floors(r, FloorOptions{});
  EXPECT_EQ(count_cases(checks), 0u);
  EXPECT_EQ(checks.size(), 1u);  // only the link check
}

TEST(Floor, SkippedAndFailedCasesAreIgnored) {
  Result r;
  r.context = context_with({healthy_gen5()});
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, {}, CaseStatus::kSkipped));
  CaseResult failed = copy_case("d2h", "pinned", k256MiB, around(1.0));
  failed.status = CaseStatus::kFailed;  // even with samples, a failed case is not trusted
  r.cases.push_back(failed);
  const auto checks = check_floors(r, FloorOptions{});
  EXPECT_EQ(count_cases(checks), 0u);
}

TEST(Floor, MinBytesIsConfigurable) {
  Result r;
  r.context = context_with({healthy_gen5()});
  r.cases.push_back(copy_case("h2d", "pinned", 4ull << 20, around(0.5 * kGen5x16)));
  FloorOptions options;
  options.min_bytes = 4ull << 20;
  const auto checks = check_floors(r, options);
  ASSERT_EQ(count_cases(checks), 1u);
  EXPECT_EQ(find(checks, r.cases[0].id)->verdict, FloorVerdict::kBelowFloor);
}

TEST(Floor, DegradedGenerationUsesCurrentLink) {
  Result r;
  r.context = context_with({gpu_json(4, 5, 16, 16)});
  const double gen4x16 = *pcie_raw_gb_per_s(4, 16);
  // 27 GB/s: 86 % of Gen4 x16 (passes against the current link) but 43 % of Gen5 x16.
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(0.86 * gen4x16)));
  const auto checks = check_floors(r, FloorOptions{});

  const FloorCheck* link = find(checks, "gpu0/pcie_link");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->verdict, FloorVerdict::kLinkDegraded);
  EXPECT_NEAR(link->link_raw_gb_per_s, gen4x16, 1e-9);
  EXPECT_NE(link->detail.find("Gen4 x16"), std::string::npos) << link->detail;
  EXPECT_NE(link->detail.find("Gen5 x16"), std::string::npos) << link->detail;

  const FloorCheck* c = find(checks, r.cases[0].id);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, FloorVerdict::kPass);
  EXPECT_NEAR(c->link_raw_gb_per_s, gen4x16, 1e-9);
  EXPECT_NEAR(c->floor_gb_per_s, 0.8 * gen4x16, 1e-9);
}

TEST(Floor, DegradedWidthIsReported) {
  Result r;
  r.context = context_with({gpu_json(5, 5, 8, 16)});
  const double gen5x8 = *pcie_raw_gb_per_s(5, 8);
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(0.5 * gen5x8)));
  const auto checks = check_floors(r, FloorOptions{});
  EXPECT_EQ(find(checks, "gpu0/pcie_link")->verdict, FloorVerdict::kLinkDegraded);
  const FloorCheck* c = find(checks, r.cases[0].id);
  EXPECT_EQ(c->verdict, FloorVerdict::kBelowFloor);
  EXPECT_NEAR(c->link_raw_gb_per_s, gen5x8, 1e-9);
}

TEST(Floor, MissingGenerationIsUnknownLink) {
  Result r;
  r.context = context_with({gpu_json(std::nullopt, std::nullopt, 16, 16)});
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(55.0)));
  const auto checks = check_floors(r, FloorOptions{});
  EXPECT_EQ(find(checks, "gpu0/pcie_link")->verdict, FloorVerdict::kUnknownLink);
  const FloorCheck* c = find(checks, r.cases[0].id);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, FloorVerdict::kUnknownLink);  // never silently passes
  EXPECT_NEAR(c->measured_gb_per_s, 55.0, 1e-9);
  EXPECT_EQ(c->floor_gb_per_s, 0);
}

TEST(Floor, MissingMaximumIsUnknownLinkButCasesAreStillChecked) {
  Result r;
  r.context = context_with({gpu_json(5, std::nullopt, 16, std::nullopt)});
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(0.5 * kGen5x16)));
  const auto checks = check_floors(r, FloorOptions{});
  EXPECT_EQ(find(checks, "gpu0/pcie_link")->verdict, FloorVerdict::kUnknownLink);
  EXPECT_EQ(find(checks, r.cases[0].id)->verdict, FloorVerdict::kBelowFloor);
}

TEST(Floor, UnknownGenerationNumberIsUnknownLink) {
  Result r;
  r.context = context_with({gpu_json(42, 42, 16, 16)});
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(55.0)));
  const auto checks = check_floors(r, FloorOptions{});
  EXPECT_EQ(find(checks, "gpu0/pcie_link")->verdict, FloorVerdict::kUnknownLink);
  EXPECT_EQ(find(checks, r.cases[0].id)->verdict, FloorVerdict::kUnknownLink);
}

TEST(Floor, NoGpusInContextIsUnknownLink) {
  Result r;  // context without "gpus"
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(55.0)));
  const auto checks = check_floors(r, FloorOptions{});
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].verdict, FloorVerdict::kUnknownLink);
  EXPECT_NE(checks[0].detail.find("not in the result's context"), std::string::npos);
}

TEST(Floor, FractionIsConfigurable) {
  Result r;
  r.context = context_with({healthy_gen5()});
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(0.88 * kGen5x16)));
  FloorOptions strict;
  strict.fraction = 0.90;
  auto checks = check_floors(r, strict);
  EXPECT_EQ(find(checks, r.cases[0].id)->verdict, FloorVerdict::kBelowFloor);
  EXPECT_NEAR(find(checks, r.cases[0].id)->floor_gb_per_s, 0.9 * kGen5x16, 1e-9);

  FloorOptions lenient;
  lenient.fraction = 0.40;
  r.cases[0] = copy_case("h2d", "pinned", k256MiB, around(0.5 * kGen5x16));
  checks = check_floors(r, lenient);
  EXPECT_EQ(find(checks, r.cases[0].id)->verdict, FloorVerdict::kPass);
}

TEST(Floor, InvalidFractionThrows) {
  Result r;
  r.context = context_with({healthy_gen5()});
  for (double bad : {0.0, -0.5, 1.5}) {
    FloorOptions o;
    o.fraction = bad;
    EXPECT_THROW(check_floors(r, o), std::invalid_argument) << bad;
  }
}

TEST(Floor, DeviceIndexComesFromContext) {
  Result r;
  // GPU 0 healthy Gen5, GPU 1 degraded to Gen3 x16; the run used --device 1.
  r.context = context_with({healthy_gen5(), gpu_json(3, 5, 16, 16)}, 1);
  const double gen3x16 = *pcie_raw_gb_per_s(3, 16);
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(0.85 * gen3x16)));
  const auto checks = check_floors(r, FloorOptions{});

  EXPECT_EQ(find(checks, "gpu0/pcie_link")->verdict, FloorVerdict::kPass);
  EXPECT_EQ(find(checks, "gpu1/pcie_link")->verdict, FloorVerdict::kLinkDegraded);
  const FloorCheck* c = find(checks, r.cases[0].id);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->gpu, 1);
  EXPECT_NEAR(c->link_raw_gb_per_s, gen3x16, 1e-9);
  EXPECT_EQ(c->verdict, FloorVerdict::kPass);
}

TEST(Floor, DeviceOutOfRangeIsUnknownLink) {
  Result r;
  r.context = context_with({healthy_gen5()}, 3);
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(55.0)));
  const auto checks = check_floors(r, FloorOptions{});
  const FloorCheck* c = find(checks, r.cases[0].id);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->gpu, 3);
  EXPECT_EQ(c->verdict, FloorVerdict::kUnknownLink);
}

TEST(Floor, CaseDeviceParamOverridesContext) {
  Result r;
  r.context = context_with({healthy_gen5(), gpu_json(4, 4, 16, 16)}, 0);
  CaseResult c = copy_case("h2d", "pinned", k256MiB, around(0.85 * *pcie_raw_gb_per_s(4, 16)));
  c.params["device"] = 1;
  r.cases.push_back(c);
  const auto checks = check_floors(r, FloorOptions{});
  const FloorCheck* f = find(checks, c.id);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->gpu, 1);
  EXPECT_EQ(f->verdict, FloorVerdict::kPass);
}

TEST(Floor, SurvivesJsonRoundTrip) {
  // Parsed results carry bytes as unsigned integers; built ones as signed. Both must count.
  Result r;
  r.context = context_with({healthy_gen5()});
  r.cases.push_back(copy_case("h2d", "pinned", k256MiB, around(0.5 * kGen5x16)));
  r.start_time = r.end_time = "2026-11-29T13:45:12Z";
  const Result parsed = result_from_json(to_json(r), "mem.json");
  const auto checks = check_floors(parsed, FloorOptions{});
  ASSERT_EQ(count_cases(checks), 1u);
  EXPECT_EQ(find(checks, r.cases[0].id)->verdict, FloorVerdict::kBelowFloor);
}

}  // namespace
}  // namespace pathbench::test_floors
