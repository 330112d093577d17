#include <gtest/gtest.h>
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "bench/host_memory.hpp"
#include "core/errors.hpp"
#include "inventory/requirements.hpp"
#include "inventory/sysfs.hpp"
#include "placement/smaps.hpp"

namespace pathbench::test_host_memory_family {
namespace {

CaseSpec make_spec(nlohmann::ordered_json params, double min_time = 0.001) {
  CaseSpec spec;
  spec.family = "host_memory";
  spec.id = "host_memory/test";
  spec.file = "test.json";
  spec.pointer = "/scenarios/0";
  spec.params = std::move(params);
  spec.min_time = min_time;
  spec.repetitions = 3;
  return spec;
}

std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const auto open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

// A Machine that describes this host well enough for the family: nodes with memory and the CPUs
// of each that this thread may use.
Machine this_machine() {
  Machine m;
  m.thp_enabled = thp_mode();
  m.memlock_limit_bytes = UINT64_MAX;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed);
  if (numa_available() < 0) {
    m.numa_nodes = {0};
    m.node_cpus.emplace_back();
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &allowed)) m.node_cpus.back().push_back(cpu);
    }
    return m;
  }
  for (int node = 0; node <= numa_max_node(); ++node) {
    long long free_bytes = 0;
    if (numa_node_size64(node, &free_bytes) <= 0) continue;
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &allowed) && numa_node_of_cpu(cpu) == node) cpus.push_back(cpu);
    }
    m.numa_nodes.push_back(node);
    m.node_cpus.push_back(std::move(cpus));
  }
  return m;
}

Machine one_node_machine() {
  Machine m;
  m.numa_nodes = {0};
  m.node_cpus = {{0, 1}};
  m.thp_enabled = "madvise";
  m.hugetlb_free_pages = 0;
  m.memlock_limit_bytes = UINT64_MAX;
  return m;
}

bool has_check(const std::vector<Check>& checks, const std::string& name) {
  return std::any_of(checks.begin(), checks.end(), [&](const Check& c) { return c.name == name; });
}

void expect_all_passed(const std::vector<Check>& checks) {
  ASSERT_FALSE(checks.empty());
  for (const auto& c : checks) EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
}

TEST(HostMemoryFamily, DescribesItsAxes) {
  const auto family = make_host_memory_family();
  EXPECT_EQ(family->name(), "host_memory");
  std::vector<std::string> names;
  for (const auto& axis : family->axes()) names.push_back(axis.name);
  EXPECT_EQ(names, (std::vector<std::string>{"measure", "page", "cpu_node", "mem_node", "bytes",
                                             "pinned_pct", "policy", "memory_cap", "touch_node",
                                             "numa_balancing"}));
  EXPECT_EQ(family->axes()[5].min, 0);
  EXPECT_EQ(family->axes()[5].max, kMaxPinCapPct);
  const auto& measure = family->axes()[0];
  EXPECT_EQ(measure.kind, AxisSchema::Kind::kString);
  EXPECT_EQ(measure.allowed, (std::vector<std::string>{"memcpy", "first_touch", "mlock"}));
  EXPECT_EQ(family->axes()[1].allowed, (std::vector<std::string>{"4k", "thp", "hugetlb"}));
  const auto& bytes = family->axes()[4];
  EXPECT_EQ(bytes.kind, AxisSchema::Kind::kInteger);
  EXPECT_EQ(bytes.min, 4096);
  EXPECT_EQ(bytes.max, std::int64_t{1} << 40);
  EXPECT_EQ(family->axes()[2].min, 0);
  EXPECT_EQ(family->required_axes(), (std::vector<std::string>{"measure", "bytes"}));
}

// What loading a scenario file rejects for one case: a missing required axis, a value outside
// its axis's schema, or a combination the family refuses. The reason, else nothing.
std::optional<std::string> rejected(const Family& family, const CaseSpec& spec) {
  for (const auto& axis : family.required_axes()) {
    if (!spec.has(axis)) return "axis '" + axis + "' is required";
  }
  for (const auto& schema : family.axes()) {
    if (!spec.has(schema.name)) continue;
    if (auto why = check_axis_value(schema, spec.params.at(schema.name))) return why;
  }
  return family.invalid_combination(spec);
}

TEST(HostMemoryFamily, InvalidCombinations) {
  const auto family = make_host_memory_family();
  EXPECT_FALSE(rejected(*family, make_spec({{"measure", "memcpy"}, {"bytes", 4096}})));
  EXPECT_FALSE(rejected(*family, make_spec({{"measure", "mlock"},
                                            {"page", "thp"},
                                            {"cpu_node", 0},
                                            {"mem_node", 0},
                                            {"bytes", 1 << 20}})));
  EXPECT_FALSE(rejected(
      *family,
      make_spec(
          {{"measure", "first_touch"}, {"page", "hugetlb"}, {"mem_node", 0}, {"bytes", 1 << 20}})));
  // The kernel's mlock skips hugetlb mappings: nothing would be measured.
  const auto mlock_hugetlb =
      rejected(*family, make_spec({{"measure", "mlock"}, {"page", "hugetlb"}, {"bytes", 1 << 20}}));
  ASSERT_TRUE(mlock_hugetlb);
  EXPECT_NE(mlock_hugetlb->find("hugetlb"), std::string::npos);
  EXPECT_TRUE(rejected(*family, make_spec({{"bytes", 4096}})));
  EXPECT_TRUE(rejected(*family, make_spec({{"measure", "memcpy"}})));
  EXPECT_TRUE(rejected(*family, make_spec({{"measure", "memcpy"}, {"bytes", 100}})));
  EXPECT_TRUE(
      rejected(*family, make_spec({{"measure", "memcpy"}, {"page", "2m"}, {"bytes", 4096}})));
  EXPECT_TRUE(
      rejected(*family, make_spec({{"measure", "memcpy"}, {"mem_node", -1}, {"bytes", 4096}})));
}

TEST(HostMemoryFamily, MemoryNeeds) {
  const auto family = make_host_memory_family();
  EXPECT_EQ(family->memory_needs(make_spec({{"measure", "memcpy"}, {"bytes", 1 << 20}})).host_bytes,
            2u << 20);
  EXPECT_EQ(
      family->memory_needs(make_spec({{"measure", "first_touch"}, {"bytes", 1 << 20}})).host_bytes,
      1u << 20);
  EXPECT_EQ(
      family->memory_needs(make_spec({{"measure", "mlock"}, {"bytes", 1 << 20}})).device_bytes, 0u);
  // A THP buffer occupies whole 2 MiB pages.
  EXPECT_EQ(family
                ->memory_needs(
                    make_spec({{"measure", "memcpy"}, {"page", "thp"}, {"bytes", (2 << 20) + 1}}))
                .host_bytes,
            2u * (4u << 20));
}

TEST(HostMemoryFamily, SkipsNonexistentNodes) {
  const auto family = make_host_memory_family();
  const Machine m = one_node_machine();
  EXPECT_FALSE(family->skip_reason(
      make_spec({{"measure", "memcpy"}, {"cpu_node", 0}, {"mem_node", 0}, {"bytes", 4096}}), m, 0));
  const auto cpu = family->skip_reason(
      make_spec({{"measure", "memcpy"}, {"cpu_node", 1}, {"bytes", 4096}}), m, 0);
  ASSERT_TRUE(cpu);
  EXPECT_EQ(*cpu, "NUMA node 1 does not exist on this machine (nodes: 0)");
  const auto mem = family->skip_reason(
      make_spec({{"measure", "first_touch"}, {"cpu_node", 0}, {"mem_node", 3}, {"bytes", 4096}}), m,
      0);
  ASSERT_TRUE(mem);
  EXPECT_EQ(*mem, "NUMA node 3 does not exist on this machine (nodes: 0)");
}

TEST(HostMemoryFamily, SkipsHugetlbWithoutFreePages) {
  const auto family = make_host_memory_family();
  Machine m = one_node_machine();
  const auto spec = make_spec({{"measure", "memcpy"}, {"page", "hugetlb"}, {"bytes", 3 << 20}});
  const auto reason = family->skip_reason(spec, m, 0);
  ASSERT_TRUE(reason);
  // Two buffers of two 2 MiB pages each.
  EXPECT_NE(reason->find("needs 4 free hugetlb pages"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("HugePages_Free=0"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("/proc/sys/vm/nr_hugepages"), std::string::npos) << *reason;
  m.hugetlb_free_pages = 4;
  EXPECT_FALSE(family->skip_reason(spec, m, 0));
  m.hugetlb_page_bytes = 1u << 30;  // 1 GiB pages: one per buffer
  m.hugetlb_free_pages = 1;
  EXPECT_TRUE(family->skip_reason(spec, m, 0));
  m.hugetlb_free_pages = 2;
  EXPECT_FALSE(family->skip_reason(spec, m, 0));
}

TEST(HostMemoryFamily, SkipsThpWhenDisabled) {
  const auto family = make_host_memory_family();
  Machine m = one_node_machine();
  const auto spec = make_spec({{"measure", "first_touch"}, {"page", "thp"}, {"bytes", 2 << 20}});
  EXPECT_FALSE(family->skip_reason(spec, m, 0));
  m.thp_enabled = "never";
  const auto reason = family->skip_reason(spec, m, 0);
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("never"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("transparent_hugepage/enabled"), std::string::npos) << *reason;
}

TEST(HostMemoryFamily, SkipsMlockBeyondTheLimit) {
  const auto family = make_host_memory_family();
  Machine m = one_node_machine();
  const auto spec = make_spec({{"measure", "mlock"}, {"bytes", 64 << 20}});
  EXPECT_FALSE(family->skip_reason(spec, m, 0));  // unlimited
  m.memlock_limit_bytes = 8u << 20;
  const auto reason = family->skip_reason(spec, m, 0);
  if (process_has_ipc_lock()) {
    // CAP_IPC_LOCK lifts RLIMIT_MEMLOCK: the case can run.
    EXPECT_FALSE(reason) << *reason;
  } else {
    ASSERT_TRUE(reason);
    EXPECT_NE(reason->find("ulimit -l"), std::string::npos) << *reason;
  }
  m.memlock_limit_bytes = 64u << 20;
  EXPECT_FALSE(family->skip_reason(spec, m, 0));
  // Other measures do not lock.
  EXPECT_FALSE(family->skip_reason(make_spec({{"measure", "memcpy"}, {"bytes", 64 << 20}}), m, 0));
}

TEST(HostMemoryFamily, MemcpyMeasuresAndVerifies) {
  const auto family = make_host_memory_family();
  const Machine m = this_machine();
  ASSERT_FALSE(m.numa_nodes.empty());
  const int node = m.numa_nodes.front();
  const auto spec = make_spec(
      {{"measure", "memcpy"}, {"cpu_node", node}, {"mem_node", node}, {"bytes", 1 << 20}});
  ASSERT_FALSE(family->skip_reason(spec, m, 0));
  const auto bench = family->prepare(spec, m, 0);
  EXPECT_EQ(bench->timing_method(), TimingMethod::kHostSteadyClock);
  const auto metrics = bench->metrics();
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_EQ(metrics[0].name, "bandwidth");
  EXPECT_EQ(metrics[0].unit, "GB/s");
  EXPECT_EQ(metrics[0].better, Better::kHigher);
  EXPECT_EQ(metrics[1].name, "time_per_copy");
  EXPECT_EQ(metrics[1].better, Better::kLower);

  bench->warm_up(spec.min_time);
  const std::uint64_t ops = bench->operations_per_sample();
  EXPECT_GE(ops, 1u);
  EXPECT_EQ(bench->bytes_per_sample(), ops * (1u << 20));
  for (int rep = 0; rep < 2; ++rep) {
    const Sample sample = bench->measure();
    ASSERT_EQ(sample.values.size(), 2u);
    EXPECT_GT(sample.seconds, 0.0);
    EXPECT_TRUE(std::isfinite(sample.values[0]));
    EXPECT_GT(sample.values[0], 0.0);
    EXPECT_NEAR(sample.values[1], sample.seconds / static_cast<double>(ops), 1e-12);
    EXPECT_NEAR(sample.values[0], (1u << 20) * static_cast<double>(ops) / sample.seconds / 1e9,
                1e-6 * sample.values[0]);
    bench->verify();
  }
  const auto checks = bench->checks();
  expect_all_passed(checks);
  for (const char* name : {"destination_pattern", "source_placement", "destination_placement",
                           "source_huge_backing", "destination_huge_backing", "thread_placement"}) {
    EXPECT_TRUE(has_check(checks, name)) << name;
  }
}

TEST(HostMemoryFamily, MemcpyThpIsHugeBacked) {
  const std::string mode = thp_mode();
  if (mode != "always" && mode != "madvise") GTEST_SKIP() << "THP mode is '" << mode << "'";
  const auto family = make_host_memory_family();
  const Machine m = this_machine();
  const auto bench = family->prepare(
      make_spec({{"measure", "memcpy"}, {"page", "thp"}, {"bytes", 4 << 20}}), m, 0);
  bench->warm_up(0.001);
  bench->measure();
  bench->verify();
  expect_all_passed(bench->checks());
  EXPECT_FALSE(has_check(bench->checks(), "thread_placement"));  // no cpu_node: nothing to check
}

const Check* find_check(const std::vector<Check>& checks, const std::string& name) {
  for (const auto& c : checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// A real loss of huge backing between measure() and verify(): changing the protection of one
// 4 KiB page inside each huge page makes the kernel split the PMD mappings (smaps then counts no
// AnonHugePages), while the data stays intact for the pattern check.
TEST(HostMemoryFamily, FailedCheckIsVisibleAndStaysFailed) {
  const std::string mode = thp_mode();
  if (mode != "always" && mode != "madvise") GTEST_SKIP() << "THP mode is '" << mode << "'";
  const auto family = make_host_memory_family();
  const auto bench = family->prepare(
      make_spec({{"measure", "memcpy"}, {"page", "thp"}, {"bytes", 4 << 20}}), this_machine(), 0);
  bench->warm_up(0.001);
  bench->measure();
  bench->verify();
  expect_all_passed(bench->checks());

  bench->measure();
  const auto destination = host_memory_destination_for_testing(*bench);
  for (std::size_t off = 0; off < destination.size(); off += 2u << 20) {
    ASSERT_EQ(mprotect(destination.data() + off, 4096, PROT_READ), 0);
  }
  bench->verify();  // the copy itself is still correct
  for (std::size_t off = 0; off < destination.size(); off += 2u << 20) {
    ASSERT_EQ(mprotect(destination.data() + off, 4096, PROT_READ | PROT_WRITE), 0);
  }
  const std::vector<Check> checks = bench->checks();
  const Check* split = find_check(checks, "destination_huge_backing");
  ASSERT_NE(split, nullptr);
  EXPECT_FALSE(split->passed) << split->detail;
  EXPECT_NE(split->detail.find("repetition 2"), std::string::npos) << split->detail;
  EXPECT_TRUE(find_check(checks, "source_huge_backing")->passed);

  // Collapse the pages back (MADV_COLLAPSE, Linux 6.1+): the next repetition passes on its own,
  // but the earlier failure must not disappear from what the core reads.
  constexpr int kMadvCollapse = 25;
  if (madvise(destination.data(), destination.size(), kMadvCollapse) != 0) {
    GTEST_SKIP() << "MADV_COLLAPSE unavailable; the sticky part is not checked";
  }
  const auto collapsed = query_huge_backing(destination.data(), destination.size());
  ASSERT_TRUE(collapsed.has_value());
  ASSERT_GE(collapsed->fraction(), 0.9) << collapsed->describe();
  bench->measure();
  bench->verify();
  const std::vector<Check> later = bench->checks();
  const Check* after = find_check(later, "destination_huge_backing");
  ASSERT_NE(after, nullptr);
  EXPECT_FALSE(after->passed);
  EXPECT_NE(after->detail.find("repetition 2"), std::string::npos) << after->detail;
}

TEST(HostMemoryFamily, CorruptedDestinationFailsVerify) {
  const auto family = make_host_memory_family();
  const auto bench =
      family->prepare(make_spec({{"measure", "memcpy"}, {"bytes", 1 << 20}}), this_machine(), 0);
  bench->warm_up(0.001);
  bench->measure();
  bench->verify();
  bench->measure();
  auto destination = host_memory_destination_for_testing(*bench);
  destination[12345] ^= std::byte{0x5a};
  try {
    bench->verify();
    FAIL() << "verify accepted a corrupted destination";
  } catch (const CaseFailure& e) {
    EXPECT_NE(std::string(e.what()).find("12345"), std::string::npos) << e.what();
  }
}

TEST(HostMemoryFamily, FirstTouch4k) {
  const auto family = make_host_memory_family();
  const Machine m = this_machine();
  const int node = m.numa_nodes.front();
  const auto bench = family->prepare(
      make_spec(
          {{"measure", "first_touch"}, {"cpu_node", node}, {"mem_node", node}, {"bytes", 4 << 20}}),
      m, 0);
  const auto metrics = bench->metrics();
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_EQ(metrics[0].name, "seconds_per_gib");
  EXPECT_EQ(metrics[0].unit, "s/GiB");
  EXPECT_EQ(metrics[1].name, "time_per_page_4k");
  EXPECT_EQ(bench->operations_per_sample(), 1u);
  EXPECT_EQ(bench->bytes_per_sample(), 4u << 20);
  bench->warm_up(0.001);
  for (int rep = 0; rep < 2; ++rep) {
    const Sample sample = bench->measure();
    ASSERT_EQ(sample.values.size(), 2u);
    EXPECT_GT(sample.values[0], 0.0);
    EXPECT_TRUE(std::isfinite(sample.values[0]));
    EXPECT_NEAR(sample.values[1], sample.seconds / 1024.0, 1e-12);
    bench->verify();
    expect_all_passed(bench->checks());
  }
  EXPECT_TRUE(has_check(bench->checks(), "buffer_huge_backing"));
  EXPECT_TRUE(has_check(bench->checks(), "buffer_placement"));
  EXPECT_TRUE(has_check(bench->checks(), "thread_placement"));
  EXPECT_THROW(host_memory_destination_for_testing(*bench), std::invalid_argument);
}

TEST(HostMemoryFamily, FirstTouchThp) {
  const std::string mode = thp_mode();
  if (mode != "always" && mode != "madvise") GTEST_SKIP() << "THP mode is '" << mode << "'";
  const auto family = make_host_memory_family();
  const auto bench =
      family->prepare(make_spec({{"measure", "first_touch"}, {"page", "thp"}, {"bytes", 8 << 20}}),
                      this_machine(), 0);
  EXPECT_EQ(bench->metrics()[1].name, "time_per_page_2m");
  bench->warm_up(0.001);
  const Sample sample = bench->measure();
  EXPECT_GT(sample.values[0], 0.0);
  EXPECT_NEAR(sample.values[1], sample.seconds / 4.0, 1e-12);
  bench->verify();
  expect_all_passed(bench->checks());
}

TEST(HostMemoryFamily, Mlock) {
  const auto family = make_host_memory_family();
  const auto spec = make_spec({{"measure", "mlock"}, {"bytes", 1 << 20}});
  const Machine m = this_machine();
  std::unique_ptr<CaseBench> bench;
  try {
    bench = family->prepare(spec, m, 0);
  } catch (const SkipCase& e) {
    GTEST_SKIP() << e.what();
  }
  ASSERT_EQ(bench->metrics().size(), 1u);
  EXPECT_EQ(bench->metrics()[0].name, "seconds_per_gib");
  bench->warm_up(0.001);
  const Sample sample = bench->measure();
  EXPECT_GT(sample.values[0], 0.0);
  bench->verify();
  expect_all_passed(bench->checks());
  EXPECT_TRUE(has_check(bench->checks(), "buffer_locked"));
}

TEST(HostMemoryFamily, PrepareSkipsWhatTheMachineCannotProvide) {
  const auto family = make_host_memory_family();
  const Machine m = this_machine();
  const int missing = (numa_available() >= 0 ? numa_max_node() : 0) + 1;
  EXPECT_THROW(
      family->prepare(make_spec({{"measure", "memcpy"}, {"mem_node", missing}, {"bytes", 4096}}), m,
                      0),
      SkipCase);
  EXPECT_THROW(
      family->prepare(make_spec({{"measure", "memcpy"}, {"cpu_node", missing}, {"bytes", 4096}}), m,
                      0),
      SkipCase);
}

}  // namespace
}  // namespace pathbench::test_host_memory_family

namespace pathbench::test_host_memory_family {
namespace {

// VmLck of this process (/proc/self/status), in bytes.
std::uint64_t locked_bytes_of_process() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmLck:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

Machine pressure_machine(std::uint64_t total, std::uint64_t available, int cap) {
  Machine m = one_node_machine();
  m.mem_total_bytes = total;
  m.mem_available_bytes = available;
  m.pin_cap_pct = cap;
  return m;
}

TEST(HostMemoryPinningPressure, ShareIsWholePagesOfMemTotal) {
  EXPECT_EQ(pinned_share_bytes(pressure_machine(std::uint64_t{64} << 30, 0, 50), 25),
            std::uint64_t{16} << 30);
  // 1 % of 10 pages of 4 KiB: no whole page.
  EXPECT_EQ(pinned_share_bytes(pressure_machine(10 * 4096, 0, 50), 1), 0u);
  EXPECT_EQ(pinned_share_bytes(pressure_machine(1000 * 4096, 0, 50), 10), 100u * 4096);
  EXPECT_EQ(pinned_share_bytes(pressure_machine(1000 * 4096, 0, 50), 0), 0u);
}

TEST(HostMemoryPinningPressure, ValuesOutsideZeroToNinetyAreBadInput) {
  const auto family = make_host_memory_family();
  const auto spec = [](int pct) {
    return make_spec({{"measure", "memcpy"}, {"bytes", 4096}, {"pinned_pct", pct}});
  };
  EXPECT_FALSE(rejected(*family, spec(0)));
  EXPECT_FALSE(rejected(*family, spec(kMaxPinCapPct)));
  EXPECT_TRUE(rejected(*family, spec(kMaxPinCapPct + 1)));
  EXPECT_TRUE(rejected(*family, spec(-1)));
}

TEST(HostMemoryPinningPressure, CapMemAvailableAndMemTotalDecideTheSkip) {
  const auto family = make_host_memory_family();
  const std::uint64_t gib = std::uint64_t{1} << 30;
  const auto spec = [](int pct) {
    return make_spec({{"measure", "memcpy"}, {"bytes", 1 << 20}, {"pinned_pct", pct}});
  };
  // At the default cap, half of a 64 GiB node with 60 GiB available runs.
  EXPECT_FALSE(family->skip_reason(spec(50), pressure_machine(64 * gib, 60 * gib, 50), 0));
  // Above the cap: skipped, naming the cap and the flag that raises it.
  const auto above = family->skip_reason(spec(60), pressure_machine(64 * gib, 60 * gib, 50), 0);
  ASSERT_TRUE(above);
  EXPECT_NE(above->find("cap of 50 %"), std::string::npos) << *above;
  EXPECT_NE(above->find("--max-pinned-pct 60"), std::string::npos) << *above;
  EXPECT_FALSE(family->skip_reason(spec(60), pressure_machine(64 * gib, 60 * gib, 60), 0));
  // The share, the case's buffers and 1 GiB for the system must fit in MemAvailable: 32 GiB +
  // 2 MiB + 1 GiB does not fit in 33 GiB.
  const auto short_memory =
      family->skip_reason(spec(50), pressure_machine(64 * gib, 33 * gib, 50), 0);
  ASSERT_TRUE(short_memory);
  EXPECT_NE(short_memory->find("MemAvailable is 33"), std::string::npos) << *short_memory;
  EXPECT_FALSE(family->skip_reason(spec(50), pressure_machine(64 * gib, 34 * gib, 50), 0));
  // Without MemTotal there is no share to pin.
  const auto unknown = family->skip_reason(spec(10), pressure_machine(0, 60 * gib, 50), 0);
  ASSERT_TRUE(unknown);
  EXPECT_NE(unknown->find("MemTotal"), std::string::npos) << *unknown;
  if (!process_has_ipc_lock()) {
    Machine limited = pressure_machine(64 * gib, 60 * gib, 50);
    limited.memlock_limit_bytes = 64u << 20;
    const auto locked = family->skip_reason(spec(10), limited, 0);
    ASSERT_TRUE(locked);
    EXPECT_NE(locked->find("RLIMIT_MEMLOCK"), std::string::npos) << *locked;
  }
}

TEST(HostMemoryPinningPressure, MemcpyRunsWithTheShareLockedAndReleasesIt) {
  Machine m = this_machine();
  const MemInfo memory = read_meminfo();
  ASSERT_GT(memory.mem_total_bytes, 0u);
  m.mem_total_bytes = memory.mem_total_bytes;
  m.mem_available_bytes = memory.mem_available_bytes;
  // 1 %: a real lock of tens to hundreds of MiB, quick enough for a unit test.
  const auto spec = make_spec({{"measure", "memcpy"}, {"bytes", 1 << 20}, {"pinned_pct", 1}});
  const auto family = make_host_memory_family();
  if (auto why = family->skip_reason(spec, m, 0)) GTEST_SKIP() << *why;
  const std::uint64_t share = pinned_share_bytes(m, 1);
  const std::uint64_t locked_before = locked_bytes_of_process();
  {
    std::unique_ptr<CaseBench> bench;
    try {
      bench = family->prepare(spec, m, 0);
    } catch (const SkipCase& e) {
      GTEST_SKIP() << e.what();
    }
    EXPECT_GE(locked_bytes_of_process(), locked_before + share);
    bench->warm_up(spec.min_time);
    const Sample sample = bench->measure();
    EXPECT_GT(sample.values.at(0), 0.0);
    bench->verify();
    const auto checks = bench->checks();
    expect_all_passed(checks);
    const auto held = std::find_if(checks.begin(), checks.end(),
                                   [](const Check& c) { return c.name == "pinning_pressure"; });
    ASSERT_NE(held, checks.end());
    EXPECT_EQ(held->value.at("pinned_pct"), 1);
    EXPECT_EQ(held->value.at("pinned_bytes"), share);
    EXPECT_GE(held->value.at("locked_bytes").get<std::uint64_t>(), share);
    EXPECT_EQ(held->value.at("cap_pct"), kDefaultPinCapPct);
    // The memcpy's own checks are still there.
    EXPECT_TRUE(has_check(checks, "destination_pattern"));
  }
  EXPECT_EQ(locked_bytes_of_process(), locked_before);
}

TEST(HostMemoryPinningPressure, ZeroPercentIsTheReferenceAndPinsNothing) {
  Machine m = this_machine();
  m.mem_total_bytes = read_meminfo().mem_total_bytes;
  const auto spec = make_spec({{"measure", "first_touch"}, {"bytes", 1 << 20}, {"pinned_pct", 0}});
  const auto family = make_host_memory_family();
  ASSERT_FALSE(family->skip_reason(spec, m, 0));
  const std::uint64_t locked_before = locked_bytes_of_process();
  const auto bench = family->prepare(spec, m, 0);
  EXPECT_EQ(locked_bytes_of_process(), locked_before);
  bench->warm_up(spec.min_time);
  bench->measure();
  bench->verify();
  const auto checks = bench->checks();
  const auto held = std::find_if(checks.begin(), checks.end(),
                                 [](const Check& c) { return c.name == "pinning_pressure"; });
  ASSERT_NE(held, checks.end());
  EXPECT_TRUE(held->passed);
  EXPECT_EQ(held->value.at("pinned_bytes"), 0);
  EXPECT_NE(held->detail.find("nothing pinned"), std::string::npos) << held->detail;
}

}  // namespace
}  // namespace pathbench::test_host_memory_family
