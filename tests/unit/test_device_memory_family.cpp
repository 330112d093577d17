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

namespace pathbench::test_device_memory_family {
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
  EXPECT_EQ(family->axes()[0].allowed,
            (std::vector<std::string>{"cuda_malloc", "pool", "vmm", "caching"}));
  EXPECT_EQ(family->axes()[2].allowed,
            (std::vector<std::string>{"0", "unbounded", "trim_to_zero"}));
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

TEST(DeviceMemoryFamily, ThePoolsReplayAddsItsSynchronisationFigures) {
  const auto family = make_device_memory_family();
  const std::vector<std::string> replay{"largest_block", "reported_free", "fragmentation_ratio",
                                        "allocations_until_oom"};
  std::vector<std::string> pool = replay;
  for (const char* m : {"reserved_after_sync", "used_after_sync", "released_at_sync"}) {
    pool.push_back(m);
  }
  std::vector<std::string> trim = pool;
  trim.push_back("released_by_trim");
  auto names = [&](const char* threshold) {
    return *family->metric_names(make_spec({{"allocator", "pool"},
                                            {"measure", "fragmentation"},
                                            {"release_threshold", threshold},
                                            {"seed", 1},
                                            {"budget_pct", 50}}));
  };
  EXPECT_EQ(names("0"), pool);
  EXPECT_EQ(names("unbounded"), pool);
  EXPECT_EQ(names("trim_to_zero"), trim);
  EXPECT_EQ(*family->metric_names(make_spec({{"allocator", "cuda_malloc"},
                                             {"measure", "fragmentation"},
                                             {"seed", 1},
                                             {"budget_pct", 50}})),
            replay);
}

TEST(DeviceMemoryFamily, TheCachingAllocatorsReplayReportsItsFailure) {
  const auto family = make_device_memory_family();
  const CaseSpec spec = make_spec(
      {{"allocator", "caching"}, {"measure", "fragmentation"}, {"seed", 1}, {"budget_pct", 80}});
  EXPECT_FALSE(family->case_error(spec).has_value());
  EXPECT_EQ(*family->metric_names(spec),
            (std::vector<std::string>{"allocations_until_oom", "free_at_oom", "reserved_at_oom",
                                      "allocated_at_oom", "reserved_unused_at_oom",
                                      "largest_cached_block"}));
  const auto m = device_memory_metrics(decode_device_memory_request(spec));
  EXPECT_EQ(m[4].better, Better::kLower) << "reserved but unused";
  EXPECT_EQ(m[5].better, Better::kHigher) << "largest cached block";
  EXPECT_EQ(m[5].unit, "bytes");
  // alloc_free through it: a cache hit's cost; it holds the segment the size class gets.
  EXPECT_EQ(family
                ->memory_needs(make_spec(
                    {{"allocator", "caching"}, {"measure", "alloc_free"}, {"bytes", 4096}}))
                .device_bytes,
            2 * kMiB);
  EXPECT_EQ(family
                ->memory_needs(make_spec(
                    {{"allocator", "caching"}, {"measure", "alloc_free"}, {"bytes", 2 * kMiB}}))
                .device_bytes,
            20 * kMiB);
  EXPECT_NE(load_error(R"({"allocator": ["caching"], "measure": ["fragmentation"], "seed": [1],
                          "budget_pct": [80], "release_threshold": ["0"]})")
                .find("allocator caching has no pool"),
            std::string::npos);
}

TEST(DeviceMemoryFamily, TrimToZeroBelongsToTheReplay) {
  const std::string e = load_error(R"({"allocator": ["pool"], "measure": ["alloc_free"],
      "release_threshold": ["trim_to_zero"], "bytes": [4096]})");
  EXPECT_EQ(e.rfind("d.json: /scenarios/0/axes", 0), 0u) << e;
  EXPECT_NE(e.find("trim_to_zero trims the pool after the fragmentation replay's free phase"),
            std::string::npos)
      << e;
  EXPECT_EQ(load_error(R"({"allocator": ["pool"], "measure": ["fragmentation"], "seed": [1],
      "budget_pct": [50], "release_threshold": ["0", "unbounded", "trim_to_zero"]})"),
            "");
  const auto r = decode_device_memory_request(make_spec({{"allocator", "pool"},
                                                         {"measure", "fragmentation"},
                                                         {"release_threshold", "trim_to_zero"},
                                                         {"seed", 1},
                                                         {"budget_pct", 50}}));
  EXPECT_EQ(r.release_threshold, DeviceMemoryRequest::ReleaseThreshold::kTrimToZero);
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
  // alloc_free: cuda_malloc, vmm, caching and the pool twice, x 4 sizes; fragmentation:
  // cuda_malloc, vmm, the pool three times and the caching allocator.
  EXPECT_EQ(ids.size(), 26u);
  EXPECT_NE(std::find(ids.begin(), ids.end(),
                      "device_memory/allocator=pool/measure=fragmentation/"
                      "release_threshold=trim_to_zero/seed=1/budget_pct=80"),
            ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(),
                      "device_memory/allocator=caching/measure=fragmentation/seed=1/budget_pct=80"),
            ids.end());
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

TEST(FragmentationPattern, MarksWhereEachPhaseStarts) {
  const auto p = make_fragmentation_pattern(3, 8 * kGiB, kv_size_mix());
  ASSERT_LT(p.holes_begin, p.larger_begin);
  ASSERT_LT(p.larger_begin, p.events.size());
  for (std::size_t i = 0; i < p.events.size(); ++i) {
    const bool is_free = p.events[i].kind == AllocationEvent::Kind::kFree;
    EXPECT_EQ(is_free, i >= p.holes_begin && i < p.larger_begin) << "event " << i;
  }
  EXPECT_EQ(p.larger_begin - p.holes_begin, p.frees);
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

using Threshold = DeviceMemoryRequest::ReleaseThreshold;

// A pool's steps through one replay: 10 GiB filled, 4 GiB of holes punched, `released` of them
// given back at the synchronisation after, 3 GiB of larger blocks, 1 GiB in the OOM loop, then
// everything freed; `kept_at_end` still reserved after the last synchronisation.
std::vector<PoolStep> steps(std::uint64_t released, std::uint64_t kept_at_end, bool trim) {
  namespace s = pool_step;
  std::vector<PoolStep> out{
      {std::string(s::kFill), true, 10 * kGiB, 10 * kGiB, 20 * kGiB},
      {std::string(s::kHolesFreed), false, 10 * kGiB, 6 * kGiB, 20 * kGiB},
      {std::string(s::kHolesSynced), true, 10 * kGiB - released, 6 * kGiB, 20 * kGiB + released}};
  const std::uint64_t after_holes = trim ? 6 * kGiB + kGiB / 2 : 10 * kGiB - released;
  if (trim) out.push_back({std::string(s::kHolesTrimmed), false, after_holes, 6 * kGiB, 0});
  out.push_back({std::string(s::kLarger), true, after_holes + 3 * kGiB, 9 * kGiB, 0});
  out.push_back({std::string(s::kUntilOom), false, after_holes + 4 * kGiB, 10 * kGiB, 0});
  out.push_back({std::string(s::kAllFreed), false, after_holes + 4 * kGiB, 0, 0});
  out.push_back({std::string(s::kAllSynced), true, kept_at_end, 0, 0});
  if (trim) out.push_back({std::string(s::kAllTrimmed), false, 0, 0, 0});
  return out;
}

TEST(DeviceMemoryPoolSteps, FiguresComeFromTheHolePunchingSynchronisation) {
  const PoolFigures zero = pool_figures(steps(3 * kGiB, 0, false), Threshold::kZero);
  EXPECT_EQ(zero.reserved_after_sync, 7 * kGiB);
  EXPECT_EQ(zero.used_after_sync, 6 * kGiB);
  EXPECT_EQ(zero.released_at_sync, 3 * kGiB);
  EXPECT_EQ(zero.released_by_trim, 0u);
  const PoolFigures trim = pool_figures(steps(0, 14 * kGiB, true), Threshold::kTrimToZero);
  EXPECT_EQ(trim.released_at_sync, 0u);
  EXPECT_EQ(trim.reserved_after_sync, 10 * kGiB);
  EXPECT_EQ(trim.released_by_trim, 10 * kGiB - (6 * kGiB + kGiB / 2));
  // Reserved growing at a synchronisation is no release.
  auto grown = steps(0, 0, false);
  grown[2].reserved = 11 * kGiB;
  EXPECT_EQ(pool_figures(grown, Threshold::kZero).released_at_sync, 0u);
  // A step the figures need, missing: the bench's error, not the device's.
  EXPECT_THROW(pool_figures(steps(0, 0, false), Threshold::kTrimToZero), std::logic_error);
  EXPECT_THROW(pool_figures({}, Threshold::kZero), std::logic_error);
}

TEST(DeviceMemoryPoolSteps, ThresholdZeroMustHoldNothingOnceAllIsFreedAndSynchronised) {
  const Check ok = pool_steps_check(steps(3 * kGiB, 0, false), Threshold::kZero, 10 * kGiB);
  EXPECT_EQ(ok.name, "pool_steps");
  EXPECT_TRUE(ok.passed) << ok.detail;
  EXPECT_NE(ok.detail.find("10 GiB to 7 GiB reserved"), std::string::npos) << ok.detail;
  ASSERT_TRUE(ok.value.is_array());
  ASSERT_EQ(ok.value.size(), 7u);
  EXPECT_EQ(ok.value[2].at("step"), "holes_synchronised");
  EXPECT_EQ(ok.value[2].at("synchronised"), true);
  EXPECT_EQ(ok.value[2].at("reserved").get<std::uint64_t>(), 7 * kGiB);
  EXPECT_EQ(ok.value[2].at("used").get<std::uint64_t>(), 6 * kGiB);
  EXPECT_EQ(ok.value[2].at("driver_free").get<std::uint64_t>(), 23 * kGiB);
  const Check kept = pool_steps_check(steps(3 * kGiB, 2 * kGiB, false), Threshold::kZero, 0);
  EXPECT_FALSE(kept.passed);
  EXPECT_NE(kept.detail.find("all_synchronised: 2 GiB still reserved"), std::string::npos)
      << kept.detail;
  EXPECT_NE(kept.detail.find("not in effect"), std::string::npos) << kept.detail;
}

TEST(DeviceMemoryPoolSteps, UnboundedAndTrimReleaseNothingAtASynchronisation) {
  const std::uint64_t end = 14 * kGiB;
  EXPECT_TRUE(pool_steps_check(steps(0, end, false), Threshold::kUnbounded, 10 * kGiB).passed);
  const Check gave = pool_steps_check(steps(kGiB, 13 * kGiB, false), Threshold::kUnbounded, 0);
  EXPECT_FALSE(gave.passed);
  EXPECT_NE(gave.detail.find("holes_synchronised: 1 GiB released at a synchronisation"),
            std::string::npos)
      << gave.detail;
  const Check trim =
      pool_steps_check(steps(0, 10 * kGiB + kGiB / 2, true), Threshold::kTrimToZero, 10 * kGiB);
  EXPECT_TRUE(trim.passed) << trim.detail;
  auto untrimmed = steps(0, 10 * kGiB + kGiB / 2, true);
  untrimmed.back().reserved = kGiB;
  const Check left = pool_steps_check(untrimmed, Threshold::kTrimToZero, 0);
  EXPECT_FALSE(left.passed);
  EXPECT_NE(left.detail.find("after cudaMemPoolTrimTo(pool, 0)"), std::string::npos) << left.detail;
}

TEST(DeviceMemoryPoolSteps, TheBlocksMustComeFromThePoolAndUsedStayWithinReserved) {
  const Check foreign = pool_steps_check(steps(3 * kGiB, 0, false), Threshold::kZero, 11 * kGiB);
  EXPECT_FALSE(foreign.passed);
  EXPECT_NE(foreign.detail.find("do not come from this pool"), std::string::npos) << foreign.detail;
  auto over = steps(3 * kGiB, 0, false);
  over[4].used = over[4].reserved + 1;
  const Check above = pool_steps_check(over, Threshold::kZero, 0);
  EXPECT_FALSE(above.passed);
  EXPECT_NE(above.detail.find("until_oom: used"), std::string::npos) << above.detail;
}

CachingReplayOutcome caching_outcome() {
  CachingReplayOutcome out;
  out.failed = true;
  out.allocations_until_failure = 3;
  out.failure = {256 * kMiB, 256 * kMiB, 256 * kMiB};
  out.after_replay.reserved = 100 * kGiB;
  out.after_replay.segments = 4000;
  out.free_after_replay = 40 * kGiB;
  out.at_failure.reserved = 120 * kGiB;
  out.at_failure.allocated = 110 * kGiB;
  out.at_failure.largest_free_block = 20 * kMiB;
  out.free_at_failure = 100 * kMiB;
  return out;
}

TEST(DeviceMemoryCachingChecks, TheFailureReadsLikePyTorchs) {
  const auto checks = caching_replay_checks(caching_outcome(), 141 * kGiB, 1 * kGiB);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].name, "segments_resident");
  EXPECT_TRUE(checks[0].passed) << checks[0].detail;  // 101 GiB drop for 100 GiB reserved
  EXPECT_EQ(checks[1].name, "oom_reached");
  EXPECT_TRUE(checks[1].passed);
  const std::string& d = checks[1].detail;
  EXPECT_NE(d.find("after the replay and 3 allocations of 256 MiB"), std::string::npos) << d;
  EXPECT_NE(d.find("the device has 100 MiB free"), std::string::npos) << d;
  EXPECT_NE(d.find("10 GiB reserved but unused (largest cached block 20 MiB)"), std::string::npos)
      << d;
  EXPECT_NE(d.find("would hold the request in total"), std::string::npos) << d;
  const auto& v = checks[1].value;
  EXPECT_EQ(v.at("phase"), "until_oom");
  EXPECT_TRUE(v.at("failed_event").is_null());
  EXPECT_EQ(v.at("reserved_unused").get<std::uint64_t>(), 10 * kGiB);
  EXPECT_EQ(v.at("failed_request").get<std::uint64_t>(), 256 * kMiB);
  EXPECT_EQ(v.at("free_at_oom").get<std::uint64_t>(), 100 * kMiB);
}

TEST(DeviceMemoryCachingChecks, SegmentsMustBeResidentAndTheLoopMustEndInAFailure) {
  auto out = caching_outcome();
  out.free_after_replay = 100 * kGiB;  // the driver's free fell by 41 GiB for 100 GiB reserved
  EXPECT_FALSE(caching_replay_checks(out, 141 * kGiB, 1 * kGiB)[0].passed);
  out.failed_in_replay = true;
  out.failed_event = 77;
  const auto in_replay = caching_replay_checks(out, 141 * kGiB, 1 * kGiB);
  EXPECT_TRUE(in_replay[1].passed);
  EXPECT_NE(in_replay[1].detail.find("at event 77 of the replay"), std::string::npos);
  EXPECT_EQ(in_replay[1].value.at("failed_event").get<std::size_t>(), 77u);
  out.failed = false;
  const auto capped = caching_replay_checks(out, 141 * kGiB, 1 * kGiB);
  EXPECT_FALSE(capped[1].passed);
  EXPECT_NE(capped[1].detail.find("lower bound"), std::string::npos);
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
}  // namespace pathbench::test_device_memory_family
