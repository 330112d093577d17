// GPU tests of the storage family, through the CLI's case runner: every method on a small file,
// cold and warm (cold only for odirect_pinned), odirect_pinned at queue depths 4 and 16 and with
// registered staging slots of each page type, in the default storage folder (./.pathbench-storage
// of the test's working directory). Label `gpu`; they skip without a device, and a cufile case may
// skip (no GDS), but only with the GDS status as its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bench/storage.hpp"
#include "inventory/inventory.hpp"
#include "measure/family.hpp"
#include "runner_case.hpp"
#include "scenario/expansion.hpp"
#include "test_gpu_common.hpp"

namespace pathbench::test_storage_gpu {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

CaseSpec storage_case(const std::string& method, const std::string& cache, std::int64_t bytes) {
  return gpu_test_case("storage", {{"method", method}, {"bytes", bytes}, {"cache", cache}});
}

CaseSpec queued_case(std::int64_t bytes, std::int64_t chunk, std::int64_t queue_depth) {
  return gpu_test_case("storage", {{"method", "odirect_pinned"},
                                   {"bytes", bytes},
                                   {"cache", "cold"},
                                   {"chunk", chunk},
                                   {"queue_depth", queue_depth}});
}

// The test files pathbench left in the folder: the one kept for the next case, none once the run
// lets it go.
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

// `keep`: the test file stays for the next case, as in a run; else it is let go after the case,
// and nothing may be left of it.
Outcome run(const CaseSpec& spec, bool keep = false) {
  const std::string method = spec.str("method");
  const auto family = make_storage_family();
  const Machine machine = machine_from(collect_inventory({}));
  if (auto why = family->skip_reason(spec, machine, 0)) {
    std::cout << "note: " << spec.id << " skipped: " << *why << "\n";
    return {{}, true};  // a tmpfs working directory or a full disk: said, not measured
  }
  const std::string dir = storage_dir(machine);
  const std::size_t before = leftover_files(dir);
  Outcome o{run_case(*family, spec, machine, 3), false};
  if (!keep) {
    storage_test_files().release();
    EXPECT_EQ(leftover_files(dir), before) << "the test file outlived its release";
  }
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
  // The measuring thread (and the reader threads it starts) on the GPU's node, where the
  // staging memory is allocated; passed above, so it ran where it was bound.
  const Check* thread = m.check("thread_placement");
  ASSERT_NE(thread, nullptr);
  std::cout << "note: " << thread->detail << "\n";
  const Check* loc = m.check("storage_location");
  ASSERT_NE(loc, nullptr);
  EXPECT_TRUE(loc->value.contains("block_device")) << loc->detail;
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
  const Outcome o = run(storage_case(method, cache, 64 * kMiB));
  if (o.skipped) GTEST_SKIP() << "skipped with its reason (printed above)";
  expect_measured_and_verified(o.m, cache);
  if (method == "cufile") {
    const Check* gds = o.m.check("gds_status");
    ASSERT_NE(gds, nullptr);
    std::cout << "note: " << gds->detail << "\n";
  }
  if (method == "odirect_pinned") {
    const Check* direct = o.m.check("direct_io");
    ASSERT_NE(direct, nullptr);
    EXPECT_EQ(direct->value.at("queue_depth"), 1u);
    EXPECT_EQ(direct->value.at("reader_threads"), 1u);  // depth 1: one reader thread
    EXPECT_FALSE(direct->value.contains("submits")) << "no io_submit without AIO";
    EXPECT_GT(direct->value.at("mean_handover_seconds").get<double>(), 0.0);
    EXPECT_LE(direct->value.at("max_reads_in_pread").get<std::uint64_t>(), 1u);
  }
}

// Every method and cache but a warm odirect_pinned (an invalid combination: O_DIRECT bypasses
// the page cache).
INSTANTIATE_TEST_SUITE_P(
    MethodsAndCaches, StorageGpu,
    ::testing::Values(std::tuple<std::string, std::string>{"pageable_read", "cold"},
                      std::tuple<std::string, std::string>{"pageable_read", "warm"},
                      std::tuple<std::string, std::string>{"odirect_pinned", "cold"},
                      std::tuple<std::string, std::string>{"mmap", "cold"},
                      std::tuple<std::string, std::string>{"mmap", "warm"},
                      std::tuple<std::string, std::string>{"cufile", "cold"},
                      std::tuple<std::string, std::string>{"cufile", "warm"}),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

// The direct_io check's physical layout of the slots: null where pagemap hides frame numbers
// (not CAP_SYS_ADMIN), else 1 <= min <= median <= max <= the slot's pages, and `max_runs` where
// the memory guarantees it (a 1 MiB slot inside one 2 MiB hugetlb page is one run).
void expect_slot_runs(const Check& direct, std::uint64_t slot_pages,
                      std::optional<std::uint64_t> max_runs = std::nullopt) {
  const auto& v = direct.value;
  ASSERT_TRUE(v.contains("slot_page_runs_min") && v.contains("slot_page_runs_median") &&
              v.contains("slot_page_runs_max"));
  if (v.at("slot_page_runs_min").is_null()) {
    EXPECT_TRUE(v.at("slot_page_runs_max").is_null());
    EXPECT_NE(direct.detail.find("physical layout is unknown"), std::string::npos) << direct.detail;
    std::cout << "note: the slots' frame numbers are hidden from this process\n";
    return;
  }
  const auto lo = v.at("slot_page_runs_min").get<std::uint64_t>();
  const auto mid = v.at("slot_page_runs_median").get<std::uint64_t>();
  const auto hi = v.at("slot_page_runs_max").get<std::uint64_t>();
  EXPECT_GE(lo, 1u);
  EXPECT_LE(lo, mid);
  EXPECT_LE(mid, hi);
  EXPECT_LE(hi, slot_pages);
  if (max_runs) {
    EXPECT_LE(hi, *max_runs) << direct.detail;
  }
  EXPECT_NE(direct.detail.find(" of physically contiguous memory per slot"), std::string::npos)
      << direct.detail;
}

// Several reads in flight, each chunk copied from its slot as it arrives (in any order): the
// destination is still exact, with a ragged end, and the direct_io check says how deep the queue
// went. 1 MiB reads at depth 4 and 16 of a file of 40 chunks and a piece.
TEST(StorageGpuQueueDepth, ReadsInFlightReassembleTheFileInGpuMemory) {
  PATHBENCH_REQUIRE_GPU();
  for (const std::int64_t depth : {4, 16}) {
    const Outcome o = run(queued_case(40 * kMiB + 12345, kMiB, depth));
    if (o.skipped) GTEST_SKIP() << "skipped with its reason (printed above)";
    expect_measured_and_verified(o.m, "cold");
    const Check* direct = o.m.check("direct_io");
    ASSERT_NE(direct, nullptr);
    std::cout << "note: " << direct->detail << "\n";
    EXPECT_EQ(direct->value.at("queue_depth"), static_cast<std::uint64_t>(depth));
    EXPECT_EQ(direct->value.at("reader_threads"), static_cast<std::uint64_t>(depth));
    // In pread, queued ahead and spare: 3 x depth, never more than the file's 41 chunks.
    EXPECT_EQ(direct->value.at("slots"), std::min<std::uint64_t>(3 * depth, 41));
    // Reads queued ahead of the threads into every free slot, never more than the slots.
    EXPECT_GE(direct->value.at("max_reads_queued").get<std::uint64_t>(),
              static_cast<std::uint64_t>(depth));
    EXPECT_LE(direct->value.at("max_reads_queued").get<std::uint64_t>(),
              2 * static_cast<std::uint64_t>(depth));
    // A spare slot per read: the queue was refilled before every hand-over.
    EXPECT_GE(direct->value.at("min_reads_queued_at_handover").get<std::uint64_t>(),
              static_cast<std::uint64_t>(depth));
    EXPECT_GE(direct->value.at("max_reads_in_pread").get<std::uint64_t>(), 1u);
    EXPECT_LE(direct->value.at("max_reads_in_pread").get<std::uint64_t>(),
              static_cast<std::uint64_t>(depth));
    // Warm-up and probe blocks read the file too: at least one file per sample.
    EXPECT_GE(direct->value.at("chunks_read").get<std::uint64_t>(), 41u * 3);
    expect_slot_runs(*direct,
                     static_cast<std::uint64_t>(kMiB / 4096));  // cudaHostAlloc'd: any layout
  }
}

// Native AIO keeps the queue from the measuring thread: no reader threads, the same queue and
// hand-overs, the file exact in GPU memory, at depths 1 and 16.
TEST(StorageGpuReader, AioReadsReassembleTheFileWithoutReaderThreads) {
  PATHBENCH_REQUIRE_GPU();
  for (const std::int64_t depth : {1, 16}) {
    CaseSpec spec = gpu_test_case("storage", {{"method", "odirect_pinned"},
                                              {"bytes", 40 * kMiB + 12345},
                                              {"cache", "cold"},
                                              {"chunk", kMiB},
                                              {"queue_depth", depth},
                                              {"reader", "aio"}});
    const Outcome o = run(spec);
    if (o.skipped) GTEST_SKIP() << "skipped with its reason (printed above)";
    expect_measured_and_verified(o.m, "cold");
    const Check* direct = o.m.check("direct_io");
    ASSERT_NE(direct, nullptr);
    std::cout << "note: " << direct->detail << "\n";
    std::cout << "note: " << o.m.result.id << " throughput " << o.m.median("throughput")
              << " GB/s\n";
    EXPECT_EQ(direct->value.at("reader"), "aio");
    EXPECT_EQ(direct->value.at("reader_threads"), 0u);
    EXPECT_EQ(direct->value.at("max_reads_queued"), static_cast<std::uint64_t>(depth));
    EXPECT_EQ(direct->value.at("min_reads_queued_at_handover"), static_cast<std::uint64_t>(depth));
    EXPECT_LE(direct->value.at("max_reads_in_pread").get<std::uint64_t>(),
              static_cast<std::uint64_t>(depth));
    EXPECT_GE(direct->value.at("chunks_read").get<std::uint64_t>(), 41u * 3);
    // Every read was one timed io_submit; queueing the copies took some time too.
    EXPECT_EQ(direct->value.at("submits"), direct->value.at("chunks_read"));
    EXPECT_GT(direct->value.at("mean_submit_seconds").get<double>(), 0.0);
    EXPECT_GE(direct->value.at("max_submit_seconds").get<double>(),
              direct->value.at("mean_submit_seconds").get<double>());
    EXPECT_GT(direct->value.at("mean_handover_seconds").get<double>(), 0.0);
    EXPECT_NE(direct->detail.find("io_submit took "), std::string::npos) << direct->detail;
  }
}

// The staging slots in one registered region of 4 KiB, THP or hugetlb pages: read into at depth
// 4, the file still arrives exact, CUDA sees the region as host memory and the region is backed by
// the pages asked for (huge_backing). registered-hugetlb skips without reserved pages.
TEST(StorageGpuStagingMemory, RegisteredSlotsOfEveryPageTypeCarryTheFile) {
  PATHBENCH_REQUIRE_GPU();
  for (const char* staging : {"registered-4k", "registered-thp", "registered-hugetlb"}) {
    CaseSpec spec = gpu_test_case("storage", {{"method", "odirect_pinned"},
                                              {"bytes", 40 * kMiB + 12345},
                                              {"cache", "cold"},
                                              {"chunk", kMiB},
                                              {"queue_depth", 4},
                                              {"staging_memory", staging}});
    const Outcome o = run(spec);
    if (o.skipped) continue;  // its reason printed
    expect_measured_and_verified(o.m, "cold");
    const Check* kind = o.m.check("host_memory_kind");
    ASSERT_NE(kind, nullptr) << staging;
    std::cout << "note: " << staging << ": " << kind->detail << "\n";
    const Check* backing = o.m.check("huge_backing");
    ASSERT_NE(backing, nullptr) << staging;
    std::cout << "note: " << staging << ": " << backing->detail << "\n";
    const Check* direct = o.m.check("direct_io");
    ASSERT_NE(direct, nullptr);
    EXPECT_EQ(direct->value.at("slots"), 12u) << staging;  // 3 x queue depth 4 (threads)
    std::cout << "note: " << staging << ": " << direct->detail << "\n";
    const bool hugetlb = std::string(staging) == "registered-hugetlb";
    expect_slot_runs(*direct, static_cast<std::uint64_t>(kMiB / 4096),
                     hugetlb ? std::optional<std::uint64_t>(1) : std::nullopt);
  }
}

// A size that is no multiple of the block: the last O_DIRECT read is rounded up and cut short at
// end of file, the last pageable read is short; the destination must still be exact.
TEST(StorageGpuRagged, AFileOfRaggedSizeIsReadExactly) {
  PATHBENCH_REQUIRE_GPU();
  for (const char* method : {"odirect_pinned", "pageable_read", "cufile"}) {
    const Outcome o = run(storage_case(method, "cold", 20 * kMiB + 12345));
    if (o.skipped) continue;
    expect_measured_and_verified(o.m, "cold");
  }
}

// A run's cases of one size read the file the first of them wrote (the same extents, one write),
// a case of another size replaces it, and letting it go leaves nothing.
TEST(StorageGpuTestFile, CasesOfOneSizeReadTheFileTheFirstWrote) {
  PATHBENCH_REQUIRE_GPU();
  storage_test_files().release();
  const std::string dir = storage_dir(machine_from(collect_inventory({})));
  const std::size_t before = leftover_files(dir);
  const Outcome first = run(queued_case(64 * kMiB, kMiB, 4), true);
  if (first.skipped) GTEST_SKIP() << "skipped with its reason (printed above)";
  const Outcome second = run(storage_case("pageable_read", "cold", 64 * kMiB), true);
  const Outcome other = run(storage_case("mmap", "cold", 32 * kMiB), true);
  ASSERT_FALSE(second.skipped || other.skipped);
  expect_measured_and_verified(first.m, "cold");
  expect_measured_and_verified(second.m, "cold");
  expect_measured_and_verified(other.m, "cold");
  const auto file_of = [](const Outcome& o) {
    const Check* loc = o.m.check("storage_location");
    EXPECT_NE(loc, nullptr);
    return loc ? std::make_pair(loc->value.at("file").get<std::string>(),
                                loc->value.at("file_written_for_this_case").get<bool>())
               : std::make_pair(std::string(), false);
  };
  const auto [first_file, first_wrote] = file_of(first);
  const auto [second_file, second_wrote] = file_of(second);
  const auto [other_file, other_wrote] = file_of(other);
  EXPECT_TRUE(first_wrote);
  EXPECT_FALSE(second_wrote);
  EXPECT_EQ(second_file, first_file);
  EXPECT_TRUE(other_wrote);
  EXPECT_FALSE(std::filesystem::exists(first_file)) << "replaced, not kept beside the new one";
  EXPECT_EQ(leftover_files(dir), before + 1);
  storage_test_files().release();
  EXPECT_EQ(leftover_files(dir), before);
}

}  // namespace
}  // namespace pathbench::test_storage_gpu
