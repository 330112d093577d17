// A TimelineCapture on a machine without a usable GPU (or a build without CUDA) comes up inert,
// says why, never throws and never crashes. Skipped where a CUDA device is visible: there the
// GPU tests (tests/gpu/test_cupti_timeline_gpu.cpp) cover the capture.
#include <gtest/gtest.h>

#include <string>

#include "cuda/cuda_probe.hpp"
#include "timeline/cupti_library.hpp"
#include "timeline/cupti_timeline.hpp"
#include "timeline/timeline.hpp"

namespace pathbench::test_cupti_inert {
namespace {

#define PATHBENCH_REQUIRE_NO_GPU()                                                       \
  do {                                                                                   \
    if (::pathbench::probe_cuda().unavailable_reason.empty())                            \
      GTEST_SKIP() << "a CUDA device is visible: the GPU tests cover the CUPTI capture"; \
  } while (0)

TEST(CuptiInert, CaptureWithoutDeviceIsInertWithReason) {
  PATHBENCH_REQUIRE_NO_GPU();
  TimelineCapture capture(TimelineCapture::Options{});
  EXPECT_FALSE(capture.active());
  const std::string reason = capture.unavailable_reason();
  ASSERT_FALSE(reason.empty());
#ifdef PATHBENCH_HAVE_CUDA
  EXPECT_NE(reason.find("CUPTI"), std::string::npos) << reason;
#else
  EXPECT_EQ(reason, "pathbench was built without CUDA: no CUPTI timeline");
#endif
  const Timeline timeline = capture.collect();
  EXPECT_TRUE(timeline.records.empty());
  EXPECT_EQ(timeline.dropped_records, 0u);
  EXPECT_EQ(timeline.unavailable_reason, reason);
  // collect() may be called again; the capture stays inert.
  EXPECT_EQ(capture.collect().unavailable_reason, reason);
  EXPECT_FALSE(capture.active());
}

TEST(CuptiInert, UnifiedMemoryCountersWithoutDeviceIsInert) {
  PATHBENCH_REQUIRE_NO_GPU();
  TimelineCapture::Options options;
  options.unified_memory_counters = true;
  TimelineCapture capture(options);
  EXPECT_FALSE(capture.active());
  EXPECT_FALSE(capture.unavailable_reason().empty());
  EXPECT_EQ(capture.collect().unavailable_reason, capture.unavailable_reason());
}

TEST(CuptiInert, RepeatedAndNestedCapturesStayInert) {
  PATHBENCH_REQUIRE_NO_GPU();
  for (int i = 0; i < 3; ++i) {
    TimelineCapture outer(TimelineCapture::Options{});
    TimelineCapture inner(TimelineCapture::Options{});
    EXPECT_FALSE(outer.active());
    EXPECT_FALSE(inner.active());
    EXPECT_FALSE(inner.unavailable_reason().empty());
    EXPECT_TRUE(outer.collect().records.empty());
    EXPECT_TRUE(inner.collect().records.empty());
  }
}

#ifdef PATHBENCH_HAVE_CUDA
TEST(CuptiInert, NoDriverReasonNamesTheDriver) {
  PATHBENCH_REQUIRE_NO_GPU();
  TimelineCapture capture(TimelineCapture::Options{});
  const std::string reason = capture.unavailable_reason();
  // Without a GPU the driver is usually missing altogether (this build machine); a machine with
  // a driver but no visible device gets CUPTI's own error instead.
  const bool driver_missing = probe_cuda().driver_version.has_value() == false;
  if (driver_missing) {
    EXPECT_NE(reason.find("driver"), std::string::npos) << reason;
  }
}
#endif

TEST(CuptiLibrary, PathMatchesTheBuild) {
  const std::string path = cupti_library_path();
#ifdef PATHBENCH_HAVE_CUDA
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(path.front(), '/') << path;
  EXPECT_NE(path.find("libcupti"), std::string::npos) << path;
#else
  EXPECT_TRUE(path.empty()) << path;
#endif
}

}  // namespace
}  // namespace pathbench::test_cupti_inert
