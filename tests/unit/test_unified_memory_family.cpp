// The unified_memory family's host-side rules: axes, combinations, memory needs, skip reasons,
// and the GPU-to-GPU methods (the pair axis on recorded two-GPU topologies, their expectation and
// checks).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/unified_memory.hpp"
#include "case_spec.hpp"
#include "core/errors.hpp"
#include "recorded_topologies.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "test_machines.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_unified_memory_family {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;
constexpr std::int64_t kGiB = 1024 * kMiB;

CaseSpec make_spec(nlohmann::ordered_json params) {
  return testing::scenario_case("unified_memory", std::move(params), "test.json", 3);
}

CaseSpec um_case(const std::string& method, std::int64_t stride, std::int64_t bytes) {
  return make_spec({{"method", method}, {"stride", stride}, {"bytes", bytes}});
}

// A case with the pair axis first, as the shipped um-gpu-to-gpu scenario lists it.
CaseSpec pair_case(const std::string& pair, const std::string& method, std::int64_t stride,
                   std::int64_t bytes) {
  return make_spec({{"pair", pair}, {"method", method}, {"stride", stride}, {"bytes", bytes}});
}

Machine gpu_machine() {
  Machine m;
  m.numa_nodes = {0};
  m.node_cpus = {{0, 1, 2, 3}};
  m.mem_available_bytes = std::uint64_t{64} << 30;
  m.thp_enabled = "madvise";
  MachineGpu gpu;
  gpu.index = 0;
  gpu.name = "NVIDIA H200";
  gpu.numa_node = 0;
  gpu.memory_bytes = std::uint64_t{141} << 30;
  m.gpus.push_back(gpu);
  return m;
}

ManagedMemorySupport capable_device() {
  ManagedMemorySupport p;
  p.device = 0;
  p.managed_memory = true;
  p.concurrent_managed_access = true;
  p.pageable_memory_access = true;
  p.free_device_bytes = std::uint64_t{139} << 30;
  return p;
}

TEST(UnifiedMemoryFamily, DescribesItsAxes) {
  const auto family = make_unified_memory_family();
  EXPECT_EQ(family->name(), "unified_memory");
  EXPECT_FALSE(family->description().empty());
  std::vector<std::string> names;
  for (const auto& axis : family->axes()) names.push_back(axis.name);
  EXPECT_EQ(names, (std::vector<std::string>{"method", "stride", "bytes", "pair"}));
  const auto& method = family->axes()[0];
  EXPECT_EQ(method.kind, AxisSchema::Kind::kString);
  EXPECT_EQ(method.allowed, (std::vector<std::string>{"fault", "prefetch", "advise_preferred_gpu",
                                                      "advise_accessed_by", "gpu_to_cpu",
                                                      "gpu_to_gpu", "prefetch_gpu_to_gpu"}));
  const auto& pair = family->axes()[3];
  EXPECT_EQ(pair.kind, AxisSchema::Kind::kString);
  EXPECT_TRUE(pair.allowed.empty());  // "S-D" is checked by invalid_combination
  const auto& stride = family->axes()[1];
  EXPECT_EQ(stride.kind, AxisSchema::Kind::kInteger);
  EXPECT_EQ(stride.min, 4 * kKiB);
  EXPECT_EQ(stride.max, 2 * kMiB);
  const auto& bytes = family->axes()[2];
  EXPECT_EQ(bytes.kind, AxisSchema::Kind::kInteger);
  EXPECT_EQ(bytes.min, 1 * kMiB);
  EXPECT_EQ(bytes.max, 4 * kGiB);
  EXPECT_EQ(family->required_axes(), (std::vector<std::string>{"method", "stride", "bytes"}));
  // Values outside the schema are rejected by the scenario parser before the family sees them.
  EXPECT_TRUE(check_axis_value(stride, 2 * kKiB).has_value());
  EXPECT_TRUE(check_axis_value(bytes, 8 * kGiB).has_value());
  EXPECT_TRUE(check_axis_value(method, "migrate").has_value());
  EXPECT_FALSE(check_axis_value(method, "advise_accessed_by").has_value());
}

TEST(UnifiedMemoryFamily, DecodesTheRequest) {
  const auto r = decode_unified_memory_request(um_case("advise_preferred_gpu", 64 * kKiB, kGiB));
  EXPECT_EQ(r.method, UnifiedMemoryRequest::Method::kAdvisePreferredGpu);
  EXPECT_EQ(r.method_name, "advise_preferred_gpu");
  EXPECT_EQ(r.stride, 64u * 1024);
  EXPECT_EQ(r.bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(r.touches(), 16384u);
  using M = UnifiedMemoryRequest::Method;
  EXPECT_EQ(decode_unified_memory_request(um_case("fault", 4 * kKiB, kMiB)).method, M::kFault);
  EXPECT_EQ(decode_unified_memory_request(um_case("prefetch", 4 * kKiB, kMiB)).method,
            M::kPrefetch);
  EXPECT_EQ(decode_unified_memory_request(um_case("advise_accessed_by", 4 * kKiB, kMiB)).method,
            M::kAdviseAccessedBy);
  EXPECT_EQ(decode_unified_memory_request(um_case("gpu_to_cpu", 4 * kKiB, kMiB)).method,
            M::kGpuToCpu);
}

TEST(UnifiedMemoryFamily, TouchesAndTheMigrationLowerBound) {
  // 4 KiB stride: every page is touched, the whole buffer must move.
  EXPECT_EQ(decode_unified_memory_request(um_case("fault", 4 * kKiB, kGiB)).touches(), 262144u);
  EXPECT_EQ(
      decode_unified_memory_request(um_case("fault", 4 * kKiB, kGiB)).estimated_migrated_bytes(),
      std::uint64_t{1} << 30);
  // 2 MiB stride: one page of each 2 MiB at the least.
  const auto sparse = decode_unified_memory_request(um_case("fault", 2 * kMiB, kGiB));
  EXPECT_EQ(sparse.touches(), 512u);
  EXPECT_EQ(sparse.estimated_migrated_bytes(), 512u * 4096);
  // A prefetch moves the whole buffer whatever the kernel touches afterwards.
  EXPECT_EQ(
      decode_unified_memory_request(um_case("prefetch", 2 * kMiB, kGiB)).estimated_migrated_bytes(),
      std::uint64_t{1} << 30);
  // A buffer that is not a multiple of the stride: the last partial stride is touched too.
  const auto odd = decode_unified_memory_request(um_case("gpu_to_cpu", 64 * kKiB, kMiB + 1));
  EXPECT_EQ(odd.touches(), 17u);
  EXPECT_EQ(odd.estimated_migrated_bytes(), 17u * 4096);
}

// The counts the H200 (driver 580) really delivered, from docs/measurements.md.
TEST(UnifiedMemoryFamily, CountsThatContradictThePassShowLostRecords) {
  const auto fault64k = decode_unified_memory_request(um_case("fault", 64 * kKiB, kGiB));
  UnifiedMemoryCounts lost;
  lost.bytes_h2d = 352190464;  // of a 1 GiB buffer touched every 64 KiB, and no fault group
  const auto gaps = migration_gaps(unified_memory_expectation(fault64k), lost);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_NE(gaps[0].find("no GPU page-fault group"), std::string::npos) << gaps[0];
  // Pages reached the GPU in a pass that only runs the touch kernel: fault-driven anyway.
  EXPECT_TRUE(unified_memory_fault_driven(lost));
  // Throughput divides by what was counted (more than the 64 MiB the touched pages occupy).
  EXPECT_EQ(migrated_bytes(unified_memory_expectation(fault64k), lost), 352190464u);

  // Dense 4 KiB pass: 1 GiB must move; 901 MB counted is short.
  const auto dense = decode_unified_memory_request(um_case("fault", 4 * kKiB, kGiB));
  UnifiedMemoryCounts short_count;
  short_count.bytes_h2d = 901660672;
  short_count.gpu_fault_groups = 195;
  const auto dense_gaps = migration_gaps(unified_memory_expectation(dense), short_count);
  ASSERT_EQ(dense_gaps.size(), 1u);
  EXPECT_NE(dense_gaps[0].find("less than"), std::string::npos) << dense_gaps[0];
  EXPECT_EQ(migrated_bytes(unified_memory_expectation(dense), short_count), std::uint64_t{1} << 30);

  // 2 MiB stride: 19 groups and 32 MiB, consistent.
  const auto sparse = decode_unified_memory_request(um_case("fault", 2 * kMiB, kGiB));
  UnifiedMemoryCounts whole;
  whole.bytes_h2d = 33554432;
  whole.gpu_fault_groups = 19;
  EXPECT_TRUE(migration_gaps(unified_memory_expectation(sparse), whole).empty());
  EXPECT_EQ(migrated_bytes(unified_memory_expectation(sparse), whole), 33554432u);

  // Nothing counted at all: no evidence of a fault-driven migration.
  UnifiedMemoryCounts nothing;
  EXPECT_FALSE(unified_memory_fault_driven(nothing));
  EXPECT_EQ(migration_gaps(unified_memory_expectation(sparse), nothing).size(), 1u);
  EXPECT_EQ(migrated_bytes(unified_memory_expectation(sparse), nothing), 512u * 4096);

  // CUPTI's own loss count is a gap by itself.
  whole.lost_records = 3;
  const auto reported = migration_gaps(unified_memory_expectation(sparse), whole);
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_NE(reported[0].find("3 record(s) lost"), std::string::npos) << reported[0];
}

TEST(UnifiedMemoryFamily, GpuToCpuCountsNeedBytesBackAndCpuFaults) {
  const auto back = decode_unified_memory_request(um_case("gpu_to_cpu", 4 * kKiB, 64 * kMiB));
  UnifiedMemoryCounts full;
  full.bytes_d2h = 64 * kMiB;
  full.cpu_faults = 192;
  EXPECT_TRUE(migration_gaps(unified_memory_expectation(back), full).empty());
  EXPECT_EQ(migrated_bytes(unified_memory_expectation(back), full), std::uint64_t{64} << 20);
  UnifiedMemoryCounts no_faults = full;
  no_faults.cpu_faults = 0;
  EXPECT_EQ(migration_gaps(unified_memory_expectation(back), no_faults).size(), 1u);
  UnifiedMemoryCounts none;
  EXPECT_EQ(migration_gaps(unified_memory_expectation(back), none).size(), 1u);
  // H2D bytes do not count for the way back.
  UnifiedMemoryCounts wrong_way;
  wrong_way.bytes_h2d = 64 * kMiB;
  EXPECT_EQ(migrated_bytes(unified_memory_expectation(back), wrong_way), 64u * kMiB / 4096 * 4096);
}

TEST(UnifiedMemoryFamily, AdviceAndPrefetchGaps) {
  // accessed-by maps instead of migrating: no bytes is not a contradiction.
  const auto mapped = decode_unified_memory_request(um_case("advise_accessed_by", 64 * kKiB, kGiB));
  EXPECT_TRUE(migration_gaps(unified_memory_expectation(mapped), UnifiedMemoryCounts{}).empty());
  // A prefetch must move the whole buffer.
  const auto prefetch = decode_unified_memory_request(um_case("prefetch", 64 * kKiB, kGiB));
  UnifiedMemoryCounts half;
  half.bytes_h2d = kGiB / 2;
  EXPECT_EQ(migration_gaps(unified_memory_expectation(prefetch), half).size(), 1u);
  half.bytes_h2d = kGiB;
  EXPECT_TRUE(migration_gaps(unified_memory_expectation(prefetch), half).empty());
}

CountedSample counted(double seconds, std::uint64_t groups, std::uint64_t h2d,
                      std::uint64_t d2h = 0, std::uint64_t cpu_faults = 0) {
  UnifiedMemoryCounts c;
  c.gpu_fault_groups = groups;
  c.bytes_h2d = h2d;
  c.bytes_d2h = d2h;
  c.cpu_faults = cpu_faults;
  return {seconds, c};
}

TEST(UnifiedMemoryFamily, FaultPassesMustShowFaultDrivenMigration) {
  const auto r = decode_unified_memory_request(um_case("fault", 64 * kKiB, kGiB));
  UnifiedMemoryPasses passes;
  // The second pass lost its fault records (bytes moved, no group): still fault-driven.
  passes.samples = {counted(0.2, 20, 64 * kMiB), counted(0.2, 0, 352190464)};
  auto checks = unified_memory_pass_checks(r, passes, "", true);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].name, "um_counters");
  EXPECT_TRUE(checks[0].passed);
  EXPECT_NE(checks[0].detail.find("INCOMPLETE in 1 of 2"), std::string::npos) << checks[0].detail;
  EXPECT_EQ(checks[0].value["complete"], false);
  EXPECT_EQ(checks[1].name, "gpu_fault_groups");
  EXPECT_TRUE(checks[1].passed) << checks[1].detail;
  EXPECT_NE(checks[1].detail.find("1 sample(s) counted bytes but no fault group"),
            std::string::npos)
      << checks[1].detail;
  EXPECT_EQ(checks[1].value, nlohmann::ordered_json({20, 0}));
  // A pass that shows no migration at all fails the case.
  passes.samples.push_back(counted(0.2, 0, 0));
  checks = unified_memory_pass_checks(r, passes, "", true);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_FALSE(checks[1].passed);
  // Without counters there is nothing to judge faults by: um_counters says why.
  UnifiedMemoryPasses uncounted;
  uncounted.samples = {CountedSample{0.2, std::nullopt}};
  checks = unified_memory_pass_checks(r, uncounted, "CUPTI is busy", true);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_TRUE(checks[0].passed);
  EXPECT_EQ(checks[0].detail.rfind("CUPTI unavailable: CUPTI is busy", 0), 0u) << checks[0].detail;
}

TEST(UnifiedMemoryFamily, GpuToCpuPassesMustMigrateBack) {
  const auto r = decode_unified_memory_request(um_case("gpu_to_cpu", 4 * kKiB, 64 * kMiB));
  UnifiedMemoryPasses passes;
  passes.samples = {counted(0.1, 0, 0, 64 * kMiB, 16384)};
  auto checks = unified_memory_pass_checks(r, passes, "", false);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[1].name, "cpu_fault_migration");
  EXPECT_TRUE(checks[1].passed) << checks[1].detail;
  passes.samples.push_back(counted(0.1, 0, 0, 0, 0));
  checks = unified_memory_pass_checks(r, passes, "", false);
  EXPECT_FALSE(checks[1].passed);
  EXPECT_EQ(checks[1].value, nlohmann::ordered_json({64 * kMiB, 0}));
}

TEST(UnifiedMemoryFamily, PrefetchTimingSaysWhatTheClockCounted) {
  const auto r = decode_unified_memory_request(um_case("prefetch", 64 * kKiB, kGiB));
  UnifiedMemoryPasses passes;
  passes.samples = {counted(0.1, 0, kGiB), counted(0.1, 0, kGiB), counted(0.1, 0, kGiB)};
  passes.prefetch_calls = {3e-6, 1e-6, 2e-6};
  const auto latched = unified_memory_pass_checks(r, passes, "", true);
  ASSERT_EQ(latched.size(), 2u);  // um_counters, prefetch_timing: no fault check for a prefetch
  EXPECT_EQ(latched[1].name, "prefetch_timing");
  EXPECT_DOUBLE_EQ(latched[1].value.get<double>(), 2e-6);
  EXPECT_NE(latched[1].detail.find("leaves out"), std::string::npos) << latched[1].detail;
  const auto host = unified_memory_pass_checks(r, passes, "", false);
  EXPECT_NE(host[1].detail.find("blocked behind the latch"), std::string::npos) << host[1].detail;
}

TEST(UnifiedMemoryFamily, InvalidCombinations) {
  const auto family = make_unified_memory_family();
  for (const char* method :
       {"fault", "prefetch", "advise_preferred_gpu", "advise_accessed_by", "gpu_to_cpu"}) {
    for (std::int64_t stride : {4 * kKiB, 64 * kKiB, 2 * kMiB}) {
      EXPECT_FALSE(family->invalid_combination(um_case(method, stride, kGiB)))
          << method << " " << stride;
    }
  }
  const auto not_pow2 = family->invalid_combination(um_case("fault", 12 * kKiB, kGiB));
  ASSERT_TRUE(not_pow2);
  EXPECT_NE(not_pow2->find("power of two"), std::string::npos) << *not_pow2;
  const auto too_wide = family->invalid_combination(um_case("fault", 2 * kMiB, kMiB));
  ASSERT_TRUE(too_wide);
  EXPECT_NE(too_wide->find("larger than the buffer"), std::string::npos) << *too_wide;
  EXPECT_FALSE(family->invalid_combination(um_case("fault", kMiB, kMiB)));
  // A missing axis is the schema's answer (case_error), for callers that skip the parser.
  for (const auto& spec : {make_spec({{"method", "fault"}, {"bytes", kGiB}}),
                           make_spec({{"stride", 4096}, {"bytes", kGiB}}),
                           make_spec({{"method", "fault"}, {"stride", 4096}})}) {
    const auto why = family->case_error(spec);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("axis is required"), std::string::npos) << *why;
  }
}

TEST(UnifiedMemoryFamily, MemoryNeedsOneBufferOnEachSide) {
  const auto family = make_unified_memory_family();
  for (const char* method : {"fault", "prefetch", "advise_accessed_by", "gpu_to_cpu"}) {
    const auto needs = family->memory_needs(um_case(method, 64 * kKiB, 256 * kMiB));
    EXPECT_EQ(needs.host_bytes, 256u << 20) << method;
    EXPECT_EQ(needs.device_bytes, 256u << 20) << method;
  }
}

TEST(UnifiedMemoryFamily, SkipsWithoutAGpu) {
  const auto family = make_unified_memory_family();
  const auto spec = um_case("fault", 64 * kKiB, 256 * kMiB);
  Machine none;
  const auto plain = family->skip_reason(spec, none, 0);
  ASSERT_TRUE(plain);
  EXPECT_EQ(*plain, "no CUDA device on this machine");
  Machine broken = gpu_machine();
  broken.cuda_unavailable_reason = "cudaGetDeviceCount: cudaErrorNoDevice (no CUDA-capable device)";
  const auto reason = family->skip_reason(spec, broken, 0);
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason, broken.cuda_unavailable_reason);
}

TEST(UnifiedMemoryFamily, SkipsAMissingDeviceAndRunsOnAPresentOne) {
  const auto family = make_unified_memory_family();
  const Machine m = gpu_machine();
  for (const char* method :
       {"fault", "prefetch", "advise_preferred_gpu", "advise_accessed_by", "gpu_to_cpu"}) {
    EXPECT_FALSE(family->skip_reason(um_case(method, 64 * kKiB, kGiB), m, 0)) << method;
  }
  const auto missing = family->skip_reason(um_case("fault", 64 * kKiB, kGiB), m, 1);
  ASSERT_TRUE(missing);
  EXPECT_EQ(*missing, "GPU 1 does not exist (this machine has 1)");
  EXPECT_TRUE(family->skip_reason(um_case("fault", 64 * kKiB, kGiB), m, -1));
}

TEST(UnifiedMemoryFamily, DeviceWithoutManagedMemoryOrConcurrentAccessIsSkipped) {
  const auto fault = decode_unified_memory_request(um_case("fault", 64 * kKiB, kGiB));
  EXPECT_FALSE(unified_memory_device_skip_reason(fault, capable_device()));

  auto no_managed = capable_device();
  no_managed.managed_memory = false;
  const auto a = unified_memory_device_skip_reason(fault, no_managed);
  ASSERT_TRUE(a);
  EXPECT_NE(a->find("cudaDevAttrManagedMemory = 0"), std::string::npos) << *a;

  auto no_concurrent = capable_device();
  no_concurrent.concurrent_managed_access = false;
  for (const char* method :
       {"fault", "prefetch", "advise_preferred_gpu", "advise_accessed_by", "gpu_to_cpu"}) {
    const auto why = unified_memory_device_skip_reason(
        decode_unified_memory_request(um_case(method, 64 * kKiB, kGiB)), no_concurrent);
    ASSERT_TRUE(why) << method;
    EXPECT_NE(why->find("cudaDevAttrConcurrentManagedAccess = 0"), std::string::npos) << *why;
    EXPECT_NE(why->find("GPU 0"), std::string::npos) << *why;
  }
}

TEST(UnifiedMemoryFamily, DirectHostAccessLeavesNoCpuFaultsToMeasure) {
  auto coherent = capable_device();
  coherent.direct_managed_access_from_host = true;
  coherent.pageable_uses_host_page_tables = true;
  const auto why = unified_memory_device_skip_reason(
      decode_unified_memory_request(um_case("gpu_to_cpu", 4 * kKiB, kGiB)), coherent);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cudaDevAttrDirectManagedMemAccessFromHost = 1"), std::string::npos) << *why;
  // The GPU-side methods still run there (their fault check tells whether faults happened).
  EXPECT_FALSE(unified_memory_device_skip_reason(
      decode_unified_memory_request(um_case("fault", 4 * kKiB, kGiB)), coherent));
}

TEST(UnifiedMemoryFamily, NeverAllocatesMoreManagedMemoryThanTheGpuHasFree) {
  const auto request = decode_unified_memory_request(um_case("fault", 64 * kKiB, 4 * kGiB));
  auto device = capable_device();
  device.free_device_bytes = (std::uint64_t{4} << 30) + kUnifiedMemoryDeviceHeadroom;
  EXPECT_FALSE(unified_memory_device_skip_reason(request, device));
  device.free_device_bytes -= 1;
  const auto why = unified_memory_device_skip_reason(request, device);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("4 GiB"), std::string::npos) << *why;
  EXPECT_NE(why->find("cudaMemGetInfo"), std::string::npos) << *why;
}

TEST(UnifiedMemoryFamily, ShippedScenarioExpandsToTheIssuesCases) {
  FamilyRegistry families;
  families.add(make_unified_memory_family());
  const auto file = load_scenario_file(
      std::string(PATHBENCH_SOURCE_DIR) + "/scenarios/unified_memory.json", families, {0});
  std::vector<std::string> ids;
  const Machine machine = gpu_machine();
  for (const auto& s : file.scenarios) {
    EXPECT_EQ(s.repetitions, 5) << s.name;
    EXPECT_TRUE(s.gate.is_null() || !s.gate.contains("threshold_pct")) << s.name;
    const auto cases = expand(s);
    EXPECT_NO_THROW(validate_cases(s, cases, *families.find("unified_memory"), machine, 0));
    for (const auto& c : cases) ids.push_back(c.id);
  }
  const std::string g = "/bytes=1073741824";
  EXPECT_EQ(ids, (std::vector<std::string>{
                     "unified_memory/method=fault/stride=4096" + g,
                     "unified_memory/method=fault/stride=65536" + g,
                     "unified_memory/method=fault/stride=2097152" + g,
                     "unified_memory/method=prefetch/stride=65536" + g,
                     "unified_memory/method=advise_preferred_gpu/stride=65536" + g,
                     "unified_memory/method=advise_accessed_by/stride=65536" + g,
                     "unified_memory/method=gpu_to_cpu/stride=4096" + g,
                     // No GPUs selected: one value, "none", so the cases exist and skip.
                     "unified_memory/pair=none/method=gpu_to_gpu/stride=4096" + g,
                     "unified_memory/pair=none/method=gpu_to_gpu/stride=65536" + g,
                     "unified_memory/pair=none/method=gpu_to_gpu/stride=2097152" + g,
                     "unified_memory/pair=none/method=prefetch_gpu_to_gpu/stride=65536" + g,
                 }));
}

// The um-gpu-to-gpu scenario of the shipped file, derived and validated on `machine`.
std::vector<CaseSpec> shipped_gpu_to_gpu_cases(const Machine& machine) {
  FamilyRegistry families;
  families.add(make_unified_memory_family());
  const auto file =
      load_scenario_file(std::string(PATHBENCH_SOURCE_DIR) + "/scenarios/unified_memory.json",
                         families, machine.numa_nodes, machine.selected_gpus);
  const Family& family = *families.find("unified_memory");
  for (const auto& s : file.scenarios) {
    if (s.name != "um-gpu-to-gpu") continue;
    auto cases = expand(s);
    derive_case_params(cases, family, machine);
    EXPECT_NO_THROW(validate_cases(s, cases, family, machine, 0));
    return cases;
  }
  ADD_FAILURE() << "no scenario um-gpu-to-gpu";
  return {};
}

TEST(UnifiedMemoryFamily, GpuToGpuOnARecordedNvlinkPairRunsBothDirections) {
  const Machine two = testing::recorded_nvlink_pair();
  const auto cases = shipped_gpu_to_gpu_cases(two);
  std::vector<std::string> ids;
  for (const auto& c : cases) ids.push_back(c.id);
  const std::string g = "/bytes=1073741824";
  EXPECT_EQ(ids, (std::vector<std::string>{
                     "unified_memory/pair=0-1/link=nvlink18/method=gpu_to_gpu/stride=4096" + g,
                     "unified_memory/pair=0-1/link=nvlink18/method=gpu_to_gpu/stride=65536" + g,
                     "unified_memory/pair=0-1/link=nvlink18/method=gpu_to_gpu/stride=2097152" + g,
                     "unified_memory/pair=0-1/link=nvlink18/method=prefetch_gpu_to_gpu/"
                     "stride=65536" +
                         g,
                     "unified_memory/pair=1-0/link=nvlink18/method=gpu_to_gpu/stride=4096" + g,
                     "unified_memory/pair=1-0/link=nvlink18/method=gpu_to_gpu/stride=65536" + g,
                     "unified_memory/pair=1-0/link=nvlink18/method=gpu_to_gpu/stride=2097152" + g,
                     "unified_memory/pair=1-0/link=nvlink18/method=prefetch_gpu_to_gpu/"
                     "stride=65536" +
                         g,
                 }));
  const auto family = make_unified_memory_family();
  for (const auto& c : cases) EXPECT_EQ(family->skip_reason(c, two, 0), std::nullopt) << c.id;
  // The pair's GPUs, never --device.
  EXPECT_EQ(family->skip_reason(cases.front(), two, 9), std::nullopt);
  // A pair naming a GPU --devices left out.
  Machine narrowed = two;
  narrowed.selected_gpus = {0};
  EXPECT_EQ(family->skip_reason(pair_case("0-1", "gpu_to_gpu", 4 * kKiB, kGiB), narrowed, 0),
            "needs two GPUs; --devices selected only GPU 0 of this machine's 2 (GPU 0: NVIDIA "
            "H200, GPU 1: NVIDIA H200)");
}

TEST(UnifiedMemoryFamily, GpuToGpuOnARecordedPcieMachineWithoutP2pIsNotSkippedForIt) {
  // Managed pages migrate between GPUs without peer access (the driver stages them): nothing to
  // skip on; the link in the id tells such a pair apart.
  const Machine pcie = testing::recorded_pcie_pair_without_p2p();
  const auto cases = shipped_gpu_to_gpu_cases(pcie);
  ASSERT_EQ(cases.size(), 8u);
  const auto family = make_unified_memory_family();
  for (const auto& c : cases) {
    EXPECT_EQ(c.str("link"), "host-staged") << c.id;
    EXPECT_EQ(family->skip_reason(c, pcie, 0), std::nullopt) << c.id;
  }
}

TEST(UnifiedMemoryFamily, GpuToGpuOnOneGpuIsSkippedWithTheReason) {
  const Machine one = testing::h200_machine(1);
  const auto cases = shipped_gpu_to_gpu_cases(one);
  ASSERT_EQ(cases.size(), 4u);
  const auto family = make_unified_memory_family();
  for (const auto& c : cases) {
    EXPECT_EQ(c.str("pair"), "none");
    EXPECT_EQ(c.str("link"), "none");
    EXPECT_EQ(family->skip_reason(c, one, 0),
              "needs two GPUs; this machine has 1 (GPU 0: NVIDIA H200)")
        << c.id;
  }
  // The single-GPU methods keep their ids and their one-GPU requirement.
  EXPECT_EQ(family->skip_reason(um_case("fault", 64 * kKiB, kGiB), one, 0), std::nullopt);
}

TEST(UnifiedMemoryFamily, GpuToGpuNeedsThePairAndNoOtherMethodTakesIt) {
  const auto family = make_unified_memory_family();
  for (const char* method : {"gpu_to_gpu", "prefetch_gpu_to_gpu"}) {
    EXPECT_FALSE(family->invalid_combination(pair_case("0-1", method, 64 * kKiB, kGiB))) << method;
    EXPECT_FALSE(family->invalid_combination(pair_case("none", method, 64 * kKiB, kGiB))) << method;
    const auto unpaired = family->invalid_combination(um_case(method, 64 * kKiB, kGiB));
    ASSERT_TRUE(unpaired) << method;
    EXPECT_EQ(unpaired->rfind("method=" + std::string(method) +
                                  " moves pages from one GPU to another and needs the pair axis",
                              0),
              0u)
        << *unpaired;
    const auto bad_pair = family->invalid_combination(pair_case("1-1", method, 64 * kKiB, kGiB));
    ASSERT_TRUE(bad_pair) << method;
    EXPECT_NE(bad_pair->find("pair \"1-1\" is not \"S-D\""), std::string::npos) << *bad_pair;
  }
  for (const char* method :
       {"fault", "prefetch", "advise_preferred_gpu", "advise_accessed_by", "gpu_to_cpu"}) {
    const auto why = family->invalid_combination(pair_case("0-1", method, 64 * kKiB, kGiB));
    ASSERT_TRUE(why) << method;
    EXPECT_EQ(*why,
              "the pair axis applies to method=gpu_to_gpu and prefetch_gpu_to_gpu only; "
              "method=" +
                  std::string(method) + " runs on the --device GPU");
  }
  // The stride rules hold for the new methods too.
  EXPECT_TRUE(family->invalid_combination(pair_case("0-1", "gpu_to_gpu", 12 * kKiB, kGiB)));

  // At load: exit 3 naming the file and the axes.
  FamilyRegistry families;
  families.add(make_unified_memory_family());
  const auto refused = [&](const std::string& axes) {
    try {
      const auto file =
          parse_scenario_file("bad_um.json",
                              R"({"schema": "pathbench.scenario/v1", "scenarios": [{"name": "x", )"
                              R"("family": "unified_memory", "axes": )" +
                                  axes + "}]}",
                              families, {0}, {0, 1});
      const auto& s = file.scenarios.at(0);
      validate_cases(s, expand(s), *families.find("unified_memory"), testing::h200_machine(2), 0);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string unpaired =
      refused(R"({"method": ["gpu_to_gpu"], "stride": ["64KiB"], "bytes": ["1GiB"]})");
  EXPECT_NE(unpaired.find("bad_um.json: /scenarios/0/axes: "), std::string::npos) << unpaired;
  EXPECT_NE(unpaired.find("needs the pair axis"), std::string::npos) << unpaired;
  const std::string paired_fault =
      refused(R"({"pair": {"gpu_pairs": "all"}, "method": ["fault"], "stride": ["64KiB"], )"
              R"("bytes": ["1GiB"]})");
  EXPECT_NE(paired_fault.find("bad_um.json: /scenarios/0/axes: "), std::string::npos)
      << paired_fault;
  EXPECT_NE(paired_fault.find("the pair axis applies to method=gpu_to_gpu"), std::string::npos)
      << paired_fault;
  EXPECT_EQ(refused(R"({"pair": {"gpu_pairs": "all"}, "method": ["prefetch_gpu_to_gpu"], )"
                    R"("stride": ["64KiB"], "bytes": ["1GiB"]})"),
            "");
}

TEST(UnifiedMemoryFamily, DecodesAGpuToGpuRequest) {
  const auto r = decode_unified_memory_request(pair_case("1-0", "gpu_to_gpu", 64 * kKiB, kGiB));
  EXPECT_EQ(r.method, UnifiedMemoryRequest::Method::kGpuToGpu);
  EXPECT_EQ(r.pair, "1-0");
  ASSERT_TRUE(r.gpus);
  EXPECT_EQ(*r.gpus, std::make_pair(1, 0));
  EXPECT_TRUE(r.between_gpus());
  EXPECT_FALSE(r.prefetches());
  EXPECT_EQ(r.touching_gpu(7), 0);  // D, whatever --device is
  EXPECT_EQ(r.estimated_migrated_bytes(), 16384u * 4096);
  const auto p =
      decode_unified_memory_request(pair_case("0-1", "prefetch_gpu_to_gpu", 64 * kKiB, kGiB));
  EXPECT_TRUE(p.between_gpus());
  EXPECT_TRUE(p.prefetches());
  EXPECT_EQ(p.touching_gpu(7), 1);
  EXPECT_EQ(p.estimated_migrated_bytes(), std::uint64_t{1} << 30);  // the whole buffer
  const auto plain = decode_unified_memory_request(um_case("prefetch", 64 * kKiB, kGiB));
  EXPECT_FALSE(plain.between_gpus());
  EXPECT_TRUE(plain.prefetches());
  EXPECT_TRUE(plain.pair.empty());
  EXPECT_EQ(plain.touching_gpu(7), 7);
}

TEST(UnifiedMemoryFamily, GpuToGpuExpectsDeviceToDeviceBytes) {
  const auto r = decode_unified_memory_request(pair_case("0-1", "gpu_to_gpu", 64 * kKiB, kGiB));
  const MigrationExpectation e = unified_memory_expectation(r);
  EXPECT_FALSE(e.to_host);
  EXPECT_TRUE(e.between_gpus);
  EXPECT_TRUE(e.must_migrate);
  EXPECT_TRUE(e.by_faults);  // nothing but D's touch kernel moves them
  EXPECT_EQ(e.least_bytes, 16384u * 4096);
  EXPECT_EQ(e.least_what, "the page of every touched address, from GPU 0 to GPU 1");

  // What moved between the GPUs counts; bytes to or from the host do not.
  UnifiedMemoryCounts host_only;
  host_only.bytes_h2d = kGiB;
  host_only.gpu_fault_groups = 40;
  const auto gaps = migration_gaps(e, host_only);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0],
            "CUPTI counted 0 B migrated from one GPU to the other, less than the 64 MiB of the "
            "page of every touched address, from GPU 0 to GPU 1");
  EXPECT_EQ(migrated_bytes(e, host_only), 64u * kMiB);
  UnifiedMemoryCounts moved;
  moved.bytes_d2d = 96 * kMiB;
  moved.gpu_fault_groups = 40;
  EXPECT_TRUE(migration_gaps(e, moved).empty());
  EXPECT_EQ(migrated_bytes(e, moved), 96u * kMiB);
  moved.gpu_fault_groups = 0;  // bytes by faulting work without a fault: records lost
  const auto lost = migration_gaps(e, moved);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_NE(lost[0].find("migrated from one GPU to the other by work that only faults, but no GPU "
                         "page-fault group"),
            std::string::npos)
      << lost[0];

  // A prefetch to D moves the whole buffer, faults or not.
  const auto prefetch = unified_memory_expectation(
      decode_unified_memory_request(pair_case("1-0", "prefetch_gpu_to_gpu", 64 * kKiB, kGiB)));
  EXPECT_TRUE(prefetch.between_gpus);
  EXPECT_FALSE(prefetch.by_faults);
  EXPECT_EQ(prefetch.least_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(prefetch.least_what, "the whole buffer, from GPU 1 to GPU 0");
  UnifiedMemoryCounts whole;
  whole.bytes_d2d = kGiB;
  EXPECT_TRUE(migration_gaps(prefetch, whole).empty());
  // The single-GPU methods are not between GPUs.
  EXPECT_FALSE(
      unified_memory_expectation(decode_unified_memory_request(um_case("fault", 4 * kKiB, kGiB)))
          .between_gpus);
}

CountedSample counted_d2d(double seconds, std::uint64_t groups, std::uint64_t d2d) {
  UnifiedMemoryCounts c;
  c.gpu_fault_groups = groups;
  c.bytes_d2d = d2d;
  return {seconds, c};
}

TEST(UnifiedMemoryFamily, GpuToGpuPassesMustMoveBytesBetweenTheGpus) {
  const auto r = decode_unified_memory_request(pair_case("0-1", "gpu_to_gpu", 2 * kMiB, kGiB));
  UnifiedMemoryPasses passes;
  passes.samples = {counted_d2d(0.01, 19, 32 * kMiB), counted_d2d(0.01, 21, 32 * kMiB)};
  auto checks = unified_memory_pass_checks(r, passes, "", true);
  ASSERT_EQ(checks.size(), 2u);  // um_counters, device_to_device_migration
  EXPECT_EQ(checks[0].name, "um_counters");
  EXPECT_EQ(checks[0].value["bytes_d2d"], nlohmann::ordered_json({32 * kMiB, 32 * kMiB}));
  EXPECT_EQ(checks[0].value["complete"], true);
  EXPECT_NE(checks[0].detail.find("bytes D2D [33554432,33554432]"), std::string::npos)
      << checks[0].detail;
  EXPECT_EQ(checks[1].name, "device_to_device_migration");
  EXPECT_TRUE(checks[1].passed) << checks[1].detail;
  EXPECT_EQ(checks[1].detail,
            "every sample migrated pages from GPU 0 to GPU 1 (device-to-device bytes); bytes D2D "
            "[33554432,33554432]");
  // A pass that moved nothing between the GPUs fails the case.
  passes.samples.push_back(counted_d2d(0.01, 0, 0));
  checks = unified_memory_pass_checks(r, passes, "", true);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_FALSE(checks[1].passed);
  EXPECT_NE(checks[1].detail.find("did not migrate from GPU 0 to GPU 1"), std::string::npos)
      << checks[1].detail;
  EXPECT_EQ(checks[1].value, nlohmann::ordered_json({32 * kMiB, 32 * kMiB, 0}));
  // Without counters there is nothing to judge: um_counters says why, no migration check.
  UnifiedMemoryPasses uncounted;
  uncounted.samples = {CountedSample{0.01, std::nullopt}};
  checks = unified_memory_pass_checks(r, uncounted, "CUPTI is busy", true);
  ASSERT_EQ(checks.size(), 1u);
  // The prefetch method adds its timing check after the migration check.
  const auto p =
      decode_unified_memory_request(pair_case("0-1", "prefetch_gpu_to_gpu", 64 * kKiB, kGiB));
  UnifiedMemoryPasses prefetched;
  prefetched.samples = {counted_d2d(0.01, 0, kGiB)};
  prefetched.prefetch_calls = {2e-6};
  checks = unified_memory_pass_checks(p, prefetched, "", true);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[1].name, "device_to_device_migration");
  EXPECT_TRUE(checks[1].passed);
  EXPECT_EQ(checks[2].name, "prefetch_timing");
  // A single-GPU method's um_counters has no device-to-device series (not counted there).
  const auto fault = decode_unified_memory_request(um_case("fault", 2 * kMiB, kGiB));
  UnifiedMemoryPasses faulted;
  faulted.samples = {counted(0.01, 19, 32 * kMiB)};
  checks = unified_memory_pass_checks(fault, faulted, "", true);
  EXPECT_FALSE(checks[0].value.contains("bytes_d2d"));
  EXPECT_EQ(checks[0].detail.find("D2D"), std::string::npos) << checks[0].detail;
}

TEST(UnifiedMemoryFamily, BothGpusOfAPairMustPageManagedMemoryInOnDemand) {
  const auto r = decode_unified_memory_request(pair_case("0-1", "gpu_to_gpu", 64 * kKiB, kGiB));
  auto source = capable_device();
  auto destination = capable_device();
  destination.device = 1;
  EXPECT_EQ(unified_memory_pair_skip_reason(r, source, destination), std::nullopt);

  auto old_source = source;
  old_source.concurrent_managed_access = false;
  const auto a = unified_memory_pair_skip_reason(r, old_source, destination);
  ASSERT_TRUE(a);
  EXPECT_EQ(
      a->rfind("method=gpu_to_gpu, pair 0-1: GPU 0 has cudaDevAttrConcurrentManagedAccess = 0", 0),
      0u)
      << *a;
  auto old_destination = destination;
  old_destination.concurrent_managed_access = false;
  const auto b = unified_memory_pair_skip_reason(r, source, old_destination);
  ASSERT_TRUE(b);
  EXPECT_NE(b->find("GPU 1 has cudaDevAttrConcurrentManagedAccess = 0"), std::string::npos) << *b;
  // The buffer must fit on each: never oversubscribed on either GPU.
  auto full = destination;
  full.free_device_bytes = kGiB;
  const auto c = unified_memory_pair_skip_reason(r, source, full);
  ASSERT_TRUE(c);
  EXPECT_NE(c->find("free on GPU 1 (cudaMemGetInfo)"), std::string::npos) << *c;
}

TEST(UnifiedMemoryFamily, WithoutCudaEveryCaseIsSkippedWithTheReason) {
#ifdef PATHBENCH_HAVE_CUDA
  GTEST_SKIP() << "built with CUDA: prepare() needs a device (tests/gpu covers it)";
#else
  const auto family = make_unified_memory_family();
  try {
    family->prepare(um_case("fault", 64 * kKiB, kMiB), gpu_machine(), 0);
    ADD_FAILURE() << "prepare() did not skip";
  } catch (const SkipCase& e) {
    EXPECT_FALSE(std::string(e.what()).empty());
  }
#endif
}

}  // namespace
}  // namespace pathbench::test_unified_memory_family
