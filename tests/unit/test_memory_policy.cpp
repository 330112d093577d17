// NUMA policies and their failure (issue 30.2): the share of misplaced pages on synthetic counts
// with known answers, every policy's outcome on this machine (pages counted per node), the
// host_memory axes that ask for them (exit 3 wording), where this process's memory cgroup is on
// recorded /proc files, and the bind failure path for real: a child in a capped memory cgroup.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "bench/host_memory.hpp"
#include "case_spec.hpp"
#include "core/errors.hpp"
#include "placement/capped_touch.hpp"
#include "placement/host_buffer.hpp"
#include "placement/memory_cgroup.hpp"
#include "placement/memory_policy.hpp"
#include "placement/numa_balancing.hpp"
#include "placement/page_placement.hpp"
#include "scenario/scenario_file.hpp"
#include "temp_dir.hpp"
#include "test_machines.hpp"

namespace pathbench::test_memory_policy {
namespace {

using Mode = MemoryPolicyMode;

TEST(MisplacedShare, CountsPagesOffTheTargetNode) {
  const std::map<int, std::uint64_t> split = {{0, 90}, {1, 10}};
  EXPECT_DOUBLE_EQ(misplaced_share(split, Mode::kBind, 0, {}), 0.10);
  EXPECT_DOUBLE_EQ(misplaced_share(split, Mode::kPreferred, 1, {}), 0.90);
  EXPECT_DOUBLE_EQ(misplaced_share(split, Mode::kLocal, 0, {}), 0.10);
  EXPECT_DOUBLE_EQ(misplaced_share({{0, 4}}, Mode::kBind, 0, {}), 0.0);
  EXPECT_DOUBLE_EQ(misplaced_share({}, Mode::kBind, 0, {}), 0.0);  // nothing placed
  EXPECT_DOUBLE_EQ(misplaced_share(split, Mode::kBind, std::nullopt, {}), 1.0);
}

TEST(MisplacedShare, InterleaveIsThePagesThatWouldMoveToSpreadEvenly) {
  EXPECT_DOUBLE_EQ(misplaced_share({{0, 50}, {1, 50}}, Mode::kInterleave, {}, {0, 1}), 0.0);
  EXPECT_DOUBLE_EQ(misplaced_share({{0, 75}, {1, 25}}, Mode::kInterleave, {}, {0, 1}), 0.25);
  // All on one node of four: three quarters must move.
  EXPECT_DOUBLE_EQ(misplaced_share({{2, 400}}, Mode::kInterleave, {}, {0, 1, 2, 3}), 0.75);
  // Pages outside the set all count.
  EXPECT_DOUBLE_EQ(misplaced_share({{0, 45}, {1, 45}, {2, 10}}, Mode::kInterleave, {}, {0, 1}),
                   0.10);
  EXPECT_DOUBLE_EQ(misplaced_share({{0, 7}}, Mode::kInterleave, {}, {0}), 0.0);
}

TEST(MemoryPolicy, EveryPolicyPlacesPagesOnThisMachinesFirstNode) {
  // This machine's first node with memory holds a 4 MiB buffer under every policy.
  for (const Mode mode : {Mode::kBind, Mode::kPreferred, Mode::kInterleave, Mode::kLocal}) {
    HostBufferRequest r{4u << 20, PageType::k4K, 0};
    r.policy = mode;
    if (mode == Mode::kInterleave) {
      r.numa_node.reset();
      r.interleave_nodes = {0};
    }
    HostBuffer buffer(r);
    buffer.touch();
    const PagePlacement placed = query_page_placement(buffer.data(), buffer.size(), 1u << 20);
    EXPECT_EQ(placed.pages_sampled, 1024u) << policy_name(mode);
    EXPECT_EQ(placed.pages_per_node.at(0), 1024u) << policy_name(mode) << ": " << placed.describe();
    EXPECT_DOUBLE_EQ(misplaced_share(placed.pages_per_node, mode, 0, {0}), 0.0);
  }
}

TEST(MemoryPolicy, ABadPolicyRequestNamesTheCall) {
  void* p = ::mmap(nullptr, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  try {
    apply_memory_policy(p, 1u << 20, Mode::kPreferred, {0, 1});
    ADD_FAILURE() << "two nodes for preferred were accepted";
  } catch (const SystemError& e) {
    EXPECT_NE(std::string(e.what()).find("mbind(preferred to NUMA nodes 0,1"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(apply_memory_policy(p, 1u << 20, Mode::kInterleave, {}), SystemError);
  EXPECT_THROW(apply_memory_policy(p, 1u << 20, Mode::kBind, {-1}), SystemError);
  EXPECT_NO_THROW(apply_memory_policy(p, 1u << 20, Mode::kLocal, {}));
  ::munmap(p, 1u << 20);
}

std::optional<std::string> host_memory_error(nlohmann::ordered_json params) {
  return make_host_memory_family()->case_error(
      testing::scenario_case("host_memory", std::move(params)));
}

TEST(MemoryPolicy, TheAxesRefuseWhatDoesNotApply) {
  const nlohmann::ordered_json touch = {{"measure", "first_touch"}, {"bytes", 1 << 20}};
  auto with = [&](nlohmann::ordered_json extra) {
    auto p = touch;
    for (auto& [k, v] : extra.items()) p[k] = v;
    return host_memory_error(p);
  };
  EXPECT_EQ(with({{"policy", "bind"}}), "policy bind needs mem_node (its node)");
  EXPECT_EQ(with({{"policy", "preferred"}}), "policy preferred needs mem_node (its node)");
  EXPECT_EQ(with({{"policy", "interleave"}, {"mem_node", 0}}),
            "policy interleave spreads pages over every node with memory: mem_node does not "
            "apply");
  EXPECT_EQ(with({{"policy", "local"}}),
            "policy local puts pages on the touching thread's node: it needs cpu_node");
  EXPECT_EQ(with({{"policy", "local"}, {"cpu_node", 0}, {"mem_node", 0}}),
            "policy local sets no node: mem_node does not apply");
  EXPECT_EQ(with({{"policy", "preferred"}, {"mem_node", 0}}), std::nullopt);
  EXPECT_EQ(with({{"policy", "bind"}, {"mem_node", 0}, {"memory_cap", 1 << 20}}),
            "memory_cap must be below bytes: a cap the buffer fits under changes nothing");
  EXPECT_EQ(
      with({{"policy", "bind"}, {"mem_node", 0}, {"memory_cap", 1 << 19}, {"page", "hugetlb"}}),
      "memory_cap needs page 4k or thp: hugetlb pages are charged to the hugetlb "
      "controller, not to the memory cgroup");
  EXPECT_EQ(host_memory_error({{"measure", "memcpy"}, {"bytes", 1 << 20}, {"memory_cap", 4096}}),
            "memory_cap applies only to measure first_touch");
  EXPECT_EQ(with({{"policy", "bind"}, {"mem_node", 0}, {"memory_cap", 1 << 19}}), std::nullopt);
}

TEST(MemoryPolicy, ABadValueInAScenarioFileNamesTheFileAndTheAxis) {
  FamilyRegistry families;
  families.add(make_host_memory_family());
  const auto load = [&](const std::string& axes) {
    try {
      parse_scenario_file("h.json",
                          R"({"schema": "pathbench.scenario/v1", "scenarios": [{"name": "s", )"
                          R"("family": "host_memory", "axes": )" +
                              axes + "}]}",
                          families, {0});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string policy =
      load(R"({"measure": ["first_touch"], "bytes": [65536], "policy": ["spread"]})");
  EXPECT_EQ(policy.rfind("h.json: /scenarios/0/axes/policy", 0), 0u) << policy;
  EXPECT_NE(policy.find("interleave"), std::string::npos) << policy;
  const std::string cap =
      load(R"({"measure": ["first_touch"], "bytes": [65536], "memory_cap": ["1KiB"]})");
  EXPECT_EQ(cap.rfind("h.json: /scenarios/0/axes/memory_cap", 0), 0u) << cap;
}

TEST(MemoryPolicy, APolicyAddsMisplacedShareAndACapItsOutcome) {
  HostMemoryParams p;
  p.measure = HostMemoryParams::Measure::kFirstTouch;
  EXPECT_EQ(metric_names_of(host_memory_metrics(p, "4k")),
            (std::vector<std::string>{"seconds_per_gib", "time_per_page_4k"}));
  p.policy = Mode::kPreferred;
  EXPECT_EQ(metric_names_of(host_memory_metrics(p, "4k")),
            (std::vector<std::string>{"seconds_per_gib", "time_per_page_4k", "misplaced_share"}));
  p.memory_cap = 1 << 20;
  EXPECT_EQ(metric_names_of(host_memory_metrics(p, "4k")),
            (std::vector<std::string>{"touched_share", "oom_kills", "time_to_end"}));
}

TEST(PolicyOutcome, OnlyABindThatLeftItsNodeFails) {
  HostMemoryParams p;
  p.mem_node = 0;
  p.policy = Mode::kPreferred;
  PagePlacement spilled;
  spilled.pages_sampled = 100;
  spilled.pages_per_node = {{0, 70}, {1, 30}};
  const Check preferred = policy_outcome_check(p, spilled);
  EXPECT_TRUE(preferred.passed);
  EXPECT_NE(preferred.detail.find("preferred node 0"), std::string::npos) << preferred.detail;
  EXPECT_NE(preferred.detail.find("30.0 % of the pages not where the policy puts them"),
            std::string::npos)
      << preferred.detail;
  EXPECT_EQ(preferred.value["1"], 30);
  p.policy = Mode::kBind;
  EXPECT_FALSE(policy_outcome_check(p, spilled).passed);
  PagePlacement home;
  home.pages_sampled = 100;
  home.pages_per_node = {{0, 100}};
  EXPECT_TRUE(policy_outcome_check(p, home).passed);
}

// /proc/self/cgroup and the cgroup lines of /proc/self/mountinfo as machines show them.
constexpr const char* kV1Mounts =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "40 31 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

TEST(MemoryCgroupLocation, CgroupV1UsesTheMemoryHierarchy) {
  const auto at = find_memory_cgroup("4:memory:/process_api/8db9\n3:cpuset:/\n0::/\n", kV1Mounts);
  ASSERT_TRUE(at);
  EXPECT_EQ(at->version, 1);
  EXPECT_EQ(at->dir, "/sys/fs/cgroup/memory/process_api/8db9");
  // A combined controller list.
  const auto combined = find_memory_cgroup(
      "5:memory,hugetlb:/a\n",
      "35 31 0:32 / /sys/fs/cgroup/memory,hugetlb rw - cgroup cgroup rw,memory,hugetlb\n");
  ASSERT_TRUE(combined);
  EXPECT_EQ(combined->dir, "/sys/fs/cgroup/memory,hugetlb/a");
}

TEST(MemoryCgroupLocation, CgroupV2AndAContainersOwnSubtree) {
  const auto v2 =
      find_memory_cgroup("0::/user.slice/user-0.slice/session-3.scope\n",
                         "25 21 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->version, 2);
  EXPECT_EQ(v2->dir, "/sys/fs/cgroup/user.slice/user-0.slice/session-3.scope");
  // A container sees its subtree mounted as the root: the path is relative to that.
  const auto container = find_memory_cgroup(
      "0::/docker/abc/job\n", "25 21 0:23 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  ASSERT_TRUE(container);
  EXPECT_EQ(container->dir, "/sys/fs/cgroup/job");
  const auto root =
      find_memory_cgroup("0::/\n", "25 21 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->dir, "/sys/fs/cgroup");
  EXPECT_FALSE(find_memory_cgroup("0::/x\n", "31 23 0:28 / /proc rw - proc proc rw\n"));
  EXPECT_FALSE(find_memory_cgroup("", kV1Mounts));
}

// The real thing: a child in a memory cgroup capped below its buffer. Without swap (as on the CI
// machine) the bind ends in the OOM killer; with swap the kernel may reclaim instead, and the cap
// must then show in what stayed resident.
TEST(CappedTouch, ABindThatCannotFitEndsInTheOomKillerOrInReclaim) {
  HostBufferRequest r{64u << 20, PageType::k4K, 0};
  const HostBuffer buffer(r);
  CappedTouchOutcome out;
  try {
    out = touch_under_cap(buffer, 16u << 20);
  } catch (const SkipCase& e) {
    GTEST_SKIP() << e.what();
  }
  EXPECT_EQ(out.pages, 16384u);
  EXPECT_FALSE(out.timed_out) << out.describe();
  if (out.killed) {
    EXPECT_GE(out.oom_kills, 1u) << out.describe();
    EXPECT_LT(out.touched_share(), 0.5) << out.describe();
    EXPECT_GT(out.pages_touched, 0u) << out.describe();
    EXPECT_NE(out.describe().find("the OOM killer"), std::string::npos) << out.describe();
  } else {
    const std::uint64_t resident =
        out.resident.pages_per_node.count(0) ? out.resident.pages_per_node.at(0) : 0;
    EXPECT_LE(resident * 4096 * (out.pages / out.resident.pages_sampled), (16u + 4u) << 20)
        << out.describe();
  }
  // The parent never touched the buffer: its pages are still not there.
  const PagePlacement parent = query_page_placement(buffer.data(), buffer.size());
  EXPECT_EQ(parent.pages_not_present + parent.pages_error, parent.pages_sampled)
      << parent.describe();
  // The cgroup is gone.
  EXPECT_FALSE(std::filesystem::exists(
      out.cgroup.substr(out.cgroup.find('/'), out.cgroup.find(',') - out.cgroup.find('/'))))
      << out.cgroup;
}

TEST(CappedTouch, ABufferUnderTheCapIsTouchedWhereThePolicySays) {
  HostBufferRequest r{8u << 20, PageType::k4K, 0};
  r.policy = Mode::kPreferred;
  const HostBuffer buffer(r);
  CappedTouchOutcome out;
  try {
    out = touch_under_cap(buffer, 64u << 20);
  } catch (const SkipCase& e) {
    GTEST_SKIP() << e.what();
  }
  EXPECT_FALSE(out.killed) << out.describe();
  EXPECT_EQ(out.pages_touched, 2048u);
  EXPECT_DOUBLE_EQ(out.touched_share(), 1.0);
  EXPECT_EQ(out.oom_kills, 0u);
  EXPECT_EQ(out.resident.pages_sampled, 2048u);
  EXPECT_EQ(out.resident.pages_per_node.at(0), 2048u) << out.resident.describe();
  EXPECT_GT(out.seconds, 0.0);
  EXPECT_NE(out.describe().find("finished: 2048 of 2048 pages"), std::string::npos)
      << out.describe();
}

class NumaBalancing : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(tmp_.path() / "proc/sys/kernel");
    write(1);
  }
  void write(int v) const { std::ofstream(file()) << v << "\n"; }
  std::filesystem::path file() const { return tmp_.path() / "proc/sys/kernel/numa_balancing"; }
  int read() const {
    std::ifstream in(file());
    int v = -1;
    in >> v;
    return v;
  }
  testing::TempDir tmp_{"pathbench_numa_balancing"};
};

TEST_F(NumaBalancing, AScopeSetsTheValueAndPutsTheOldOneBack) {
  {
    NumaBalancingScope off(0, tmp_.path());
    EXPECT_EQ(off.previous(), 1);
    EXPECT_EQ(read(), 0);
    const Check c = off.check();
    EXPECT_TRUE(c.passed) << c.detail;
    EXPECT_EQ(c.detail, "numa_balancing off for the case (reads 0), restored to 1 after it");
    write(1);  // changed under the case: the check says so
    EXPECT_FALSE(off.check().passed);
  }
  EXPECT_EQ(read(), 1);
  write(2);  // NUMA_BALANCING_MEMORY_TIERING counts as on, and comes back as 2
  {
    NumaBalancingScope on(1, tmp_.path());
    EXPECT_EQ(read(), 1);
    EXPECT_TRUE(on.check().passed);
  }
  EXPECT_EQ(read(), 2);
}

TEST_F(NumaBalancing, AMissingSettingSkipsNamingTheFile) {
  std::filesystem::remove(file());
  try {
    NumaBalancingScope scope(1, tmp_.path());
    ADD_FAILURE() << "no file, yet a scope";
  } catch (const SkipCase& e) {
    EXPECT_NE(std::string(e.what()).find("proc/sys/kernel/numa_balancing"), std::string::npos)
        << e.what();
  }
}

TEST(NumaBalancingPair, SkipsSayingWhyUntilEverythingIsThere) {
  const auto family = make_host_memory_family();
  const auto spec = testing::scenario_case("host_memory", {{"measure", "memcpy"},
                                                           {"cpu_node", 1},
                                                           {"touch_node", 0},
                                                           {"numa_balancing", "on"},
                                                           {"bytes", 1 << 20}});
  EXPECT_EQ(family->case_error(spec), std::nullopt);
  Machine m = testing::h200_machine();
  m.numa_balancing = 1;
  const auto reason = [&] { return family->requirements(spec).unmet(m, 0).value_or("runs"); };
  EXPECT_EQ(reason(), "NUMA node 1 does not exist on this machine (nodes: 0)");
  m.numa_nodes = {0, 1};
  m.node_cpus = {{0, 1}, {2, 3}};
  EXPECT_EQ(reason(),
            "numa_balancing=on sets /proc/sys/kernel/numa_balancing (now 1, system-wide) for the "
            "case and restores it after: pass --allow-numa-balancing-change (as root) to let "
            "pathbench do so");
  m.numa_balancing.reset();
  EXPECT_NE(reason().find("is not readable here"), std::string::npos) << reason();
  m.numa_balancing = 0;
  m.numa_balancing_change_allowed = true;
  EXPECT_EQ(reason(), "runs");
  // One node: nothing to balance, whatever is allowed.
  const auto same = testing::scenario_case("host_memory", {{"measure", "memcpy"},
                                                           {"cpu_node", 0},
                                                           {"touch_node", 0},
                                                           {"numa_balancing", "off"},
                                                           {"bytes", 1 << 20}});
  Machine one = testing::h200_machine();
  one.numa_balancing = 1;
  one.numa_balancing_change_allowed = true;
  EXPECT_EQ(family->requirements(same).unmet(one, 0).value_or("runs"),
            "numa_balancing=off needs two NUMA nodes with memory (automatic NUMA balancing moves "
            "pages between nodes); this machine has 1");
}

TEST(NumaBalancingPair, TheAxesGoWithMemcpyAndATouchNode) {
  const nlohmann::ordered_json copy = {{"measure", "memcpy"}, {"bytes", 1 << 20}};
  auto with = [&](nlohmann::ordered_json extra, nlohmann::ordered_json base) {
    for (auto& [k, v] : extra.items()) base[k] = v;
    return host_memory_error(base);
  };
  EXPECT_EQ(with({{"touch_node", 0}}, copy), "touch_node needs cpu_node: the node whose CPUs copy");
  EXPECT_EQ(with({{"touch_node", 0}, {"cpu_node", 0}, {"mem_node", 0}}, copy),
            "touch_node leaves the buffers unbound, so the kernel may move them: mem_node and "
            "policy do not apply");
  EXPECT_EQ(with({{"touch_node", 0}}, {{"measure", "first_touch"}, {"bytes", 1 << 20}}),
            "touch_node applies only to measure memcpy");
  EXPECT_EQ(with({{"numa_balancing", "on"}, {"cpu_node", 0}}, copy),
            "numa_balancing applies to memcpy with touch_node (buffers touched on one node, "
            "copied from another)");
}

// On this machine's first node: touched there, copied there, nothing misplaced, and the check
// says where the pages are after every sample.
TEST(NumaBalancingPair, ACopyOfBuffersTouchedElsewhereCountsTheirPages) {
  Machine m = testing::h200_machine();
  m.node_cpus = {{0}};
  const auto family = make_host_memory_family();
  auto spec = testing::scenario_case(
      "host_memory",
      {{"measure", "memcpy"}, {"cpu_node", 0}, {"touch_node", 0}, {"bytes", 1 << 20}});
  spec.min_time = 0.001;
  const auto bench = family->prepare(spec, m, 0);
  EXPECT_EQ(metric_names_of(bench->metrics()),
            (std::vector<std::string>{"bandwidth", "time_per_copy", "misplaced_share"}));
  bench->warm_up(0.001);
  const Sample sample = bench->measure();
  ASSERT_EQ(sample.values.size(), 3u);
  EXPECT_DOUBLE_EQ(sample.values[2], 0.0);
  bench->verify();
  bool seen = false;
  for (const auto& c : bench->checks()) {
    EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
    if (c.name == "page_migration") {
      seen = true;
      EXPECT_NE(c.detail.find("source touched on node 0, copied from node 0; after the sample: "
                              "256/256 pages on node 0"),
                std::string::npos)
          << c.detail;
    }
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace pathbench::test_memory_policy
