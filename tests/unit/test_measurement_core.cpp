// The measurement core's services on their own: typed axes, requirements, the block sample loop,
// the host clock, sticky checks, the repetition adapter, buffer and lock checks.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/errors.hpp"
#include "inventory/requirements.hpp"
#include "measure/benchmark_adapter.hpp"
#include "measure/block_bench.hpp"
#include "measure/check_log.hpp"
#include "placement/buffer_checks.hpp"
#include "placement/host_buffer.hpp"
#include "placement/smaps.hpp"
#include "placement/thread_placement.hpp"
#include "scenario/typed_axis.hpp"
#include "test_machines.hpp"

namespace pathbench::test_measurement_core {
namespace {

enum class Color { kRed, kBlue };
const EnumAxis<Color> kColor{"color", {{"red", Color::kRed}, {"blue", Color::kBlue}}, "a color"};
const IntegerAxis kCount{"count", 1, 10, "how many"};

CaseSpec spec_of(nlohmann::ordered_json params) {
  CaseSpec s;
  s.id = "toy/test";
  s.params = std::move(params);
  return s;
}

TEST(TypedAxis, SchemaAndDecodingComeFromOneTable) {
  const AxisSchema schema = kColor.schema();
  EXPECT_EQ(schema.name, "color");
  EXPECT_EQ(schema.kind, AxisSchema::Kind::kString);
  EXPECT_EQ(schema.allowed, (std::vector<std::string>{"red", "blue"}));
  EXPECT_FALSE(check_axis_value(schema, "blue"));
  EXPECT_TRUE(check_axis_value(schema, "green"));  // what load validation rejects...
  EXPECT_EQ(kColor.decode(spec_of({{"color", "blue"}})), Color::kBlue);
  // ...never reaches a family as a default.
  EXPECT_THROW(kColor.decode(spec_of({{"color", "green"}})), std::logic_error);
  EXPECT_EQ(kColor.decode_or(spec_of({}), Color::kRed), Color::kRed);
  EXPECT_FALSE(kColor.decode_optional(spec_of({})));
  EXPECT_EQ(kColor.name_of(Color::kBlue), "blue");

  const AxisSchema count = kCount.schema();
  EXPECT_EQ(count.kind, AxisSchema::Kind::kInteger);
  EXPECT_EQ(count.min, 1);
  EXPECT_EQ(count.max, 10);
  EXPECT_TRUE(check_axis_value(count, 11));
  EXPECT_EQ(kCount.decode(spec_of({{"count", 7}})), 7);
  EXPECT_EQ(kCount.decode_or(spec_of({}), 3), 3);
  EXPECT_EQ(axis_schemas(kColor, kCount).size(), 2u);
}

bool has(const std::optional<std::string>& why, const std::string& text) {
  return why && why->find(text) != std::string::npos;
}

TEST(Requirements, EachUnmetRequirementSaysWhyAndHowToFixIt) {
  Machine m = testing::h200_machine(1);
  EXPECT_FALSE(Requirements().gpu().gpu_numa_node().unmet(m, 0));
  EXPECT_TRUE(has(Requirements().gpu().unmet(m, 3), "GPU 3 does not exist"));
  EXPECT_TRUE(has(Requirements().gpu_numa_node(true).unmet(m, 0), "second NUMA node"));
  EXPECT_TRUE(has(Requirements().two_gpus().unmet(m, 0), "needs two GPUs; this machine has 1"));
  EXPECT_TRUE(has(Requirements().numa_node(2).unmet(m, 0), "NUMA node 2 does not exist"));

  m.thp_enabled = "never";
  EXPECT_TRUE(has(Requirements().transparent_huge_pages().unmet(m, 0), "echo madvise"));
  m.hugetlb_free_pages = 1;
  const auto pages = Requirements().hugetlb_pages(5u << 20, 2).unmet(m, 0);
  EXPECT_TRUE(has(pages, "needs 6 free hugetlb pages")) << pages.value_or("");
  EXPECT_TRUE(has(pages, "reserve 5 more")) << *pages;
  m.memlock_limit_bytes = 64 << 10;
  if (!process_has_ipc_lock()) {
    EXPECT_TRUE(has(Requirements().memlock(1 << 20).unmet(m, 0), "ulimit -l"));
  }

  // Judged in declaration order: the first unmet one is the reason.
  EXPECT_TRUE(has(Requirements().transparent_huge_pages().gpu().unmet(m, 9), "transparent"));
  const auto custom = Requirements().custom([](const Machine&, int device) {
    return device == 1 ? std::optional<std::string>("custom reason") : std::nullopt;
  });
  EXPECT_FALSE(custom.unmet(m, 0));
  EXPECT_EQ(custom.unmet(m, 1), "custom reason");
}

TEST(Requirements, PerGpuNeedsCountTheGpusInUse) {
  Machine m = testing::h200_machine(4);
  m.selected_gpus = {3, 1};
  EXPECT_EQ(gpus_in_use(m), (std::vector<int>{1, 3}));
  m.hugetlb_free_pages = 128;
  EXPECT_TRUE(has(Requirements().hugetlb_pages(256u << 20, 1, true).unmet(m, 0),
                  "needs 256 free hugetlb pages"));
  m.mem_available_bytes = 256u << 20;
  EXPECT_TRUE(has(Requirements().host_memory_per_gpu(256u << 20).unmet(m, 0), "each of 2 GPUs"));
  m.selected_gpus = {1, 7};
  EXPECT_TRUE(has(Requirements().every_selected_gpu().unmet(m, 0), "GPU 7 does not exist"));
}

// A block loop over a counter: each operation takes a known time on a fake clock.
class CountingBench final : public BlockBench {
 public:
  struct FakeClock final : OperationClock {
    explicit FakeClock(double per_op, std::uint64_t& pending) : per_op(per_op), pending(pending) {}
    std::vector<double> time(const Enqueue& enqueue) override {
      pending = 0;
      enqueue();
      return {per_op * static_cast<double>(pending)};
    }
    TimingMethod method() const override { return TimingMethod::kCudaEventsLatched; }
    std::string describe() const override { return "fake"; }
    double per_op;
    std::uint64_t& pending;
  };

  CountingBench(BlockShape shape, double per_op) : BlockBench(std::move(shape)) {
    use_clock(std::make_unique<FakeClock>(per_op, pending_));
  }
  std::vector<MetricSpec> metrics() const override { return {{"time", "s", Better::kLower}}; }

  std::uint64_t enqueued = 0, completed = 0, cleared = 0, verified = 0;
  bool corrupt = false;

 private:
  void enqueue(std::uint64_t ops) override {
    pending_ += ops;
    enqueued += ops;
  }
  void complete() override { ++completed; }
  void before_sample() override { ++cleared; }
  void check_destination() override {
    if (corrupt) throw CaseFailure("corrupt");
    ++verified;
  }
  std::vector<double> values(const BlockTimes& t) const override {
    return {t.slowest() / static_cast<double>(t.ops) + t.round_trip};
  }
  std::uint64_t pending_ = 0;
};

TEST(BlockBench, SizesTheBlockToMinTimeAndCountsVerifiedSamples) {
  BlockShape shape;
  shape.max_ops = 256;
  shape.bytes_per_op = 100;
  shape.lanes = 2;
  shape.verified = "the counter matched";
  CountingBench bench(shape, 0.001);  // 1 ms per operation
  bench.warm_up(0.05);
  EXPECT_EQ(bench.operations_per_sample(), 50u * 2);  // 50 ops fill 50 ms, on each of 2 lanes
  EXPECT_EQ(bench.bytes_per_sample(), 50u * 2 * 100);
  EXPECT_EQ(bench.enqueued, 1u + 4u);  // the uncounted first block, then the probe
  EXPECT_EQ(bench.cleared, 1u);

  const Sample s = bench.measure();
  EXPECT_DOUBLE_EQ(s.seconds, 0.05);
  ASSERT_EQ(s.values.size(), 1u);
  EXPECT_DOUBLE_EQ(s.values[0], 0.001);
  bench.verify();
  const auto checks = bench.checks();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].name, "copy_pattern");
  EXPECT_TRUE(checks[0].passed);
  EXPECT_NE(checks[0].detail.find("the counter matched after every sample"), std::string::npos);
  EXPECT_NE(bench.timing_detail().find("50 operations per block; fake"), std::string::npos);

  bench.corrupt = true;
  bench.measure();
  EXPECT_THROW(bench.verify(), CaseFailure);
}

TEST(BlockBench, NoVerifiedSampleFailsTheCheckAndTheBlockIsCapped) {
  BlockShape shape;
  shape.max_ops = 8;
  CountingBench bench(shape, 0.001);
  bench.warm_up(10.0);
  EXPECT_EQ(bench.operations_per_sample(), 8u);
  EXPECT_FALSE(bench.checks().front().passed);
  EXPECT_EQ(bench.checks().front().detail, "no sample was verified");
}

TEST(BlockBench, LatencySplitsTheBudgetWithRoundTrips) {
  BlockShape shape;
  shape.latency = true;
  shape.first_block_ops = 0;
  CountingBench bench(shape, 0.001);
  std::vector<double> each;
  bench.observe_round_trips([&](double s) { each.push_back(s); });
  bench.warm_up(0.02);
  EXPECT_EQ(bench.operations_per_sample(), 10u);  // half of 20 ms
  EXPECT_EQ(bench.completed, 4u);                 // four round trips size the loop
  EXPECT_EQ(each.size(), 4u);                     // each one observed on its own
  bench.measure();
  EXPECT_GT(bench.completed, 4u);
  EXPECT_NE(bench.timing_detail().find("round trips"), std::string::npos);
}

TEST(HostClock, TimesTheBlockAndItsCompletion) {
  int completed = 0;
  HostClock clock([&] { ++completed; }, "why");
  const auto t = clock.time([] {});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_GE(t[0], 0.0);
  EXPECT_EQ(completed, 1);
  EXPECT_EQ(clock.method(), TimingMethod::kHostSteadyClock);
  EXPECT_NE(clock.describe().find("(why)"), std::string::npos);
}

TEST(CheckLog, AFailureStaysWithItsRepetition) {
  CheckLog log;
  log.record({{"a", true, "fine", nullptr}});
  log.record({{"a", false, "broke", nullptr}});
  log.record({{"a", true, "fine again", nullptr}});
  ASSERT_EQ(log.checks().size(), 1u);
  EXPECT_FALSE(log.checks()[0].passed);
  EXPECT_EQ(log.checks()[0].detail, "repetition 2: broke");
}

TEST(RepetitionAdapter, RunsEveryRepetitionAndRethrowsTheFirstFailure) {
  std::vector<benchmark::BenchmarkReporter::Run> runs;
  std::vector<std::size_t> seen;
  EXPECT_EQ(run_repetitions(
                "core/ok", 3,
                [&](std::size_t i) {
                  seen.push_back(i);
                  return 0.001;
                },
                runs),
            3u);
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_FALSE(runs.empty());
  seen.clear();
  EXPECT_THROW(run_repetitions(
                   "core/fails", 4,
                   [&](std::size_t i) -> double {
                     seen.push_back(i);
                     if (i == 1) throw CaseFailure("second");
                     return 0.001;
                   },
                   runs),
               CaseFailure);
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1}));  // nothing after the failure
}

TEST(ThreadPlacement, BindsToTheNodesCpusAndChecksWhereItRuns) {
  Machine m;
  m.numa_nodes = {0};
  m.node_cpus = {{sched_getcpu()}};
  {
    ThreadPlacement bound(m, 0);
    EXPECT_TRUE(bound.bound());
    const Check c = bound.check("test thread");
    EXPECT_EQ(c.name, "thread_placement");
    EXPECT_TRUE(c.passed) << c.detail;
  }
  ThreadPlacement unknown(m, std::nullopt);
  EXPECT_FALSE(unknown.bound());
  EXPECT_TRUE(unknown.check().passed);
  EXPECT_THROW(host_node_for(m, 0, false), SkipCase);  // no GPU 0 on this machine
}

TEST(BufferChecks, PlacementAndBackingOfARealBuffer) {
  HostBuffer buffer(HostBufferRequest{1 << 20, PageType::k4K, std::nullopt});
  buffer.touch();
  const Check where = page_placement_check("x_placement", buffer.data(), buffer.size(), {});
  EXPECT_EQ(where.name, "x_placement");
  EXPECT_TRUE(where.passed) << where.detail;
  EXPECT_NE(where.detail.find("no memory binding requested"), std::string::npos);
  const Check backing =
      huge_backing_check("x_huge_backing", buffer.data(), buffer.size(), PageType::k4K);
  EXPECT_TRUE(backing.passed) << backing.detail;
  // A buffer claimed to be THP-backed that is not fails, saying why.
  const Check thp = huge_backing_check("x", buffer.data(), buffer.size(), PageType::kThp);
  EXPECT_FALSE(thp.passed);
  EXPECT_NE(thp.detail.find("expected >= 90 % THP-backed"), std::string::npos);
}

TEST(LockState, EveryEntryOfTheRangeMustBeLocked) {
  std::vector<SmapsEntry> entries(2);
  entries[0].start = 0x1000;
  entries[0].end = 0x3000;
  entries[0].locked_kb = 8;
  entries[0].vm_flags = "rd wr mr mw me lo ac";
  entries[1].start = 0x3000;
  entries[1].end = 0x5000;
  entries[1].vm_flags = "rd wr mr mw me ac";
  EXPECT_TRUE(lock_state_in(entries, 0x1000, 0x2000).locked());
  const LockState both = lock_state_in(entries, 0x1000, 0x4000);
  EXPECT_FALSE(both.locked());
  EXPECT_EQ(both.describe(),
            "1 of 2 smaps entries of the buffer have VM_LOCKED ('lo'); Locked 8 kB");
  EXPECT_FALSE(lock_state_in(entries, 0x9000, 0x1000).locked());  // nothing there: not locked
}

}  // namespace
}  // namespace pathbench::test_measurement_core
