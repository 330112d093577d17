// CUPTI's unified-memory counts, summed from a timeline and judged against what the work must
// have migrated (timeline/unified_memory_counters.hpp, measure/migration_evidence.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "measure/migration_evidence.hpp"
#include "timeline/timeline.hpp"
#include "timeline/unified_memory_counters.hpp"

namespace pathbench::test_migration_evidence {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

TimelineRecord um_record(const std::string& name, std::uint64_t value) {
  TimelineRecord r;
  r.kind = ActivityKind::kUnifiedMemory;
  r.name = name;
  r.value = value;
  r.start_ns = 100;
  r.end_ns = 200;
  return r;
}

TEST(UnifiedMemoryCounters, SumsTheTimelinesRecords) {
  Timeline t;
  t.records = {um_record("gpu_page_fault_groups", 3),
               um_record("gpu_page_fault_groups", 4),
               um_record("bytes_transfer_htod", 2 * kMiB),
               um_record("bytes_transfer_dtoh", kMiB),
               um_record("cpu_page_fault_count", 1),
               um_record("cpu_page_fault_count", 1),
               um_record("thrashing", 9)};
  TimelineRecord kernel;
  kernel.kind = ActivityKind::kKernel;
  kernel.name = "cpu_page_fault_count";  // only unified-memory records count
  kernel.value = 5;
  t.records.push_back(kernel);
  t.dropped_records = 2;
  const UnifiedMemoryCounts c = unified_memory_counts(t);
  EXPECT_EQ(c.gpu_fault_groups, 7u);
  EXPECT_EQ(c.bytes_h2d, 2 * kMiB);
  EXPECT_EQ(c.bytes_d2h, kMiB);
  EXPECT_EQ(c.cpu_faults, 2u);
  EXPECT_EQ(c.lost_records, 2u);
  EXPECT_EQ(unified_memory_counts(Timeline{}).gpu_fault_groups, 0u);
}

TEST(UnifiedMemoryCounters, SumsBytesMovedBetweenGpus) {
  Timeline t;
  t.records = {um_record("bytes_transfer_dtod", 2 * kMiB), um_record("bytes_transfer_dtod", kMiB),
               um_record("CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD", kMiB),
               um_record("bytes_transfer_htod", 8 * kMiB), um_record("gpu_page_fault_groups", 5)};
  const UnifiedMemoryCounts c = unified_memory_counts(t);
  EXPECT_EQ(c.bytes_d2d, 4 * kMiB);
  EXPECT_EQ(c.bytes_h2d, 8 * kMiB);  // each direction on its own
  EXPECT_EQ(c.bytes_d2h, 0u);
  EXPECT_EQ(c.gpu_fault_groups, 5u);
  EXPECT_EQ(analyze_timeline(t).unified_memory_bytes_d2d, 4 * kMiB);
}

MigrationExpectation touch_to_gpu() {
  return {.to_host = false,
          .least_bytes = 4 * kMiB,
          .least_what = "the touched pages",
          .must_migrate = true,
          .by_faults = true};
}

CountedSample sample(double seconds, std::uint64_t groups, std::uint64_t h2d) {
  UnifiedMemoryCounts c;
  c.gpu_fault_groups = groups;
  c.bytes_h2d = h2d;
  return {seconds, c};
}

TEST(MigrationEvidence, GapsNameWhatContradictsTheExpectation) {
  const auto e = touch_to_gpu();
  EXPECT_TRUE(migration_gaps(e, sample(1, 2, 4 * kMiB).counts.value()).empty());
  const auto short_count = migration_gaps(e, sample(1, 2, kMiB).counts.value());
  ASSERT_EQ(short_count.size(), 1u);
  EXPECT_NE(short_count[0].find("less than the 4 MiB of the touched pages"), std::string::npos)
      << short_count[0];
  const auto no_group = migration_gaps(e, sample(1, 0, 8 * kMiB).counts.value());
  ASSERT_EQ(no_group.size(), 1u);
  EXPECT_NE(no_group[0].find("no GPU page-fault group"), std::string::npos) << no_group[0];
  // Work that may map instead of migrating: fewer bytes are no contradiction.
  auto mapped = e;
  mapped.must_migrate = false;
  mapped.by_faults = false;
  EXPECT_TRUE(migration_gaps(mapped, UnifiedMemoryCounts{}).empty());
  // Back to the host: the D2H bytes and the CPU faults count, not the H2D ones.
  auto back = e;
  back.to_host = true;
  UnifiedMemoryCounts c;
  c.bytes_h2d = 8 * kMiB;
  c.bytes_d2h = 8 * kMiB;
  const auto no_cpu_fault = migration_gaps(back, c);
  ASSERT_EQ(no_cpu_fault.size(), 1u);
  EXPECT_NE(no_cpu_fault[0].find("back to the host by work that only faults, but no CPU page "
                                 "fault"),
            std::string::npos)
      << no_cpu_fault[0];
  EXPECT_EQ(migrated_bytes(back, c), 8 * kMiB);
  c.bytes_d2h = 0;
  EXPECT_EQ(migrated_bytes(back, c), 4 * kMiB);
  // Between GPUs: only device-to-device bytes count, whatever went to or from the host.
  auto across = e;
  across.between_gpus = true;
  c.bytes_d2d = 2 * kMiB;
  c.gpu_fault_groups = 3;
  const auto short_d2d = migration_gaps(across, c);
  ASSERT_EQ(short_d2d.size(), 1u);
  EXPECT_EQ(short_d2d[0],
            "CUPTI counted 2 MiB migrated from one GPU to the other, less than the 4 MiB of the "
            "touched pages");
  EXPECT_EQ(migrated_bytes(across, c), 4 * kMiB);
  c.bytes_d2d = 6 * kMiB;
  EXPECT_TRUE(migration_gaps(across, c).empty());
  EXPECT_EQ(migrated_bytes(across, c), 6 * kMiB);
}

TEST(MigrationEvidence, CounterCheckKeepsEverySamplesCounts) {
  const auto e = touch_to_gpu();
  // A complete sample (10 groups in 2 ms), one that counted too few bytes, one without counters.
  const std::vector<CountedSample> samples = {sample(2e-3, 10, 4 * kMiB), sample(1e-3, 5, kMiB),
                                              CountedSample{1e-3, std::nullopt}};
  const Check c = unified_memory_counter_check(e, samples, "CUPTI went away");
  EXPECT_EQ(c.name, "um_counters");
  EXPECT_TRUE(c.passed);
  EXPECT_EQ(c.value["gpu_fault_groups"], nlohmann::ordered_json({10, 5}));
  EXPECT_EQ(c.value["bytes_h2d"], nlohmann::ordered_json({4 * kMiB, kMiB}));
  EXPECT_DOUBLE_EQ(c.value["time_per_fault_group_s"][0].get<double>(), 2e-4);
  EXPECT_TRUE(c.value["time_per_fault_group_s"][1].is_null());  // it lost records
  EXPECT_EQ(c.value["complete"], false);
  for (const char* part :
       {"median time per fault group 200", "1 sample(s) counted fewer bytes",
        "1 sample(s) without counters: CUPTI went away", "INCOMPLETE in 1 of 2 samples"}) {
    EXPECT_NE(c.detail.find(part), std::string::npos) << part << " in: " << c.detail;
  }
  const Check none = unified_memory_counter_check(e, {}, "");
  EXPECT_TRUE(none.passed);
  EXPECT_TRUE(none.value.is_null());
  EXPECT_NE(none.detail.find("no sample was measured"), std::string::npos) << none.detail;
  EXPECT_NE(none.detail.find("the lower bound 4 MiB (the touched pages)"), std::string::npos)
      << none.detail;
}

}  // namespace
}  // namespace pathbench::test_migration_evidence
