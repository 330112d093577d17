// The device_memory family's host-side parts: axes and their rules (bad input refused at load,
// naming the file and the field), the fragmentation pattern generator, the largest-block
// bisection, the fragmentation ratio and the memory_returned check.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench/device_memory.hpp"
#include "case_spec.hpp"
#include "core/errors.hpp"
#include "measure/fragmentation_pattern.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "test_machines.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

CaseSpec make_spec(nlohmann::ordered_json params) {
  return testing::scenario_case("device_memory", std::move(params), "d.json", 3);
}

FamilyRegistry registry() {
  FamilyRegistry r;
  r.add(make_device_memory_family());
  return r;
}

// Parses, expands and validates a one-scenario file with these axes, as `pathbench run` does.
void load(const std::string& axes) {
  const FamilyRegistry families = registry();
  const std::string text =
      R"({"schema": "pathbench.scenario/v1", "scenarios": [{"name": "s", "family": "device_memory", "axes": )" +
      axes + "}]}";
  const auto file = parse_scenario_file("d.json", text, families, {0});
  for (const auto& sc : file.scenarios) {
    validate_cases(sc, expand(sc), *families.find("device_memory"), testing::h200_machine(), 0);
  }
}

// The InputError's message of loading these axes ("" when accepted).
std::string load_error(const std::string& axes) {
  try {
    load(axes);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceMemoryFamily, DescribesItsAxesAndMetrics) {
  const auto family = make_device_memory_family();
  EXPECT_EQ(family->name(), "device_memory");
  std::vector<std::string> names;
  for (const auto& a : family->axes()) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"allocator", "measure", "release_threshold", "bytes",
                                             "seed", "budget_pct", "block_sizes"}));
  EXPECT_EQ(family->axes()[0].allowed, (std::vector<std::string>{"cuda_malloc", "pool", "vmm"}));
  EXPECT_EQ(family->axes()[2].allowed, (std::vector<std::string>{"0", "unbounded"}));
  EXPECT_EQ(family->required_axes(), (std::vector<std::string>{"allocator", "measure"}));

  const CaseSpec af = make_spec({{"allocator", "pool"},
                                 {"measure", "alloc_free"},
                                 {"release_threshold", "unbounded"},
                                 {"bytes", 4096}});
  EXPECT_FALSE(family->case_error(af).has_value());
  EXPECT_EQ(*family->metric_names(af), (std::vector<std::string>{"alloc_time", "free_time"}));
  EXPECT_EQ(family->per_operation_metric_names(af),
            (std::vector<std::string>{"alloc_time", "free_time"}));
  const auto metrics = device_memory_metrics(decode_device_memory_request(af));
  for (const auto& m : metrics) {
    EXPECT_EQ(m.unit, "s");
    EXPECT_EQ(m.better, Better::kLower);
  }

  const CaseSpec frag = make_spec(
      {{"allocator", "vmm"}, {"measure", "fragmentation"}, {"seed", 7}, {"budget_pct", 50}});
  EXPECT_FALSE(family->case_error(frag).has_value());
  EXPECT_EQ(*family->metric_names(frag),
            (std::vector<std::string>{"largest_block", "reported_free", "fragmentation_ratio",
                                      "allocations_until_oom"}));
  EXPECT_TRUE(family->per_operation_metric_names(frag).empty());
  const auto fm = device_memory_metrics(decode_device_memory_request(frag));
  EXPECT_EQ(fm[0].better, Better::kHigher);
  EXPECT_EQ(fm[2].better, Better::kLower);
  EXPECT_EQ(fm[3].better, Better::kHigher);
}

TEST(DeviceMemoryFamily, DecodesTheRequest) {
  const auto r = decode_device_memory_request(make_spec({{"allocator", "pool"},
                                                         {"measure", "alloc_free"},
                                                         {"release_threshold", "0"},
                                                         {"bytes", 2 * kMiB}}));
  EXPECT_EQ(r.allocator, DeviceMemoryRequest::Allocator::kPool);
  EXPECT_EQ(r.allocator_name, "pool");
  EXPECT_EQ(r.measure, DeviceMemoryRequest::Measure::kAllocFree);
  ASSERT_TRUE(r.release_threshold.has_value());
  EXPECT_EQ(*r.release_threshold, DeviceMemoryRequest::ReleaseThreshold::kZero);
  EXPECT_EQ(r.bytes, 2 * kMiB);
  const auto f = decode_device_memory_request(make_spec({{"allocator", "cuda_malloc"},
                                                         {"measure", "fragmentation"},
                                                         {"seed", 3},
                                                         {"budget_pct", 80},
                                                         {"block_sizes", "kv"}}));
  EXPECT_FALSE(f.release_threshold.has_value());
  EXPECT_EQ(f.seed, 3u);
  EXPECT_EQ(f.budget_pct, 80u);
  EXPECT_EQ(f.mix.name, "kv");
  EXPECT_EQ(f.mix.largest(), 256 * kMiB);
}

TEST(DeviceMemoryFamily, MemoryNeedsOfAllocFreeAreTheRoundedSize) {
  const auto family = make_device_memory_family();
  EXPECT_EQ(family
                ->memory_needs(
                    make_spec({{"allocator", "vmm"}, {"measure", "alloc_free"}, {"bytes", 4096}}))
                .device_bytes,
            2 * kMiB);
  EXPECT_EQ(family
                ->memory_needs(make_spec({{"allocator", "vmm"},
                                          {"measure", "fragmentation"},
                                          {"seed", 1},
                                          {"budget_pct", 90}}))
                .device_bytes,
            0u);
  // 64 GiB fits the H200's 141 GiB; a size beyond the device is refused at load.
  EXPECT_EQ(load_error(R"({"allocator": ["cuda_malloc"], "measure": ["alloc_free"],
                          "bytes": ["64GiB"]})"),
            "");
}

TEST(DeviceMemoryFamily, ReleaseThresholdBelongsToThePoolOnly) {
  const std::string e = load_error(R"({"allocator": ["cuda_malloc"], "measure": ["alloc_free"],
      "release_threshold": ["0"], "bytes": [4096]})");
  EXPECT_EQ(e.rfind("d.json: /scenarios/0/axes", 0), 0u) << e;
  EXPECT_NE(e.find("release_threshold"), std::string::npos) << e;
  EXPECT_NE(e.find("allocator cuda_malloc has no pool"), std::string::npos) << e;
  EXPECT_NE(load_error(R"({"allocator": ["vmm"], "measure": ["alloc_free"],
      "release_threshold": ["unbounded"], "bytes": [4096]})")
                .find("allocator vmm has no pool"),
            std::string::npos);
  // The pool without one: the two thresholds measure different things, none is a default.
  const std::string missing =
      load_error(R"({"allocator": ["pool"], "measure": ["alloc_free"], "bytes": [4096]})");
  EXPECT_NE(missing.find("allocator pool needs release_threshold"), std::string::npos) << missing;
  EXPECT_EQ(load_error(R"({"allocator": ["pool"], "measure": ["alloc_free"],
      "release_threshold": ["0", "unbounded"], "bytes": [4096]})"),
            "");
}

TEST(DeviceMemoryFamily, BadValuesAreRefusedNamingTheField) {
  const std::string pct = load_error(R"({"allocator": ["vmm"], "measure": ["fragmentation"],
      "seed": [1], "budget_pct": [99]})");
  EXPECT_EQ(pct.rfind("d.json: /scenarios/0/axes/budget_pct", 0), 0u) << pct;
  EXPECT_FALSE(load_error(R"({"allocator": ["vmm"], "measure": ["fragmentation"],
      "seed": [1], "budget_pct": [0]})")
                   .empty());
  const std::string threshold = load_error(R"({"allocator": ["pool"], "measure": ["alloc_free"],
      "release_threshold": ["1GiB"], "bytes": [4096]})");
  EXPECT_EQ(threshold.rfind("d.json: /scenarios/0/axes/release_threshold", 0), 0u) << threshold;
  const std::string allocator =
      load_error(R"({"allocator": ["malloc"], "measure": ["alloc_free"], "bytes": [4096]})");
  EXPECT_EQ(allocator.rfind("d.json: /scenarios/0/axes/allocator", 0), 0u) << allocator;
  EXPECT_FALSE(load_error(R"({"allocator": ["vmm"], "measure": ["fragmentation"],
      "seed": [1], "budget_pct": [50], "block_sizes": ["llama"]})")
                   .empty());
}

TEST(DeviceMemoryFamily, EachMeasureTakesItsOwnAxes) {
  EXPECT_NE(load_error(R"({"allocator": ["vmm"], "measure": ["alloc_free"]})")
                .find("measure alloc_free needs bytes"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"allocator": ["vmm"], "measure": ["alloc_free"], "bytes": [4096],
                          "seed": [1]})")
                .find("measure alloc_free does not use seed"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"allocator": ["vmm"], "measure": ["fragmentation"], "seed": [1]})")
                .find("measure fragmentation needs budget_pct"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"allocator": ["vmm"], "measure": ["fragmentation"], "seed": [1],
                          "budget_pct": [50], "bytes": [4096]})")
                .find("measure fragmentation does not use bytes"),
            std::string::npos);
}

TEST(DeviceMemoryFamily, TheShippedScenarioFileValidates) {
  const FamilyRegistry families = registry();
  const auto file = load_scenario_file(
      std::string(PATHBENCH_SOURCE_DIR) + "/scenarios/device_memory.json", families, {0});
  std::vector<std::string> ids;
  for (const auto& sc : file.scenarios) {
    const auto cases = expand(sc);
    EXPECT_NO_THROW(
        validate_cases(sc, cases, *families.find("device_memory"), testing::h200_machine(), 0))
        << sc.name;
    for (const auto& c : cases) ids.push_back(c.id);
  }
  // alloc_free: 4 allocators (the pool twice) x 4 sizes; fragmentation: 4 (the pool twice).
  EXPECT_EQ(ids.size(), 20u);
  EXPECT_NE(std::find(ids.begin(), ids.end(),
                      "device_memory/allocator=pool/measure=alloc_free/"
                      "release_threshold=unbounded/bytes=1073741824"),
            ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(),
                      "device_memory/allocator=vmm/measure=fragmentation/seed=1/budget_pct=80"),
            ids.end());
}

// Replays a pattern on the host: every free names a live id, ids are never reused, live bytes
// never exceed the budget; returns the live blocks at the end, in allocation order.
std::vector<AllocationEvent> replay(const FragmentationPattern& p, std::uint64_t budget) {
  std::map<std::uint32_t, std::uint64_t> live;
  std::set<std::uint32_t> seen;
  std::uint64_t bytes = 0, peak = 0;
  for (const auto& e : p.events) {
    if (e.kind == AllocationEvent::Kind::kAlloc) {
      EXPECT_TRUE(seen.insert(e.id).second) << "id " << e.id << " reused";
      live[e.id] = e.bytes;
      bytes += e.bytes;
      peak = std::max(peak, bytes);
      EXPECT_LE(bytes, budget);
    } else {
      const auto it = live.find(e.id);
      EXPECT_NE(it, live.end()) << "free of " << e.id << " not live";
      if (it == live.end()) continue;
      EXPECT_EQ(it->second, e.bytes);
      bytes -= it->second;
      live.erase(it);
    }
  }
  EXPECT_EQ(peak, p.peak_live_bytes);
  EXPECT_EQ(bytes, p.final_live_bytes);
  std::vector<AllocationEvent> out;
  for (const auto& [id, b] : live) out.push_back({AllocationEvent::Kind::kAlloc, id, b});
  return out;
}

TEST(FragmentationPattern, SameSeedSameEventsOtherSeedOthers) {
  const SizeMix mix = kv_size_mix();
  const auto a = make_fragmentation_pattern(1, 8 * kGiB, mix);
  const auto b = make_fragmentation_pattern(1, 8 * kGiB, mix);
  const auto c = make_fragmentation_pattern(2, 8 * kGiB, mix);
  EXPECT_EQ(a.events, b.events);
  EXPECT_NE(a.events, c.events);
  EXPECT_FALSE(a.events.empty());
  // The generator's own sequence, not the standard library's: pinned so a change is seen.
  EXPECT_EQ(a.events.front().kind, AllocationEvent::Kind::kAlloc);
  EXPECT_EQ(a.events.front().id, 0u);
}

TEST(FragmentationPattern, StaysWithinTheBudgetAndLeavesInterleavedHoles) {
  const SizeMix mix = kv_size_mix();
  for (std::uint64_t seed : {1u, 2u, 3u, 42u}) {
    for (std::uint64_t budget : {std::uint64_t{300} * kMiB, 8 * kGiB, 100 * kGiB}) {
      const auto p = make_fragmentation_pattern(seed, budget, mix);
      const auto live = replay(p, budget);
      EXPECT_LE(p.peak_live_bytes, budget);
      // Phase 1 filled the budget to within one smallest block.
      EXPECT_GT(p.peak_live_bytes + mix.smallest(), budget) << seed << " " << budget;
      EXPECT_GT(p.frees, 0u);
      EXPECT_EQ(p.allocations, static_cast<std::uint64_t>(std::count_if(
                                   p.events.begin(), p.events.end(), [](const auto& e) {
                                     return e.kind == AllocationEvent::Kind::kAlloc;
                                   })));
      // Holes between live blocks: some freed id lies between two live ids of phase 1.
      std::set<std::uint32_t> live_ids;
      for (const auto& e : live) live_ids.insert(e.id);
      bool interleaved = false;
      for (const auto& e : p.events) {
        if (e.kind != AllocationEvent::Kind::kFree) continue;
        if (live_ids.lower_bound(e.id) != live_ids.end() &&
            live_ids.lower_bound(e.id) != live_ids.begin()) {
          interleaved = true;
        }
      }
      EXPECT_TRUE(interleaved) << seed << " " << budget;
    }
  }
}

TEST(FragmentationPattern, LargerBlocksFollowTheHoles) {
  const SizeMix mix = kv_size_mix();
  const auto p = make_fragmentation_pattern(5, 16 * kGiB, mix);
  const auto first_free = std::find_if(p.events.begin(), p.events.end(), [](const auto& e) {
    return e.kind == AllocationEvent::Kind::kFree;
  });
  ASSERT_NE(first_free, p.events.end());
  std::size_t after = 0;
  for (auto it = first_free; it != p.events.end(); ++it) {
    if (it->kind != AllocationEvent::Kind::kAlloc) continue;
    ++after;
    EXPECT_GE(it->bytes, 64 * kMiB) << "phase 3 draws from the larger half of the mix";
  }
  EXPECT_GT(after, 0u);
  // Every size of the mix appears in the fill.
  std::set<std::uint64_t> sizes;
  for (const auto& e : p.events) sizes.insert(e.bytes);
  EXPECT_EQ(sizes, (std::set<std::uint64_t>(mix.sizes.begin(), mix.sizes.end())));
}

TEST(FragmentationPattern, BoundsAndDegenerateBudgets) {
  const SizeMix mix = kv_size_mix();
  EXPECT_TRUE(make_fragmentation_pattern(1, kMiB, mix).events.empty());  // below the smallest
  const auto capped = make_fragmentation_pattern(1, 100 * kGiB, mix, 10);
  EXPECT_EQ(capped.allocations, 10u);
  // 141 GB at 95 %: a replay of a few thousand allocations, not hundreds of thousands.
  const auto h200 = make_fragmentation_pattern(1, 134 * kGiB, mix);
  EXPECT_LT(h200.allocations, 20000u);
  EXPECT_THROW(make_fragmentation_pattern(1, kGiB, SizeMix{"bad", {2, 1}, {1, 1}}),
               std::invalid_argument);
  EXPECT_THROW(make_fragmentation_pattern(1, kGiB, SizeMix{"bad", {1}, {0}}),
               std::invalid_argument);
}

TEST(DeviceMemoryBisection, FindsTheLargestFittingMultiple) {
  const std::uint64_t g = 2 * kMiB;
  unsigned steps = 0;
  auto below = [](std::uint64_t limit) {
    return std::function<bool(std::uint64_t)>([limit](std::uint64_t b) { return b <= limit; });
  };
  // Nothing fragmented: the upper bound fits, one probe.
  EXPECT_EQ(largest_fitting(below(100 * g), 100 * g, g, 64, &steps), 100 * g);
  EXPECT_EQ(steps, 1u);
  // A limit between multiples: rounded down to the granularity.
  EXPECT_EQ(largest_fitting(below(37 * g + 5), 100 * g, g, 64, &steps), 37 * g);
  EXPECT_LE(steps, 8u);
  EXPECT_EQ(largest_fitting(below(g - 1), 100 * g, g, 64), 0u);
  EXPECT_EQ(largest_fitting(below(1000 * g), g - 1, g, 64, &steps), 0u);
  EXPECT_EQ(steps, 0u);
  // 141 GB in 2 MiB steps: 18 probes at most.
  EXPECT_EQ(
      largest_fitting(below(std::uint64_t{77} * kGiB), std::uint64_t{141} * kGiB, g, 64, &steps),
      std::uint64_t{77} * kGiB);
  EXPECT_LE(steps, 18u);
  // Capped: a lower bound that fits.
  const std::uint64_t capped = largest_fitting(below(77 * g), 1000 * g, g, 3, &steps);
  EXPECT_EQ(steps, 3u);
  EXPECT_LE(capped, 77 * g);
}

TEST(DeviceMemoryOutcome, RatioAndBudget) {
  FragmentationOutcome o;
  EXPECT_EQ(o.fragmentation_ratio(), 0.0);
  o.reported_free = 10 * kGiB;
  o.largest_block = 10 * kGiB;
  EXPECT_DOUBLE_EQ(o.fragmentation_ratio(), 0.0);
  o.largest_block = 4 * kGiB;
  EXPECT_DOUBLE_EQ(o.fragmentation_ratio(), 0.6);
  o.pool_idle = 6 * kGiB;  // a pool's idle bytes are available to it
  EXPECT_DOUBLE_EQ(o.fragmentation_ratio(), 0.75);
  EXPECT_EQ(fragmentation_budget(100 * kGiB, 50), 50 * kGiB);
  EXPECT_EQ(fragmentation_budget(3 * kMiB, 95) % (2 * kMiB), 0u);
  EXPECT_EQ(device_memory_tolerance(std::uint64_t{141} << 30), (std::uint64_t{141} << 30) / 100);
  EXPECT_EQ(device_memory_tolerance(8 * kGiB), 256 * kMiB);
}

TEST(DeviceMemoryChecks, MemoryReturnedWithinTheTolerance) {
  const std::uint64_t total = 16 * kGiB;  // tolerance 256 MiB
  const Check ok = memory_returned_check(10 * kGiB, 10 * kGiB - 100 * kMiB, 11 * kGiB, total);
  EXPECT_EQ(ok.name, "memory_returned");
  EXPECT_TRUE(ok.passed) << ok.detail;
  EXPECT_EQ(ok.value.at("free_at_first_case").get<std::uint64_t>(), 11 * kGiB);
  EXPECT_EQ(ok.value.at("not_returned").get<std::int64_t>(), 100 * 1048576);
  const Check leaked = memory_returned_check(10 * kGiB, 9 * kGiB, 10 * kGiB, total);
  EXPECT_FALSE(leaked.passed);
  EXPECT_NE(leaked.detail.find("did not come back"), std::string::npos) << leaked.detail;
  // More free after (another process let go): fine.
  EXPECT_TRUE(memory_returned_check(10 * kGiB, 12 * kGiB, 10 * kGiB, total).passed);
}

TEST(DeviceMemoryFamily, WithoutCudaEveryCaseIsSkippedWithTheReason) {
#ifdef PATHBENCH_HAVE_CUDA
  GTEST_SKIP() << "built with CUDA: prepare() needs a device (tests/gpu covers it)";
#else
  const auto family = make_device_memory_family();
  EXPECT_THROW(
      family->prepare(make_spec({{"allocator", "vmm"}, {"measure", "alloc_free"}, {"bytes", 4096}}),
                      testing::h200_machine(), 0),
      SkipCase);
#endif
}

}  // namespace
}  // namespace pathbench
