#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "measure/sample_builder.hpp"

namespace pathbench::test_sample_builder {
namespace {

std::vector<MetricSpec> metrics() {
  return {{"latency", "s", Better::kLower, true},
          {"throughput", "requests/s", Better::kHigher},
          {"gap", "s", Better::kLower, true}};
}

TEST(SampleBuilder, PlacesValuesAndDurationsInTheMetricsOrderWhateverTheCallOrder) {
  SampleBuilder b(metrics());
  const Sample s =
      b.operations("gap", {3, 4}).value("throughput", 250).operations("latency", {1, 2}).build(0.5);
  EXPECT_DOUBLE_EQ(s.seconds, 0.5);
  ASSERT_EQ(s.values.size(), 3u);
  EXPECT_DOUBLE_EQ(s.values[1], 250);
  ASSERT_EQ(s.operation_seconds.size(), 3u);
  EXPECT_EQ(s.operation_seconds[0], (std::vector<double>{1, 2}));
  EXPECT_TRUE(s.operation_seconds[1].empty());
  EXPECT_EQ(s.operation_seconds[2], (std::vector<double>{3, 4}));
  // The builder starts over for the next sample.
  EXPECT_THROW(b.build(1), std::logic_error);
}

TEST(SampleBuilder, RefusesUnknownUnsetTwiceSetAndWrongKindMetrics) {
  SampleBuilder b(metrics());
  EXPECT_THROW(b.value("bandwidth", 1), std::logic_error);
  EXPECT_THROW(b.value("latency", 1), std::logic_error);
  EXPECT_THROW(b.operations("throughput", {1}), std::logic_error);
  b.value("throughput", 1);
  EXPECT_THROW(b.value("throughput", 2), std::logic_error);
  b.operations("latency", {1});
  try {
    b.build(1);
    FAIL() << "a sample without gap was built";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "metric gap was not set");
  }
}

}  // namespace
}  // namespace pathbench::test_sample_builder
