// GPU tests of the storage family, through the CLI's case runner: every method on a small file,
// cold and warm, in the default storage folder (./.pathbench-storage of the test's working
// directory). Label `gpu`; they skip without a device, and a cufile case may skip (no GDS), but
// only with the GDS status as its reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "bench/storage.hpp"
#include "inventory/inventory.hpp"
#include "measure/family.hpp"
#include "runner_case.hpp"
#include "scenario/expansion.hpp"
#include "test_gpu_common.hpp"

namespace pathbench {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

CaseSpec storage_case(const std::string& method, const std::string& cache, std::int64_t bytes) {
  return gpu_test_case("storage", {{"method", method}, {"bytes", bytes}, {"cache", cache}});
}

// The test files pathbench left in the folder (none may outlive its case).
std::size_t leftover_files(const std::string& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    n += e.path().filename().string().rfind("pathbench-storage.", 0) == 0 ? 1 : 0;
  }
  return n;
}

struct Outcome {
  MeasuredCase m;
  bool skipped = false;
};

Outcome run(const std::string& method, const std::string& cache, std::int64_t bytes) {
  const auto family = make_storage_family();
  const Machine machine = machine_from(collect_inventory({}));
  const CaseSpec spec = storage_case(method, cache, bytes);
  if (auto why = family->skip_reason(spec, machine, 0)) {
    std::cout << "note: " << spec.id << " skipped: " << *why << "\n";
    return {{}, true};  // a tmpfs working directory or a full disk: said, not measured
  }
  const std::string dir = storage_dir(machine);
  const std::size_t before = leftover_files(dir);
  Outcome o{run_case(*family, spec, machine, 3), false};
  EXPECT_EQ(leftover_files(dir), before) << "the test file outlived its case";
  if (!o.m.skipped.empty()) {
    o.skipped = true;
    std::cout << "note: " << spec.id << " skipped: " << o.m.skipped << "\n";
    if (method == "cufile") {
      EXPECT_NE(o.m.skipped.find("cuFile"), std::string::npos) << o.m.skipped;
      EXPECT_NE(o.m.skipped.find("nvidia-fs"), std::string::npos) << "the GDS status";
    } else {
      EXPECT_NE(o.m.skipped.find("O_DIRECT"), std::string::npos)
          << "only a file system without direct I/O may skip here: " << o.m.skipped;
    }
  }
  return o;
}

void expect_measured_and_verified(const MeasuredCase& m, const std::string& cache) {
  EXPECT_EQ(m.method, timing_name(TimingMethod::kHostSteadyClock));
  ASSERT_EQ(m.samples.size(), 3u);
  ASSERT_EQ(m.metrics.size(), 2u);
  EXPECT_EQ(m.metrics[0].name, "throughput");
  EXPECT_EQ(m.metrics[1].name, "time");
  for (const auto& s : m.samples) {
    EXPECT_GT(s[0], 0.0);
    EXPECT_GT(s[1], 0.0);
  }
  EXPECT_EQ(m.operations_per_sample, 1u);  // one sample = the whole file
  for (const auto& c : m.checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
  const Check* pattern = m.check("copy_pattern");
  ASSERT_NE(pattern, nullptr);
  EXPECT_TRUE(pattern->passed) << pattern->detail;
  const Check* cache_check = m.check("page_cache");
  ASSERT_NE(cache_check, nullptr);
  EXPECT_TRUE(cache_check->passed) << cache_check->detail;
  ASSERT_TRUE(cache_check->value.is_array());
  for (const auto& f : cache_check->value) {
    if (cache == "cold") {
      EXPECT_LE(f.get<double>(), kColdMaxResident) << cache_check->detail;
    } else {
      EXPECT_GE(f.get<double>(), kWarmMinResident) << cache_check->detail;
    }
  }
  const Check* loc = m.check("storage_location");
  ASSERT_NE(loc, nullptr);
  std::cout << "note: " << loc->detail << "\n";
  const Check* timing = m.check("timing");
  ASSERT_NE(timing, nullptr);
  EXPECT_NE(timing->detail.find("final stream synchronisation"), std::string::npos)
      << timing->detail;
  std::cout << "note: " << m.result.id << " throughput " << m.median("throughput") << " GB/s\n";
}

class StorageGpu : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(StorageGpu, ASmallFileReachesTheGpuVerified) {
  PATHBENCH_REQUIRE_GPU();
  const auto& [method, cache] = GetParam();
  const Outcome o = run(method, cache, 64 * kMiB);
  if (o.skipped) GTEST_SKIP() << "skipped with its reason (printed above)";
  expect_measured_and_verified(o.m, cache);
  if (method == "cufile") {
    const Check* gds = o.m.check("gds_status");
    ASSERT_NE(gds, nullptr);
    std::cout << "note: " << gds->detail << "\n";
  }
  if (method == "odirect_pinned") {
    EXPECT_NE(o.m.check("direct_io"), nullptr);
  }
}

INSTANTIATE_TEST_SUITE_P(
    MethodsAndCaches, StorageGpu,
    ::testing::Combine(::testing::Values("pageable_read", "odirect_pinned", "mmap", "cufile"),
                       ::testing::Values("cold", "warm")),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

// A size that is no multiple of the block: the last O_DIRECT read is rounded up and cut short at
// end of file, the last pageable read is short; the destination must still be exact.
TEST(StorageGpuRagged, AFileOfRaggedSizeIsReadExactly) {
  PATHBENCH_REQUIRE_GPU();
  for (const char* method : {"odirect_pinned", "pageable_read", "cufile"}) {
    const Outcome o = run(method, "cold", 20 * kMiB + 12345);
    if (o.skipped) continue;
    expect_measured_and_verified(o.m, "cold");
  }
}

}  // namespace
}  // namespace pathbench
