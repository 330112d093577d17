// The storage family's host-side rules: axes, defaults, bad combinations (exit 3 at load:
// queue_depth beyond odirect_pinned or the file's chunks, a warm O_DIRECT read), memory needs
// (the staging slots of the queue), skip reasons (no GPU, a memory-backed folder, too little
// space), the page-cache and location checks, and the shipped scenario's cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "bench/families.hpp"
#include "bench/storage.hpp"
#include "case_spec.hpp"
#include "core/errors.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "temp_dir.hpp"
#include "test_machines.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_storage_family {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
constexpr std::int64_t kGiB = 1024 * kMiB;

CaseSpec make_spec(nlohmann::ordered_json params) {
  return testing::scenario_case("storage", std::move(params), "test.json", 3);
}

CaseSpec storage_case(const std::string& method, std::int64_t bytes, const std::string& cache) {
  return make_spec({{"method", method}, {"bytes", bytes}, {"cache", cache}});
}

CaseSpec chunked(const std::string& method, std::int64_t bytes, std::int64_t chunk) {
  return make_spec({{"method", method}, {"bytes", bytes}, {"cache", "cold"}, {"chunk", chunk}});
}

CaseSpec queued(const std::string& method, std::int64_t bytes, std::int64_t chunk,
                std::int64_t queue_depth) {
  return make_spec({{"method", method},
                    {"bytes", bytes},
                    {"cache", "cold"},
                    {"chunk", chunk},
                    {"queue_depth", queue_depth}});
}

StorageLocation disk(std::uint64_t free_bytes) {
  StorageLocation loc;
  loc.dir = "/data/.pathbench-storage";
  loc.fs_type = "xfs";
  loc.free_bytes = free_bytes;
  loc.source = "/dev/nvme0n1p1";
  loc.mount_point = "/data";
  return loc;
}

TEST(StorageFamily, IsRegisteredWithItsAxesAndMetrics) {
  const FamilyRegistry families = builtin_families();
  const Family* family = families.find("storage");
  ASSERT_NE(family, nullptr);
  std::vector<std::string> axes;
  for (const auto& a : family->axes()) axes.push_back(a.name);
  EXPECT_EQ(axes, (std::vector<std::string>{"method", "bytes", "cache", "chunk", "queue_depth",
                                            "staging_memory", "reader"}));
  EXPECT_EQ(family->required_axes(), (std::vector<std::string>{"method", "bytes", "cache"}));
  EXPECT_EQ(family->metric_names(storage_case("mmap", kGiB, "cold")),
            (std::vector<std::string>{"throughput", "time"}));
  const auto m = storage_metrics();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].unit, "GB/s");
  EXPECT_EQ(m[0].better, Better::kHigher);
  EXPECT_EQ(m[1].unit, "s");
  EXPECT_EQ(m[1].better, Better::kLower);
}

TEST(StorageFamily, DecodesTheRequestWithTheDefaultChunk) {
  StorageRequest r = decode_storage_request(storage_case("odirect_pinned", kGiB, "cold"));
  EXPECT_EQ(r.method, StorageRequest::Method::kODirectPinned);
  EXPECT_EQ(r.method_name, "odirect_pinned");
  EXPECT_TRUE(r.cold());
  EXPECT_TRUE(r.direct_io());
  EXPECT_EQ(r.bytes, static_cast<std::uint64_t>(kGiB));
  EXPECT_EQ(r.chunk, kStorageDefaultChunk);
  EXPECT_EQ(r.queue_depth, 1u);  // one read in flight unless asked
  r = decode_storage_request(queued("odirect_pinned", kGiB, kMiB, 16));
  EXPECT_EQ(r.queue_depth, 16u);
  EXPECT_EQ(r.chunk, static_cast<std::uint64_t>(kMiB));
  // A file smaller than the default chunk is read in one block-rounded chunk.
  r = decode_storage_request(storage_case("pageable_read", kMiB + 100, "warm"));
  EXPECT_EQ(r.chunk, static_cast<std::uint64_t>(kMiB + 4096));
  EXPECT_FALSE(r.cold());
  EXPECT_FALSE(r.direct_io());
  r = decode_storage_request(chunked("cufile", kGiB, 2 * kMiB));
  EXPECT_EQ(r.chunk, static_cast<std::uint64_t>(2 * kMiB));
  EXPECT_TRUE(r.direct_io());
  r = decode_storage_request(storage_case("mmap", kGiB, "cold"));
  EXPECT_EQ(r.chunk, static_cast<std::uint64_t>(kGiB));  // one copy of the whole mapping
}

CaseSpec staged(const std::string& staging, std::int64_t queue_depth = 4) {
  return make_spec({{"method", "odirect_pinned"},
                    {"bytes", kGiB},
                    {"cache", "cold"},
                    {"chunk", kMiB},
                    {"queue_depth", queue_depth},
                    {"staging_memory", staging}});
}

TEST(StorageFamily, TheReaderIsThreadsUnlessAioIsAskedForAndOnlyForOdirectPinned) {
  StorageRequest r = decode_storage_request(queued("odirect_pinned", kGiB, kMiB, 4));
  EXPECT_EQ(r.reader, StorageRequest::Reader::kThreads);
  EXPECT_EQ(r.reader_name, "threads");
  r = decode_storage_request(make_spec({{"method", "odirect_pinned"},
                                        {"bytes", kGiB},
                                        {"cache", "cold"},
                                        {"chunk", kMiB},
                                        {"queue_depth", 16},
                                        {"reader", "aio"}}));
  EXPECT_EQ(r.reader, StorageRequest::Reader::kAio);
  EXPECT_EQ(r.reader_name, "aio");
  EXPECT_EQ(r.queue_depth, 16u);
  const auto family = make_storage_family();
  for (const char* m : {"pageable_read", "mmap", "cufile"}) {
    const auto why = family->invalid_combination(
        make_spec({{"method", m}, {"bytes", kGiB}, {"cache", "cold"}, {"reader", "aio"}}));
    ASSERT_TRUE(why) << m;
    EXPECT_NE(why->find(std::string("reader applies to odirect_pinned only (") + m),
              std::string::npos)
        << *why;
  }
}

TEST(StorageFamily, StagingMemoryDecidesTheSlotsPages) {
  StorageRequest r = decode_storage_request(queued("odirect_pinned", kGiB, kMiB, 4));
  EXPECT_EQ(r.staging, StorageRequest::Staging::kPinned);  // cudaHostAlloc per slot by default
  EXPECT_EQ(r.staging_name, "pinned");
  EXPECT_FALSE(r.staging_page());
  r = decode_storage_request(staged("pinned"));
  EXPECT_FALSE(r.staging_page());
  r = decode_storage_request(staged("registered-4k"));
  EXPECT_EQ(r.staging, StorageRequest::Staging::kRegistered4K);
  EXPECT_EQ(r.staging_page(), PageType::k4K);
  r = decode_storage_request(staged("registered-thp"));
  EXPECT_EQ(r.staging_name, "registered-thp");
  EXPECT_EQ(r.staging_page(), PageType::kThp);
  r = decode_storage_request(staged("registered-hugetlb"));
  EXPECT_EQ(r.staging_page(), PageType::kHugetlb);

  const auto family = make_storage_family();
  EXPECT_FALSE(family->invalid_combination(staged("registered-thp")));
  for (const char* m : {"pageable_read", "mmap", "cufile"}) {
    const auto why = family->invalid_combination(make_spec(
        {{"method", m}, {"bytes", kGiB}, {"cache", "cold"}, {"staging_memory", "pinned"}}));
    ASSERT_TRUE(why) << m;
    EXPECT_NE(why->find(std::string("staging_memory applies to odirect_pinned only (") + m),
              std::string::npos)
        << *why;
  }
  // The registered region holds the same slots as the pinned ones.
  EXPECT_EQ(family->memory_needs(staged("registered-hugetlb")).host_bytes,
            family->memory_needs(queued("odirect_pinned", kGiB, kMiB, 4)).host_bytes);
}

TEST(StorageFamily, HugePageStagingSkipsWithoutThePages) {
  const auto family = make_storage_family();
  Machine m = testing::h200_machine(1);
  const auto mentions = [&](const CaseSpec& spec, const std::string& what) {
    const auto why = family->skip_reason(spec, m, 0);
    return why && why->find(what) != std::string::npos;
  };
  // 4 reads in flight of 1 MiB with the threads reader: 12 slots (4 in pread, 4 queued ahead,
  // 4 spare), 12 MiB, six 2 MiB pages.
  m.hugetlb_free_pages = 5;
  EXPECT_TRUE(mentions(staged("registered-hugetlb"), "needs 6 free hugetlb pages"))
      << *family->skip_reason(staged("registered-hugetlb"), m, 0);
  EXPECT_FALSE(mentions(staged("registered-thp"), "hugetlb"));
  m.hugetlb_free_pages = 6;
  EXPECT_FALSE(mentions(staged("registered-hugetlb"), "hugetlb"));
  m.thp_enabled = "never";
  EXPECT_TRUE(mentions(staged("registered-thp"), "transparent huge pages are disabled"));
  EXPECT_FALSE(mentions(staged("registered-4k"), "transparent huge pages"));
  EXPECT_FALSE(mentions(staged("pinned"), "transparent huge pages"));
}

TEST(StorageFamily, InvalidCombinations) {
  const auto family = make_storage_family();
  for (const char* m : {"pageable_read", "odirect_pinned", "mmap", "cufile"}) {
    EXPECT_FALSE(family->invalid_combination(storage_case(m, 256 * kMiB, "cold"))) << m;
  }
  for (const char* m : {"pageable_read", "mmap", "cufile"}) {
    EXPECT_FALSE(family->invalid_combination(storage_case(m, 256 * kMiB, "warm"))) << m;
  }
  // O_DIRECT bypasses the page cache: a warm odirect_pinned case would measure a cold one.
  const auto warm = family->invalid_combination(storage_case("odirect_pinned", kGiB, "warm"));
  ASSERT_TRUE(warm);
  EXPECT_NE(warm->find("cache=warm has no meaning for odirect_pinned"), std::string::npos) << *warm;
  EXPECT_NE(warm->find("bypass the page cache"), std::string::npos) << *warm;
  // queue_depth: odirect_pinned only, at most one read in flight per chunk of the file.
  EXPECT_FALSE(family->invalid_combination(queued("odirect_pinned", kGiB, 128 << 10, 256)));
  EXPECT_FALSE(family->invalid_combination(queued("odirect_pinned", 16 * kMiB, kMiB, 16)));
  for (const char* m : {"pageable_read", "cufile"}) {
    const auto why = family->invalid_combination(queued(m, kGiB, kMiB, 4));
    ASSERT_TRUE(why) << m;
    EXPECT_NE(why->find(std::string("queue_depth applies to odirect_pinned only (") + m),
              std::string::npos)
        << *why;
  }
  const auto mmap_depth = family->invalid_combination(
      make_spec({{"method", "mmap"}, {"bytes", kGiB}, {"cache", "cold"}, {"queue_depth", 1}}));
  ASSERT_TRUE(mmap_depth);
  EXPECT_NE(mmap_depth->find("queue_depth applies to odirect_pinned only"), std::string::npos);
  const auto deep = family->invalid_combination(queued("odirect_pinned", 16 * kMiB, kMiB, 17));
  ASSERT_TRUE(deep);
  EXPECT_NE(deep->find("queue_depth 17 is more than the file's 16 chunks of 1 MiB"),
            std::string::npos)
      << *deep;
  // With the default chunk a small file is one chunk.
  EXPECT_TRUE(family->invalid_combination(make_spec(
      {{"method", "odirect_pinned"}, {"bytes", kMiB}, {"cache", "cold"}, {"queue_depth", 2}})));
  const auto unaligned = family->invalid_combination(chunked("odirect_pinned", kGiB, 5000));
  ASSERT_TRUE(unaligned);
  EXPECT_NE(unaligned->find("not a multiple of 4096"), std::string::npos) << *unaligned;
  const auto beyond = family->invalid_combination(chunked("pageable_read", 4 * kMiB, 8 * kMiB));
  ASSERT_TRUE(beyond);
  EXPECT_NE(beyond->find("larger than the file"), std::string::npos) << *beyond;
  const auto mmap = family->invalid_combination(chunked("mmap", kGiB, 8 * kMiB));
  ASSERT_TRUE(mmap);
  EXPECT_NE(mmap->find("does not apply to mmap"), std::string::npos) << *mmap;
  EXPECT_FALSE(family->invalid_combination(chunked("cufile", 4 * kMiB, 4 * kMiB)));
  const auto missing = family->case_error(make_spec({{"method", "mmap"}, {"bytes", kGiB}}));
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->find("axis is required"), std::string::npos) << *missing;
  const auto unknown = family->case_error(storage_case("o_direct", kGiB, "cold"));
  ASSERT_TRUE(unknown);
  EXPECT_NE(unknown->find("o_direct"), std::string::npos) << *unknown;
}

TEST(StorageFamily, MemoryNeeds) {
  const auto family = make_storage_family();
  const std::uint64_t g = kGiB;
  // The destination on the GPU; on the host the copy-back image plus the method's staging.
  EXPECT_EQ(family->memory_needs(storage_case("pageable_read", kGiB, "cold")).host_bytes, 2 * g);
  EXPECT_EQ(family->memory_needs(storage_case("mmap", kGiB, "cold")).host_bytes, g);
  EXPECT_EQ(family->memory_needs(storage_case("cufile", kGiB, "cold")).host_bytes, g);
  // odirect_pinned with the threads reader: three staging slots per read in flight (in pread,
  // queued ahead, spare; at least 4), never more than the file has chunks.
  EXPECT_EQ(family->memory_needs(storage_case("odirect_pinned", kGiB, "cold")).host_bytes,
            g + 4 * kStorageDefaultChunk);
  EXPECT_EQ(family->memory_needs(queued("odirect_pinned", kGiB, kMiB, 16)).host_bytes,
            g + 48 * kMiB);
  // The aio reader queues no reads ahead: two slots per read in flight.
  CaseSpec aio = queued("odirect_pinned", kGiB, kMiB, 16);
  aio.params["reader"] = "aio";
  EXPECT_EQ(family->memory_needs(aio).host_bytes, g + 32 * kMiB);
  EXPECT_EQ(family->memory_needs(queued("odirect_pinned", 4 * kMiB, kMiB, 4)).host_bytes,
            4 * kMiB + 4 * kMiB);
  EXPECT_EQ(
      family->memory_needs(queued("odirect_pinned", kGiB, (1 << 20) + 100 * 4096, 2)).host_bytes,
      g + 6 * std::uint64_t{(1 << 20) + 100 * 4096});
  EXPECT_EQ(family->memory_needs(storage_case("mmap", kGiB, "warm")).device_bytes, g);
}

TEST(StorageFamily, WithoutAGpuTheCaseSkipsWithTheGpuReason) {
  const auto family = make_storage_family();
  Machine m = testing::h200_machine(1);
  m.cuda_unavailable_reason = "no CUDA device (cudaGetDeviceCount: no CUDA-capable device)";
  m.gpus.clear();
  const auto why = family->skip_reason(storage_case("mmap", 256 * kMiB, "cold"), m, 0);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("CUDA"), std::string::npos) << *why;
}

TEST(StorageFamily, TheStorageFolderDecidesWhatCanRun) {
  const StorageRequest cold = decode_storage_request(storage_case("mmap", kGiB, "cold"));
  const StorageRequest warm = decode_storage_request(storage_case("mmap", kGiB, "warm"));
  const StorageRequest direct = decode_storage_request(storage_case("cufile", kGiB, "warm"));
  EXPECT_FALSE(storage_location_skip_reason(cold, disk(std::uint64_t{100} << 30)));
  StorageLocation tmpfs = disk(std::uint64_t{100} << 30);
  tmpfs.fs_type = "tmpfs";
  tmpfs.memory_backed = true;
  const auto no_cold = storage_location_skip_reason(cold, tmpfs);
  ASSERT_TRUE(no_cold);
  EXPECT_NE(no_cold->find("tmpfs"), std::string::npos) << *no_cold;
  EXPECT_NE(no_cold->find("cold read"), std::string::npos) << *no_cold;
  EXPECT_NE(no_cold->find("--storage-dir"), std::string::npos) << *no_cold;
  const auto no_direct = storage_location_skip_reason(direct, tmpfs);
  ASSERT_TRUE(no_direct);
  EXPECT_NE(no_direct->find("O_DIRECT"), std::string::npos) << *no_direct;
  EXPECT_FALSE(storage_location_skip_reason(warm, tmpfs));  // a warm buffered read is fine
  // The file plus its margin (5 %, at least 256 MiB) must fit.
  const std::uint64_t g = kGiB;
  EXPECT_FALSE(storage_location_skip_reason(cold, disk(g + (std::uint64_t{256} << 20))));
  const auto full = storage_location_skip_reason(cold, disk(g + (std::uint64_t{255} << 20)));
  ASSERT_TRUE(full);
  EXPECT_NE(full->find("free"), std::string::npos) << *full;
  // The test file an earlier case left there is read again or replaced: its bytes count as free.
  const auto kept = storage_location_skip_reason(cold, disk(std::uint64_t{256} << 20), g);
  EXPECT_FALSE(kept) << *kept;
  const auto too_little = storage_location_skip_reason(cold, disk(std::uint64_t{255} << 20), g);
  ASSERT_TRUE(too_little);
  EXPECT_NE(too_little->find("free with the kept test file"), std::string::npos) << *too_little;
  EXPECT_EQ(storage_free_margin(std::uint64_t{100} << 30), std::uint64_t{5} << 30);
}

TEST(StorageFamily, TheStorageFolderComesFromTheRunOption) {
  Machine m;
  EXPECT_EQ(std::filesystem::path(storage_dir(m)).filename(), ".pathbench-storage");
  EXPECT_EQ(std::filesystem::path(storage_dir(m)).parent_path(), std::filesystem::current_path());
  m.storage_dir = "/mnt/nvme/pb";
  EXPECT_EQ(storage_dir(m), "/mnt/nvme/pb");
}

TEST(StorageFamily, PageCacheCheckJudgesEveryProbe) {
  using Cache = StorageRequest::Cache;
  EXPECT_TRUE(page_cache_check(Cache::kCold, {0.0, 0.004}).passed);
  const Check leaked = page_cache_check(Cache::kCold, {0.0, 0.5});
  EXPECT_FALSE(leaked.passed);
  EXPECT_NE(leaked.detail.find("50.0 %"), std::string::npos) << leaked.detail;
  EXPECT_EQ(leaked.value.size(), 2u);  // every probe's fraction is recorded
  EXPECT_TRUE(page_cache_check(Cache::kWarm, {1.0, 0.995}).passed);
  EXPECT_FALSE(page_cache_check(Cache::kWarm, {1.0, 0.2}).passed);
  EXPECT_FALSE(page_cache_check(Cache::kCold, {}).passed);
  EXPECT_EQ(page_cache_check(Cache::kCold, {0.0}).name, "page_cache");
}

TEST(StorageFamily, LocationCheckNamesFileSystemAndDevice) {
  StorageLocation loc = disk(std::uint64_t{100} << 30);
  loc.device_number = "259:1";
  BlockDevice nvme;
  nvme.name = "nvme0n1p1";
  nvme.disk = "nvme0n1";
  nvme.model = "SAMSUNG MZQL27T6HBLA-00A07";
  nvme.rotational = false;
  nvme.scheduler = "none";
  loc.block_device = nvme;
  const Check c = storage_location_check(loc, "/mnt/pb/pathbench-storage.abc123", true);
  EXPECT_TRUE(c.passed);
  EXPECT_NE(c.detail.find("the test file /mnt/pb/pathbench-storage.abc123 was written for this "
                          "case"),
            std::string::npos)
      << c.detail;
  EXPECT_EQ(c.value.at("file"), "/mnt/pb/pathbench-storage.abc123");
  EXPECT_EQ(c.value.at("file_written_for_this_case"), true);
  EXPECT_EQ(c.name, "storage_location");
  EXPECT_NE(c.detail.find("xfs"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("/dev/nvme0n1p1"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("; block device nvme0n1p1 (disk nvme0n1, model \"SAMSUNG"),
            std::string::npos)
      << c.detail;
  EXPECT_EQ(c.value.at("fs_type"), "xfs");
  EXPECT_EQ(c.value.at("free_bytes"), std::uint64_t{100} << 30);
  EXPECT_EQ(c.value.at("device_number"), "259:1");
  EXPECT_EQ(c.value.at("block_device").at("model"), "SAMSUNG MZQL27T6HBLA-00A07");
  EXPECT_EQ(c.value.at("block_device").at("rotational"), false);
  EXPECT_EQ(c.value.at("block_device").at("scheduler"), "none");
  // An overlay (a container's root) has no block device: said, and null in the value.
  loc.block_device.reset();
  loc.device_number = "0:50";
  const Check none = storage_location_check(loc, "/mnt/pb/pathbench-storage.abc123", false);
  EXPECT_NE(none.detail.find("written for an earlier case of this run and kept"), std::string::npos)
      << none.detail;
  EXPECT_EQ(none.value.at("file_written_for_this_case"), false);
  EXPECT_NE(none.detail.find("no block device behind device number 0:50"), std::string::npos)
      << none.detail;
  EXPECT_TRUE(none.value.at("block_device").is_null());
}

// The live probe of a real folder records its device number and, on a disk, the device.
TEST(StorageFamily, TheProbeRecordsTheDeviceOfTheFolder) {
  testing::TempDir dir;
  const StorageLocation loc = probe_storage(dir.path().string());
  EXPECT_NE(loc.device_number.find(':'), std::string::npos) << loc.device_number;
  if (!loc.block_device) {
    GTEST_SKIP() << dir.path() << " (" << loc.fs_type << ", " << loc.source
                 << ") has no block device behind it";
  }
  EXPECT_FALSE(loc.block_device->name.empty());
  EXPECT_FALSE(loc.block_device->disk.empty());
  std::cout << "note: " << describe(*loc.block_device) << "\n";
}

TEST(StorageFamily, ShippedScenarioExpandsToEveryMethodSizeAndCache) {
  FamilyRegistry families;
  families.add(make_storage_family());
  const auto file = load_scenario_file(
      std::string(PATHBENCH_SOURCE_DIR) + "/scenarios/storage.json", families, {0});
  const Machine machine = testing::h200_machine(1);
  std::vector<std::string> ids;
  for (const auto& s : file.scenarios) {
    // Storage is noisy: its thresholds come from each node type's baseline spread, not a number.
    EXPECT_TRUE(s.gate.is_null() || !s.gate.contains("threshold_pct")) << s.name;
    const auto cases = expand(s);
    EXPECT_NO_THROW(validate_cases(s, cases, *families.find("storage"), machine, 0));
    for (const auto& c : cases) ids.push_back(c.id);
  }
  const auto has = [&](const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  // storage-to-gpu: every method, size and cache but a warm O_DIRECT read (14 cases);
  // storage-queue-depth: 3 depths x 2 chunks of a cold 1 GiB odirect_pinned read;
  // storage-staging-memory: the same with slots in registered 4 KiB, THP and hugetlb pages;
  // storage-reader: storage-queue-depth's settings read by native AIO.
  ASSERT_EQ(ids.size(), 14u + 6u + 18u + 6u);
  for (const char* m : {"pageable_read", "odirect_pinned", "mmap", "cufile"}) {
    for (const char* b : {"268435456", "1073741824"}) {
      for (const char* c : {"cold", "warm"}) {
        const std::string id = std::string("storage/method=") + m + "/bytes=" + b + "/cache=" + c;
        EXPECT_EQ(has(id), std::string(m) != "odirect_pinned" || std::string(c) == "cold") << id;
      }
    }
  }
  for (const char* depth : {"1", "4", "16"}) {
    for (const char* chunk : {"131072", "1048576"}) {
      const std::string id =
          std::string("storage/method=odirect_pinned/bytes=1073741824/cache=cold/chunk=") + chunk +
          "/queue_depth=" + depth;
      EXPECT_TRUE(has(id)) << id;
      for (const char* staging : {"registered-4k", "registered-thp", "registered-hugetlb"}) {
        EXPECT_TRUE(has(id + "/staging_memory=" + staging)) << id << " " << staging;
      }
      EXPECT_TRUE(has(id + "/reader=aio")) << id;
    }
  }
}

// A bad value in a scenario file is refused at load with the file and the field (exit 3).
TEST(StorageFamily, BadScenarioValuesAreRefusedNamingFileAndField) {
  testing::TempDir dir;
  const FamilyRegistry families = builtin_families();
  const Machine machine = testing::h200_machine(1);
  auto refused = [&](const std::string& axes) -> std::string {
    const auto path = dir.path() / "s.json";
    std::ofstream(path) << R"({"schema": "pathbench.scenario/v1", "scenarios": [{"name": "s", )"
                        << R"("family": "storage", "axes": )" << axes << "}]}";
    try {
      const auto file = load_scenario_file(path, families, {0});
      for (const auto& s : file.scenarios) {
        validate_cases(s, expand(s), *families.find("storage"), machine, 0);
      }
    } catch (const InputError& e) {  // the CLI's exit 3
      return e.what();
    }
    return {};
  };
  const std::string file = (dir.path() / "s.json").string();
  std::string why = refused(
      R"({"method": ["odirect_pinned"], "bytes": ["64MiB"], "cache": ["cold"], "chunk": [5000]})");
  EXPECT_NE(why.find(file + ": /scenarios/0/axes: "), std::string::npos) << why;
  EXPECT_NE(why.find("not a multiple of 4096"), std::string::npos) << why;
  why = refused(R"({"method": ["mmap", "o_direct"], "bytes": ["64MiB"], "cache": ["cold"]})");
  EXPECT_NE(why.find(file + ": /scenarios/0/axes/method/1: "), std::string::npos) << why;
  why = refused(R"({"method": ["mmap"], "bytes": ["64MiB"], "cache": ["lukewarm"]})");
  EXPECT_NE(why.find("/scenarios/0/axes/cache/0"), std::string::npos) << why;
  why =
      refused(R"({"method": ["cufile"], "bytes": ["4MiB"], "cache": ["warm"], "chunk": ["8MiB"]})");
  EXPECT_NE(why.find("larger than the file"), std::string::npos) << why;
  EXPECT_EQ(refused(R"({"method": ["cufile"], "bytes": ["64MiB"], "cache": ["warm"]})"), "");
  why = refused(R"({"method": ["odirect_pinned"], "bytes": ["64MiB"], "cache": ["cold", "warm"]})");
  EXPECT_NE(why.find(file + ": /scenarios/0/axes: "), std::string::npos) << why;
  EXPECT_NE(why.find("cache=warm has no meaning for odirect_pinned"), std::string::npos) << why;
  why =
      refused(R"({"method": ["mmap"], "bytes": ["64MiB"], "cache": ["cold"], "queue_depth": [4]})");
  EXPECT_NE(why.find("queue_depth applies to odirect_pinned only (mmap"), std::string::npos) << why;
  why = refused(
      R"({"method": ["odirect_pinned"], "bytes": ["64MiB"], "cache": ["cold"], "queue_depth": [0]})");
  EXPECT_NE(why.find("/scenarios/0/axes/queue_depth/0"), std::string::npos) << why;
  why = refused(
      R"({"method": ["odirect_pinned"], "bytes": ["64MiB"], "cache": ["cold"], "queue_depth": [257]})");
  EXPECT_NE(why.find("/scenarios/0/axes/queue_depth/0"), std::string::npos) << why;
  EXPECT_EQ(refused(R"({"method": ["odirect_pinned"], "bytes": ["64MiB"], "cache": ["cold"], )"
                    R"("chunk": ["1MiB"], "queue_depth": [1, 16, 64]})"),
            "");
  why = refused(R"({"method": ["odirect_pinned"], "bytes": ["64MiB"], "cache": ["cold"], )"
                R"("staging_memory": ["pinned", "registered-2m"]})");
  EXPECT_NE(why.find(file + ": /scenarios/0/axes/staging_memory/1: "), std::string::npos) << why;
  why = refused(R"({"method": ["mmap"], "bytes": ["64MiB"], "cache": ["cold"], )"
                R"("staging_memory": ["registered-thp"]})");
  EXPECT_NE(why.find("staging_memory applies to odirect_pinned only (mmap"), std::string::npos)
      << why;
  why = refused(R"({"method": ["odirect_pinned"], "bytes": ["64MiB"], "cache": ["cold"], )"
                R"("reader": ["threads", "uring"]})");
  EXPECT_NE(why.find(file + ": /scenarios/0/axes/reader/1: "), std::string::npos) << why;
  why = refused(R"({"method": ["pageable_read"], "bytes": ["64MiB"], "cache": ["cold"], )"
                R"("reader": ["aio"]})");
  EXPECT_NE(why.find("reader applies to odirect_pinned only (pageable_read"), std::string::npos)
      << why;
  EXPECT_EQ(refused(R"({"method": ["odirect_pinned"], "bytes": ["64MiB"], "cache": ["cold"], )"
                    R"("chunk": ["1MiB"], "queue_depth": [4], "reader": ["threads", "aio"]})"),
            "");
}

}  // namespace
}  // namespace pathbench::test_storage_family
