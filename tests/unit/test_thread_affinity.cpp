#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <vector>

#include "core/errors.hpp"
#include "placement/thread_affinity.hpp"

namespace pathbench::test_thread_affinity {
namespace {

cpu_set_t current_mask() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  pthread_getaffinity_np(pthread_self(), sizeof mask, &mask);
  return mask;
}

int first_allowed_cpu() {
  const cpu_set_t mask = current_mask();
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) return cpu;
  }
  return -1;
}

TEST(ThreadAffinity, BindsAndRestores) {
  const int cpu = first_allowed_cpu();
  ASSERT_GE(cpu, 0);
  const cpu_set_t before = current_mask();
  {
    const ThreadAffinityScope scope({cpu});
    EXPECT_EQ(sched_getcpu(), cpu);
    const cpu_set_t inside = current_mask();
    EXPECT_EQ(CPU_COUNT(&inside), 1);
    EXPECT_TRUE(CPU_ISSET(cpu, &inside));
  }
  const cpu_set_t after = current_mask();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(ThreadAffinity, CpuZero) {
  const cpu_set_t mask = current_mask();
  if (!CPU_ISSET(0, &mask)) GTEST_SKIP() << "CPU 0 is not in this process's cpuset";
  const ThreadAffinityScope scope({0});
  EXPECT_EQ(sched_getcpu(), 0);
}

TEST(ThreadAffinity, NestedScopesRestoreInOrder) {
  const cpu_set_t before = current_mask();
  const int cpu = first_allowed_cpu();
  {
    const ThreadAffinityScope outer({cpu});
    const cpu_set_t outer_mask = current_mask();
    { const ThreadAffinityScope inner({cpu}); }
    const cpu_set_t restored = current_mask();
    EXPECT_TRUE(CPU_EQUAL(&outer_mask, &restored));
  }
  const cpu_set_t after = current_mask();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(ThreadAffinity, InvalidCpuSetsThrowAndLeaveTheMaskAlone) {
  const cpu_set_t before = current_mask();
  EXPECT_THROW(ThreadAffinityScope({}), SystemError);
  EXPECT_THROW(ThreadAffinityScope({-1}), SystemError);
  EXPECT_THROW(ThreadAffinityScope({CPU_SETSIZE}), SystemError);
  // A CPU id inside the mask's range that no machine in CI has online.
  try {
    const ThreadAffinityScope scope({CPU_SETSIZE - 1});
    FAIL() << "binding to CPU " << CPU_SETSIZE - 1 << " succeeded";
  } catch (const SystemError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(CPU_SETSIZE - 1)), std::string::npos);
  }
  const cpu_set_t after = current_mask();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

}  // namespace
}  // namespace pathbench::test_thread_affinity
