// The serving family's host-side rules: axes, invalid combinations, the trace axis (read and
// validated at load, errors naming the trace file and line), metrics and memory needs. No GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/serving.hpp"
#include "case_spec.hpp"
#include "core/errors.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "temp_dir.hpp"
#include "test_machines.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_serving_family {
namespace {

namespace fs = std::filesystem;

CaseSpec make_spec(nlohmann::ordered_json params, std::string file = "scenarios/s.json") {
  return testing::scenario_case("serving", std::move(params), std::move(file));
}

std::optional<std::string> error_of(const nlohmann::ordered_json& params,
                                    const std::string& file = "scenarios/s.json") {
  return make_serving_family()->case_error(make_spec(params, file));
}

TEST(ServingFamily, RequiresAStrategyAndARequestSize) {
  const auto family = make_serving_family();
  EXPECT_EQ(family->name(), "serving");
  EXPECT_EQ(family->required_axes(), (std::vector<std::string>{"strategy"}));
  EXPECT_FALSE(error_of({{"strategy", "pageable"}, {"request_bytes", 65536}}).has_value());
  EXPECT_EQ(error_of({{"strategy", "pageable"}}),
            "request_bytes is required (except with arrival trace)");
  EXPECT_EQ(error_of({{"strategy", "pageable"}, {"request_bytes", 65537}}),
            "request_bytes must be a multiple of 4096");
}

TEST(ServingFamily, RefusesAxesThatDoNotApply) {
  const nlohmann::ordered_json base = {{"strategy", "pinned_pool"}, {"request_bytes", 65536}};
  auto with = [&](const char* k, nlohmann::ordered_json v) {
    auto p = base;
    p[k] = std::move(v);
    return error_of(p);
  };
  EXPECT_EQ(with("rate_per_s", 100),
            "rate_per_s and burst_size apply only to arrival poisson or bursts");
  EXPECT_EQ(with("chunk_bytes", 16384), "chunk_bytes applies only to strategy pinned_pool_chunked");
  EXPECT_EQ(with("bulk_bytes", 1 << 20),
            "bulk_bytes and bulk_chunk_bytes apply only with a background");
  EXPECT_EQ(error_of({{"strategy", "pageable"}, {"request_bytes", 65536}, {"pool_slots", 4}}),
            "pool_slots applies only to pinned_pool, pinned_pool_chunked and preallocated_pinned");
  EXPECT_EQ(error_of({{"strategy", "pageable"}, {"request_bytes", 65536}, {"arrival", "poisson"}}),
            "arrival \"poisson\" needs rate_per_s");
  EXPECT_EQ(error_of({{"strategy", "preallocated_pinned"},
                      {"request_bytes", 65536},
                      {"arrival", "poisson"},
                      {"rate_per_s", 1000},
                      {"background", "same_direction"}}),
            "a background needs arrival back_to_back and one submitter");
  EXPECT_EQ(error_of({{"strategy", "preallocated_pinned"},
                      {"request_bytes", 65536},
                      {"background", "same_direction"},
                      {"bulk_bytes", 1 << 20},
                      {"bulk_chunk_bytes", 2 << 20}}),
            "bulk_chunk_bytes must not exceed bulk_bytes");
  EXPECT_EQ(error_of({{"strategy", "pageable"},
                      {"request_bytes", 65536},
                      {"arrival", "bursts"},
                      {"rate_per_s", 1000},
                      {"burst_size", 7},
                      {"requests", 100}}),
            "requests must be a multiple of burst_size");
}

TEST(ServingFamily, PooledStrategiesAddThePoolMetricsAndTheGpuTimelineItsTwo) {
  const auto names = [](bool pooled, bool gpu_timeline) {
    ServingRequest r;
    r.strategy = pooled ? ServingStrategy::kPinnedPool : ServingStrategy::kPageable;
    r.gpu_timeline = gpu_timeline;
    return metric_names_of(serving_metrics(r));
  };
  EXPECT_EQ(names(false, false), (std::vector<std::string>{"h2d_latency", "request_latency",
                                                           "throughput", "copies_issued"}));
  EXPECT_EQ(names(true, false).size(), 8u);
  EXPECT_EQ(names(false, true),
            (std::vector<std::string>{"h2d_latency", "request_latency", "throughput",
                                      "copies_issued", "h2d_gpu_time", "step_gap"}));
  ServingRequest all;
  all.strategy = ServingStrategy::kPinnedPoolChunked;
  all.gpu_timeline = true;
  for (const auto& m : serving_metrics(all)) {
    EXPECT_EQ(m.per_operation, m.name == "h2d_latency" || m.name == "request_latency" ||
                                   m.name == "h2d_gpu_time" || m.name == "step_gap")
        << m.name;
  }
  const auto family = make_serving_family();
  EXPECT_EQ(
      family->per_operation_metric_names(
          make_spec({{"strategy", "pageable"}, {"request_bytes", 65536}, {"gpu_timeline", "on"}})),
      (std::vector<std::string>{"h2d_latency", "request_latency", "h2d_gpu_time", "step_gap"}));
  EXPECT_EQ(error_of({{"strategy", "pageable"}, {"request_bytes", 65536}, {"gpu_timeline", "yes"}})
                .value_or("")
                .find("gpu_timeline"),
            0u);
}

TEST(ServingFamily, AStreamRunsBesideAnyArrivalAndAddsItsThroughput) {
  const nlohmann::ordered_json stream = {{"strategy", "preallocated_pinned"},
                                         {"request_bytes", 65536},
                                         {"arrival", "poisson"},
                                         {"rate_per_s", 1000},
                                         {"submitters", 4},
                                         {"background", "stream"},
                                         {"bulk_bytes", 64 << 20},
                                         {"bulk_chunk_bytes", 2 << 20},
                                         {"stream_slots", 4}};
  EXPECT_EQ(error_of(stream), std::nullopt);
  auto with = [&](const char* k, nlohmann::ordered_json v) {
    auto p = stream;
    p[k] = std::move(v);
    return error_of(p);
  };
  EXPECT_EQ(with("bulk_chunk_bytes", 128 << 20), "bulk_chunk_bytes must not exceed bulk_bytes");
  EXPECT_EQ(with("bulk_chunk_bytes", 5000), "bulk_chunk_bytes must be a multiple of 4096");
  auto bulk = stream;
  bulk.erase("stream_slots");
  bulk["background"] = "same_direction";
  EXPECT_EQ(error_of(bulk), "a background needs arrival back_to_back and one submitter");
  EXPECT_EQ(error_of({{"strategy", "pageable"}, {"request_bytes", 65536}, {"stream_slots", 2}}),
            "stream_slots applies only to background stream");
  EXPECT_EQ(with("stream_slots", 0).value_or("").rfind("stream_slots", 0), 0u);
  ServingRequest r;
  r.background = ServingBackground::kStream;
  const auto names = metric_names_of(serving_metrics(r));
  EXPECT_EQ(names.back(), "stream_throughput");
  // The tensor, its staging slots and its device copy are in the case's memory.
  const auto family = make_serving_family();
  const MemoryNeeds n = family->memory_needs(make_spec(stream));
  EXPECT_GE(n.host_bytes, (std::uint64_t{64} << 20) + (std::uint64_t{8} << 20));
  EXPECT_GE(n.device_bytes, std::uint64_t{64} << 20);
}

TEST(ServingFamily, PoolBucketsAreSizeClassesWithTheirOwnMetrics) {
  EXPECT_EQ(parse_pool_buckets("1MiB:2,16KiB:8,64KiB:4"),
            (std::vector<std::pair<std::uint64_t, int>>{{16384, 8}, {65536, 4}, {1 << 20, 2}}));
  const auto refused = [](const std::string& text) {
    try {
      parse_pool_buckets(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused("64KiB"), "\"64KiB\" is not slot:count (e.g. 64KiB:8)");
  EXPECT_EQ(refused("64KiB:8,"), "\"\" is not slot:count (e.g. 64KiB:8)");
  EXPECT_EQ(refused("lots:8"), "\"lots\" is not a size");
  EXPECT_EQ(refused("64KiB:x"), "\"x\" is not a slot count (1-4096)");
  EXPECT_EQ(refused("64KiB:0"), "slot count 0 must be in [1, 4096]");
  EXPECT_EQ(refused("5000:1"), "slot size 5000 must be a multiple of 4096 up to 1 GiB");
  EXPECT_EQ(refused("64KiB:1,65536:2"), "two buckets of 65536 bytes");

  const nlohmann::ordered_json pooled = {
      {"strategy", "pinned_pool"}, {"request_bytes", 1 << 20}, {"pool_buckets", "64KiB:4,1MiB:2"}};
  EXPECT_EQ(error_of(pooled), std::nullopt);
  auto with = [&](const char* k, nlohmann::ordered_json v) {
    auto p = pooled;
    p[k] = std::move(v);
    return error_of(p);
  };
  EXPECT_EQ(with("pool_buckets", "64KiB"),
            "pool_buckets: \"64KiB\" is not slot:count (e.g. 64KiB:8)");
  EXPECT_EQ(with("pool_slots", 4),
            "pool_buckets replaces pool_slots and chunk_bytes: give one or the other");
  EXPECT_EQ(with("strategy", "pageable"),
            "pool_buckets applies only to pinned_pool and pinned_pool_chunked");
  const auto family = make_serving_family();
  const auto names = *family->metric_names(make_spec(pooled));
  EXPECT_EQ(std::vector<std::string>(names.end() - 6, names.end()),
            (std::vector<std::string>{"pool_b1048576_requests", "pool_b1048576_spills_out",
                                      "pool_b1048576_spills_in", "pool_b1048576_fallbacks",
                                      "pool_b1048576_mean_free", "pool_b1048576_high_water"}));
  EXPECT_EQ(names.size(), 8u + 12u);
  // The pool's pinned bytes are the buckets', not pool_slots × the request size.
  EXPECT_GE(family->memory_needs(make_spec(pooled)).host_bytes, (4u << 16) + (2u << 20));
}

TEST(ServingFamily, CoalescingNeedsTimedArrivalsAndAddsItsWaitAndBatchSize) {
  const nlohmann::ordered_json coalesced = {{"strategy", "coalesced"}, {"request_bytes", 16384},
                                            {"arrival", "poisson"},    {"rate_per_s", 50000},
                                            {"coalesce_us", 25},       {"coalesce_max", 8}};
  EXPECT_EQ(error_of(coalesced), std::nullopt);
  EXPECT_EQ(error_of({{"strategy", "coalesced"}, {"request_bytes", 16384}}),
            "strategy coalesced needs timed arrivals (poisson, bursts or trace): back to back "
            "there is never a second request to pack");
  EXPECT_EQ(error_of({{"strategy", "pinned_pool"}, {"request_bytes", 16384}, {"coalesce_us", 25}}),
            "coalesce_us and coalesce_max apply only to strategy coalesced");
  auto bad = coalesced;
  bad["coalesce_max"] = 1;
  EXPECT_EQ(error_of(bad).value_or("").rfind("coalesce_max", 0), 0u);
  ServingRequest r;
  r.strategy = ServingStrategy::kCoalesced;
  const auto metrics = serving_metrics(r);
  ASSERT_GE(metrics.size(), 2u);
  EXPECT_EQ(metrics[metrics.size() - 2].name, "coalesce_wait");
  EXPECT_TRUE(metrics[metrics.size() - 2].per_operation);
  EXPECT_EQ(metrics.back().name, "batch_size");
  // Two pinned batch buffers per submitter on the host, one on the device.
  const auto family = make_serving_family();
  const MemoryNeeds n = family->memory_needs(make_spec(coalesced));
  EXPECT_GE(n.host_bytes, 2u * 8u * 16384u);
  EXPECT_GE(n.device_bytes, 8u * 16384u);
}

TEST(ServingFamily, MemoryNeedsCoverBuffersPoolAndBulk) {
  const auto family = make_serving_family();
  const MemoryNeeds n = family->memory_needs(make_spec({{"strategy", "preallocated_pinned"},
                                                        {"request_bytes", 1 << 20},
                                                        {"background", "same_direction"},
                                                        {"bulk_bytes", 64 << 20}}));
  // Source and response buffers, 8 ring buffers of 1 MiB, the 64 MiB bulk buffer.
  EXPECT_GE(n.host_bytes, (std::uint64_t{64} << 20) + (std::uint64_t{8} << 20));
  EXPECT_GE(n.device_bytes, (std::uint64_t{64} << 20) + (std::uint64_t{1} << 20));
}

FamilyRegistry serving_registry() {
  FamilyRegistry r;
  r.add(make_serving_family());
  return r;
}

// Parses, expands and validates a one-scenario file as `pathbench run` does.
void load_and_validate(const std::string& gate) {
  const FamilyRegistry families = serving_registry();
  const std::string text =
      R"({"schema": "pathbench.scenario/v1", "scenarios": [{"name": "s", "family": "serving",
          "gate": )" +
      gate + R"(, "axes": {"strategy": ["pinned_pool"], "request_bytes": [65536]}}]})";
  const auto file = parse_scenario_file("g.json", text, families, {0});
  for (const auto& sc : file.scenarios) {
    validate_cases(sc, expand(sc), *families.find("serving"), testing::h200_machine(), 0);
  }
}

TEST(ServingFamily, APercentileGateNeedsAPerOperationMetric) {
  EXPECT_NO_THROW(load_and_validate(R"({"metrics": {"h2d_latency": {"statistic": "p99"}}})"));
  EXPECT_NO_THROW(load_and_validate(R"({"metrics": {"throughput": {"statistic": "median"}}})"));
  try {
    load_and_validate(R"({"metrics": {"throughput": {"statistic": "p99", "threshold_pct": 5}}})");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "g.json: /scenarios/0/gate/metrics/throughput/statistic: \"p99\" of metric "
              "\"throughput\": only a metric timed operation by operation has percentiles (here: "
              "h2d_latency, request_latency); gate its median instead");
  }
}

TEST(ServingFamily, TheShippedScenarioFileValidates) {
  const FamilyRegistry families = serving_registry();
  const auto file = load_scenario_file(
      std::string(PATHBENCH_SOURCE_DIR) + "/scenarios/serving.json", families, {0});
  std::size_t cases = 0;
  for (const auto& sc : file.scenarios) {
    const auto expanded = expand(sc);
    EXPECT_NO_THROW(
        validate_cases(sc, expanded, *families.find("serving"), testing::h200_machine(), 0))
        << sc.name;
    cases += expanded.size();
  }
  EXPECT_EQ(cases, 56u);
}

class ServingTrace : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_ / "traces"); }
  std::string scenario() const { return (dir_ / "s.json").string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / "traces" / name) << text;
  }
  testing::TempDir tmp_{"pathbench_serving"};
  const fs::path dir_ = tmp_.path();
};

TEST_F(ServingTrace, ATraceRelativeToTheScenarioFileGivesTheRequests) {
  write("t.jsonl",
        "# two requests\n"
        "{\"time_s\": 0.001, \"h2d_bytes\": 65536, \"d2h_bytes\": 100, \"kernel_us\": 5}\n"
        "{\"time_s\": 0.002, \"h2d_bytes\": 12, \"d2h_bytes\": 0, \"kernel_us\": 0.5}\n");
  const nlohmann::ordered_json p = {
      {"strategy", "pinned_pool"}, {"arrival", "trace"}, {"trace", "traces/t.jsonl"}};
  EXPECT_FALSE(error_of(p, scenario()).has_value());
  const MemoryNeeds n = make_serving_family()->memory_needs(make_spec(p, scenario()));
  EXPECT_GE(n.device_bytes, 65536u + 100u);
}

TEST_F(ServingTrace, AFamilyReadsEachTraceFileOnce) {
  write("once.jsonl",
        "{\"time_s\": 0, \"h2d_bytes\": 4096, \"d2h_bytes\": 0, \"kernel_us\": 1}\n"
        "{\"time_s\": 1, \"h2d_bytes\": 8192, \"d2h_bytes\": 0, \"kernel_us\": 1}\n");
  const auto family = make_serving_family();
  const CaseSpec spec = make_spec(
      {{"strategy", "pageable"}, {"arrival", "trace"}, {"trace", "traces/once.jsonl"}}, scenario());
  EXPECT_FALSE(family->case_error(spec).has_value());
  // Gone from disk: the family's later questions about the case use what it read at validation.
  fs::remove(dir_ / "traces" / "once.jsonl");
  EXPECT_GE(family->memory_needs(spec).device_bytes, 8192u);
  EXPECT_EQ(family->metric_names(spec)->size(), 4u);
  // Another family object reads the file itself.
  EXPECT_THROW(make_serving_family()->case_error(spec), InputError);
}

TEST_F(ServingTrace, ABadLineIsAnInputErrorNamingTheTraceAndTheLine) {
  write("bad.jsonl",
        "{\"time_s\": 0.001, \"h2d_bytes\": 4096, \"d2h_bytes\": 0, \"kernel_us\": 5}\n"
        "{\"time_s\": 0.0005, \"h2d_bytes\": 4096, \"d2h_bytes\": 0, \"kernel_us\": 5}\n");
  try {
    error_of({{"strategy", "pageable"}, {"arrival", "trace"}, {"trace", "traces/bad.jsonl"}},
             scenario());
    FAIL() << "accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((dir_ / "traces" / "bad.jsonl").string()), std::string::npos) << what;
    EXPECT_NE(what.find("line 2/time_s"), std::string::npos) << what;
  }
}

TEST_F(ServingTrace, AMissingTraceIsAnInputError) {
  EXPECT_THROW(error_of({{"strategy", "pageable"}, {"arrival", "trace"}, {"trace", "none.jsonl"}},
                        scenario()),
               InputError);
}

TEST_F(ServingTrace, TheTraceAxisGoesWithArrivalTraceOnly) {
  write("t.jsonl", "{\"time_s\": 0, \"h2d_bytes\": 8, \"d2h_bytes\": 0, \"kernel_us\": 0}\n");
  EXPECT_EQ(error_of({{"strategy", "pageable"}, {"arrival", "trace"}}, scenario()),
            "arrival trace needs the trace axis (a JSON Lines file)");
  EXPECT_EQ(error_of({{"strategy", "pageable"}, {"request_bytes", 4096}, {"trace", "t.jsonl"}},
                     scenario()),
            "the trace axis applies only to arrival trace");
  EXPECT_EQ(error_of({{"strategy", "pageable"},
                      {"arrival", "trace"},
                      {"trace", "traces/t.jsonl"},
                      {"request_bytes", 4096}},
                     scenario()),
            "request_bytes comes from the trace file with arrival trace");
}

}  // namespace
}  // namespace pathbench::test_serving_family
