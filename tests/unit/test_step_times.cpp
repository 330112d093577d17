#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "timeline/step_times.hpp"

namespace pathbench::test_step_times {
namespace {

TimelineRecord work(ActivityKind kind, std::uint64_t start, std::uint64_t end, std::uint32_t stream,
                    const char* copy_kind = "", std::uint32_t device = 0) {
  TimelineRecord r;
  r.kind = kind;
  r.start_ns = start;
  r.end_ns = end;
  r.stream = stream;
  r.device = device;
  r.copy_kind = copy_kind;
  return r;
}
TimelineRecord h2d(std::uint64_t start, std::uint64_t end, std::uint32_t stream) {
  return work(ActivityKind::kMemcpy, start, end, stream, "HtoD");
}
TimelineRecord d2h(std::uint64_t start, std::uint64_t end, std::uint32_t stream) {
  return work(ActivityKind::kMemcpy, start, end, stream, "DtoH");
}
TimelineRecord step(std::uint64_t start, std::uint64_t end, std::uint32_t stream,
                    std::uint32_t device = 0) {
  return work(ActivityKind::kKernel, start, end, stream, "", device);
}

TEST(StepTimes, EachStepsInputIsTheCopiesOnItsStreamSinceThePreviousStep) {
  Timeline t;
  // Stream 7: request A (one copy), its response, request B (two chunks), request C (no input).
  // Stream 9: request D, whose copy overlaps A's step. Records arrive out of order, as CUPTI's
  // buffers deliver them.
  t.records = {step(3000, 4000, 7), h2d(1000, 2500, 7), d2h(4000, 4500, 7),
               h2d(5000, 5600, 7),  h2d(5600, 6400, 7), step(7000, 7100, 7),
               step(8000, 8200, 7), h2d(3500, 3900, 9), step(4100, 4300, 9)};
  // A bulk copy on a stream without steps belongs to no request; a memset and a host-side sync
  // are not GPU work of a step.
  t.records.push_back(h2d(0, 90000, 11));
  t.records.push_back(work(ActivityKind::kMemset, 0, 100, 7));
  t.records.push_back(work(ActivityKind::kSynchronization, 100, 9000, 7));
  const StepTimes s = step_times(t);
  EXPECT_EQ(s.steps, 4u);
  // A: 1500 ns, B: 5000..6400 = 1400 ns, D: 400 ns (C had no input).
  std::vector<double> input = s.input_copy_seconds;
  std::sort(input.begin(), input.end());
  ASSERT_EQ(input.size(), 3u);
  EXPECT_DOUBLE_EQ(input[0], 400e-9);
  EXPECT_DOUBLE_EQ(input[1], 1400e-9);
  EXPECT_DOUBLE_EQ(input[2], 1500e-9);
  // Device 0's steps by start: A 3000-4000, D 4100-4300, B 7000-7100, C 8000-8200.
  ASSERT_EQ(s.gap_seconds.size(), 3u);
  EXPECT_DOUBLE_EQ(s.gap_seconds[0], 100e-9);
  EXPECT_DOUBLE_EQ(s.gap_seconds[1], 2700e-9);
  EXPECT_DOUBLE_EQ(s.gap_seconds[2], 900e-9);
}

TEST(StepTimes, OverlappingStepsLeaveNoGapAndDevicesAreApart) {
  Timeline t;
  t.records = {step(0, 1000, 1),    step(200, 300, 2),      step(900, 1500, 3),
               step(1400, 1600, 1), step(5000, 6000, 1, 1), step(6500, 7000, 1, 1)};
  const StepTimes s = step_times(t);
  EXPECT_EQ(s.steps, 6u);
  EXPECT_TRUE(s.input_copy_seconds.empty());
  // Device 0: each step starts before the latest end so far (a short kernel inside a long one
  // does not move it back). Device 1: 500 ns; no gap across devices.
  ASSERT_EQ(s.gap_seconds.size(), 4u);
  EXPECT_DOUBLE_EQ(s.gap_seconds[0], 0.0);
  EXPECT_DOUBLE_EQ(s.gap_seconds[1], 0.0);
  EXPECT_DOUBLE_EQ(s.gap_seconds[2], 0.0);
  EXPECT_DOUBLE_EQ(s.gap_seconds[3], 500e-9);
}

TEST(StepTimes, CopiesAfterTheLastStepOfAStreamAreNoStepsInput) {
  Timeline t;
  t.records = {h2d(0, 100, 4), step(200, 300, 4), h2d(400, 500, 4)};
  const StepTimes s = step_times(t);
  EXPECT_EQ(s.steps, 1u);
  ASSERT_EQ(s.input_copy_seconds.size(), 1u);
  EXPECT_DOUBLE_EQ(s.input_copy_seconds[0], 100e-9);
  EXPECT_TRUE(s.gap_seconds.empty());
  EXPECT_EQ(step_times(Timeline{}).steps, 0u);
}

}  // namespace
}  // namespace pathbench::test_step_times
