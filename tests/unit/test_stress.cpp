// `pathbench stress`: the duty-cycle schedule, the loop that follows it, option validation
// against a machine, the host memory hog and the stop signals. Nothing here needs a GPU.
#include <gtest/gtest.h>
#include <numa.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "core/errors.hpp"
#include "core/stop_signals.hpp"
#include "stress/duty_cycle.hpp"
#include "stress/duty_cycled_load.hpp"
#include "stress/host_memory_hog.hpp"
#include "stress/stress_plan.hpp"
#include "test_machines.hpp"

namespace pathbench::test_stress {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// ------------------------------------------------------------------------------------------------
// DutySchedule

TEST(DutySchedule, OnForTheFirstShareOfEveryPeriod) {
  const DutySchedule s(100ms, 0.2);
  EXPECT_EQ(s.on_time(), 20ms);

  auto p = s.phase_at(0ms);
  EXPECT_TRUE(p.on);
  EXPECT_EQ(p.period_index, 0u);
  EXPECT_EQ(p.ends_at, 20ms);

  p = s.phase_at(19999us);
  EXPECT_TRUE(p.on);
  EXPECT_EQ(p.ends_at, 20ms);

  p = s.phase_at(20ms);
  EXPECT_FALSE(p.on);
  EXPECT_EQ(p.ends_at, 100ms);  // off until the next period starts

  p = s.phase_at(99ms);
  EXPECT_FALSE(p.on);
  EXPECT_EQ(p.ends_at, 100ms);

  p = s.phase_at(100ms);
  EXPECT_TRUE(p.on);
  EXPECT_EQ(p.period_index, 1u);
  EXPECT_EQ(p.ends_at, 120ms);

  p = s.phase_at(std::chrono::hours(1) + 50ms);
  EXPECT_FALSE(p.on);
  EXPECT_EQ(p.period_index, 36000u);
  EXPECT_EQ(p.ends_at, std::chrono::hours(1) + 100ms);
}

TEST(DutySchedule, DutyOneIsAlwaysOn) {
  const DutySchedule s(100ms, 1.0);
  EXPECT_EQ(s.on_time(), 100ms);
  for (const auto t : {0ms, 1ms, 99ms, 100ms, 250ms, 99999ms}) {
    const auto p = s.phase_at(t);
    EXPECT_TRUE(p.on) << t.count();
    EXPECT_EQ(p.ends_at, (t / 100ms + 1) * 100ms) << t.count();
  }
}

TEST(DutySchedule, TinyDutyStillHasAnOnPart) {
  const DutySchedule s(1ms, 1e-9);
  EXPECT_EQ(s.on_time(), 1ns);
  EXPECT_TRUE(s.phase_at(0ns).on);
  EXPECT_FALSE(s.phase_at(1ns).on);
}

TEST(DutySchedule, NegativeElapsedCountsAsTheStart) {
  const DutySchedule s(100ms, 0.5);
  const auto p = s.phase_at(-5ms);
  EXPECT_TRUE(p.on);
  EXPECT_EQ(p.ends_at, 50ms);
}

TEST(DutySchedule, RejectsBadDutyAndPeriod) {
  EXPECT_THROW(DutySchedule(100ms, 0.0), std::invalid_argument);
  EXPECT_THROW(DutySchedule(100ms, -0.1), std::invalid_argument);
  EXPECT_THROW(DutySchedule(100ms, 1.01), std::invalid_argument);
  EXPECT_THROW(DutySchedule(100ms, std::nan("")), std::invalid_argument);
  EXPECT_THROW(DutySchedule(0ms, 0.5), std::invalid_argument);
  EXPECT_THROW(DutySchedule(-1ms, 0.5), std::invalid_argument);
}

// ------------------------------------------------------------------------------------------------
// DutyCycledLoad, with a fake operation in place of a GPU copy

TEST(DutyCycledLoad, BusyForAboutTheDutyShareAndIdleOtherwise) {
  std::atomic<int> calls{0};
  DutyCycledLoad load(DutySchedule(40ms, 0.25), [&calls] {
    std::this_thread::sleep_for(1ms);
    ++calls;
    return std::uint64_t{1000};
  });
  const Clock::time_point start = Clock::now();
  load.start(start);
  std::this_thread::sleep_for(400ms);
  load.stop();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const double busy = std::chrono::duration<double>(load.meter().busy()).count();
  EXPECT_EQ(load.meter().error(), nullptr);
  EXPECT_EQ(load.meter().bytes(), 1000u * static_cast<unsigned>(calls.load()));
  // 10 on-parts of 10 ms each; sleep granularity and a loaded CI machine widen the band.
  EXPECT_GT(busy / elapsed, 0.15) << busy << " s busy of " << elapsed;
  EXPECT_LT(busy / elapsed, 0.45) << busy << " s busy of " << elapsed;
}

TEST(DutyCycledLoad, StopsPromptlyDuringALongOffPart) {
  DutyCycledLoad load(DutySchedule(std::chrono::seconds(60), 0.001), [] {
    std::this_thread::sleep_for(1ms);
    return std::uint64_t{1};
  });
  load.start(Clock::now());
  std::this_thread::sleep_for(150ms);  // well into the 59.94 s off-part
  const Clock::time_point t0 = Clock::now();
  load.stop();
  EXPECT_LT(Clock::now() - t0, 100ms);
  EXPECT_GT(load.meter().bytes(), 0u);
}

TEST(DutyCycledLoad, AnOperationThatThrowsStopsTheLoopAndIsKept) {
  DutyCycledLoad load(DutySchedule(10ms, 1.0),
                      []() -> std::uint64_t { throw std::runtime_error("copy failed"); });
  load.start(Clock::now());
  const Clock::time_point give_up = Clock::now() + 2s;
  while (load.meter().error() == nullptr && Clock::now() < give_up)
    std::this_thread::sleep_for(1ms);
  load.stop();
  ASSERT_NE(load.meter().error(), nullptr);
  EXPECT_THROW(std::rethrow_exception(load.meter().error()), std::runtime_error);
}

// ------------------------------------------------------------------------------------------------
// make_stress_plan: options against a machine

Machine no_gpu_machine() {
  Machine m = testing::h200_machine(0);
  m.cuda_unavailable_reason =
      "no usable CUDA device: cudaGetDeviceCount says cudaErrorNoDevice (no CUDA-capable device "
      "is detected)";
  return m;
}

// The option an InputError names, or "no error".
std::string rejected_option(const StressOptions& o, const Machine& m) {
  try {
    make_stress_plan(o, m);
  } catch (const InputError& e) {
    return e.file();
  }
  return "no error";
}

std::string rejection(const StressOptions& o, const Machine& m) {
  try {
    make_stress_plan(o, m);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

StressOptions host_only(int threads = 1) {
  StressOptions o;
  o.host_threads = threads;
  return o;
}

StressOptions gpu_only(const std::string& directions = "h2d") {
  StressOptions o;
  o.gpu_copies = directions;
  return o;
}

TEST(StressPlan, NeedsAtLeastOneLoad) {
  const Machine m = testing::h200_machine();
  EXPECT_NE(rejection(StressOptions{}, m).find("--gpu-copies"), std::string::npos);
  EXPECT_NE(rejection(StressOptions{}, m).find("--host-membw-threads"), std::string::npos);
}

TEST(StressPlan, GpuDefaults) {
  const StressPlan p = make_stress_plan(gpu_only(), testing::h200_machine());
  ASSERT_EQ(p.directions.size(), 1u);
  EXPECT_EQ(p.directions[0], CopyDirection::kH2D);
  EXPECT_EQ(p.copy_bytes, 64u << 20);
  EXPECT_EQ(p.schedule.duty(), 1.0);
  EXPECT_EQ(p.schedule.period(), 100ms);
  EXPECT_EQ(p.host_threads, 0);
  EXPECT_EQ(p.host_node, 0);  // the GPU's node
  EXPECT_EQ(p.host_node_origin, "the node of GPU 0");
  EXPECT_FALSE(p.duration.has_value());
  EXPECT_EQ(p.describe(),
            "pathbench stress: H2D copies of 64 MiB between GPU 0 (NVIDIA H200) and pinned host "
            "memory on NUMA node 0 (the node of GPU 0), back to back all the time (duty 1); "
            "until SIGINT or SIGTERM");
}

TEST(StressPlan, GpuOptions) {
  StressOptions o = gpu_only("both");
  o.copy_bytes = "256MiB";
  o.duty = 0.2;
  o.period_ms = 50;
  o.duration_s = 30;
  const StressPlan p = make_stress_plan(o, testing::h200_machine());
  ASSERT_EQ(p.directions.size(), 2u);
  EXPECT_EQ(p.copy_bytes, 256u << 20);
  EXPECT_EQ(p.schedule.on_time(), 10ms);
  ASSERT_TRUE(p.duration.has_value());
  EXPECT_EQ(p.duration->count(), 30.0);
  const std::string line = p.describe();
  EXPECT_NE(line.find("H2D and D2H copies"), std::string::npos) << line;
  EXPECT_NE(line.find("first 10 ms of every 50 ms"), std::string::npos) << line;
  EXPECT_NE(line.find("(duty 0.2)"), std::string::npos) << line;
  EXPECT_NE(line.find("for 30 s"), std::string::npos) << line;
}

TEST(StressPlan, BadGpuOptionsNameTheOption) {
  const Machine m = testing::h200_machine();
  EXPECT_EQ(rejected_option(gpu_only("sideways"), m), "--gpu-copies");
  for (const double duty : {0.0, -0.5, 1.5, std::nan("")}) {
    StressOptions o = gpu_only();
    o.duty = duty;
    EXPECT_EQ(rejected_option(o, m), "--duty") << duty;
  }
  for (const int period : {0, -5, kMaxPeriodMs + 1}) {
    StressOptions o = gpu_only();
    o.period_ms = period;
    EXPECT_EQ(rejected_option(o, m), "--period-ms") << period;
  }
  for (const char* size : {"lots", "0", "4KB", ""}) {
    StressOptions o = gpu_only();
    o.copy_bytes = size;
    EXPECT_EQ(rejected_option(o, m), "--copy-bytes") << size;
  }
  StressOptions too_big = gpu_only("both");
  too_big.copy_bytes = "100GiB";  // 200 GiB on a 141 GiB GPU
  EXPECT_EQ(rejected_option(too_big, m), "--copy-bytes");
  StressOptions pinned_too_big = gpu_only("both");
  pinned_too_big.copy_bytes = "60GiB";  // fits the GPU, not the 64 GiB of host memory
  EXPECT_EQ(rejected_option(pinned_too_big, m), "--copy-bytes");
  EXPECT_NE(rejection(pinned_too_big, m).find("(2 x 60 GiB pinned)"), std::string::npos)
      << rejection(pinned_too_big, m);
  StressOptions no_such_gpu = gpu_only();
  no_such_gpu.device = 3;
  EXPECT_EQ(rejected_option(no_such_gpu, m), "--device");
}

TEST(StressPlan, GpuCopiesWithoutAGpuGiveTheProbesReason) {
  const std::string why = rejection(gpu_only(), no_gpu_machine());
  EXPECT_EQ(why.rfind("--gpu-copies: no usable CUDA device: ", 0), 0u) << why;
  StressOptions typo = gpu_only();
  typo.duty = 2;
  EXPECT_EQ(rejected_option(typo, no_gpu_machine()), "--duty") << "values before the machine";
}

TEST(StressPlan, GpuOnlyOptionsWithoutGpuCopiesAreRefused) {
  const Machine m = testing::h200_machine();
  StressOptions o = host_only();
  o.duty = 0.5;
  EXPECT_EQ(rejected_option(o, m), "--duty");
  o = host_only();
  o.period_ms = 10;
  EXPECT_EQ(rejected_option(o, m), "--period-ms");
  o = host_only();
  o.copy_bytes = "1MiB";
  EXPECT_EQ(rejected_option(o, m), "--copy-bytes");
  o = gpu_only();
  o.host_bytes = "1GiB";
  EXPECT_EQ(rejected_option(o, m), "--host-bytes");
}

TEST(StressPlan, HostDefaultsAndOptions) {
  const Machine m = testing::h200_machine();
  StressPlan p = make_stress_plan(host_only(2), m);
  EXPECT_TRUE(p.directions.empty());
  EXPECT_EQ(p.host_threads, 2);
  EXPECT_EQ(p.host_bytes, kDefaultHostBytes);
  EXPECT_EQ(p.host_node, 0);
  EXPECT_EQ(p.host_cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(p.describe(),
            "pathbench stress: 2 host threads memcpy-ing between two 256 MiB buffers each, on "
            "NUMA node 0 (the node of GPU 0), running on CPUs 0-3; until SIGINT or SIGTERM");

  StressOptions o = host_only(1);
  o.host_bytes = "64MiB";
  o.duration_s = 1;
  p = make_stress_plan(o, no_gpu_machine());  // the host load needs no GPU
  EXPECT_EQ(p.host_bytes, 64u << 20);
  EXPECT_EQ(p.host_node, 0);
  EXPECT_EQ(p.host_node_origin, "the first node; no usable GPU 0 to follow");
}

TEST(StressPlan, HostNodeFollowsTheGpuOrTheOption) {
  Machine m = testing::h200_machine(2);
  m.numa_nodes = {0, 1};
  m.node_cpus = {{0, 1}, {2, 3}};
  m.gpus[1].numa_node = 1;
  StressOptions o = host_only(2);
  o.device = 1;
  StressPlan p = make_stress_plan(o, m);
  EXPECT_EQ(p.host_node, 1);
  EXPECT_EQ(p.host_cpus, (std::vector<int>{2, 3}));
  o.host_node = 0;
  p = make_stress_plan(o, m);
  EXPECT_EQ(p.host_node, 0);
  EXPECT_EQ(p.host_node_origin, "--host-node");
  o.host_node = 7;
  EXPECT_EQ(rejected_option(o, m), "--host-node");
}

TEST(StressPlan, BadHostOptionsNameTheOption) {
  const Machine m = testing::h200_machine();  // 4 CPUs, 64 GiB available
  EXPECT_EQ(rejected_option(host_only(0), m), "--host-membw-threads");
  EXPECT_EQ(rejected_option(host_only(5), m), "--host-membw-threads");  // more than 4 CPUs
  for (const char* size : {"lots", "4KiB", "-1"}) {
    StressOptions o = host_only();
    o.host_bytes = size;
    EXPECT_EQ(rejected_option(o, m), "--host-bytes") << size;
  }
  StressOptions o = host_only(4);
  o.host_bytes = "16GiB";  // 4 x 2 x 16 GiB = 128 GiB
  EXPECT_EQ(rejected_option(o, m), "--host-bytes");
  o = host_only();
  o.duration_s = -1;
  EXPECT_EQ(rejected_option(o, m), "--duration");
}

TEST(StressPlan, UnknownNumaLayoutLeavesMemoryUnbound) {
  Machine m = testing::h200_machine();
  m.numa_nodes.clear();
  m.node_cpus.clear();
  const StressPlan p = make_stress_plan(host_only(1), m);
  EXPECT_FALSE(p.host_node.has_value());
  EXPECT_TRUE(p.host_cpus.empty());
  StressOptions o = host_only(1);
  o.host_node = 0;
  EXPECT_EQ(rejected_option(o, m), "--host-node");
}

// ------------------------------------------------------------------------------------------------
// HostMemoryHog: the real thing, small

TEST(HostMemoryHog, MovesBytesAndStopsPromptly) {
  HostHogConfig config;
  config.threads = 1;
  config.bytes = 8u << 20;
  HostMemoryHog hog(config);
  EXPECT_EQ(hog.meter().bytes(), 0u) << "nothing is copied before start()";
  hog.start();
  std::this_thread::sleep_for(300ms);
  const Clock::time_point t0 = Clock::now();
  hog.stop();
  EXPECT_LT(Clock::now() - t0, 500ms);
  EXPECT_EQ(hog.meter().error(), nullptr);
  EXPECT_GT(hog.meter().bytes(), 0u);
  EXPECT_GT(hog.meter().busy(), 0ns);
}

TEST(HostMemoryHog, BoundToNodeZero) {
  if (numa_available() < 0) GTEST_SKIP() << "no NUMA support in this kernel";
  HostHogConfig config;
  config.threads = 2;
  config.bytes = 4u << 20;
  config.node = 0;
  HostMemoryHog hog(config);
  hog.start();
  std::this_thread::sleep_for(100ms);
  hog.stop();
  EXPECT_EQ(hog.meter().error(), nullptr);
  EXPECT_GT(hog.meter().bytes(), 0u);
}

TEST(HostMemoryHog, DestroyedWithoutStartFreesEverything) {
  HostHogConfig config;
  config.threads = 2;
  config.bytes = 1u << 20;
  { HostMemoryHog hog(config); }  // must neither hang nor copy
  SUCCEED();
}

TEST(HostMemoryHog, AnUnusableNodeThrowsFromTheConstructor) {
  HostHogConfig config;
  config.bytes = 1u << 20;
  config.node = 4000;  // no machine has it
  EXPECT_THROW(HostMemoryHog hog(config), SkipCase);
}

// ------------------------------------------------------------------------------------------------
// StopSignals

TEST(StopSignals, ASignalEndsTheWaitAndTheOldHandlerComesBack) {
  struct sigaction before {};
  ASSERT_EQ(::sigaction(SIGTERM, nullptr, &before), 0);
  {
    StopSignals signals;
    const Clock::time_point t0 = Clock::now();
    EXPECT_EQ(signals.wait_until(t0 + 20ms), std::nullopt);
    EXPECT_GE(Clock::now() - t0, 20ms);
    ASSERT_EQ(::raise(SIGTERM), 0);
    EXPECT_EQ(signals.wait_until(Clock::now() + 5s), SIGTERM);
    std::thread sender([] {
      std::this_thread::sleep_for(20ms);
      ::kill(::getpid(), SIGINT);
    });
    EXPECT_EQ(signals.wait_until(Clock::time_point::max()), SIGINT);
    sender.join();
    EXPECT_THROW(StopSignals second, std::logic_error);
  }
  struct sigaction after {};
  ASSERT_EQ(::sigaction(SIGTERM, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

}  // namespace
}  // namespace pathbench::test_stress
