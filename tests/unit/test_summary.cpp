#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "stats/summary.hpp"

namespace pathbench::test_summary {
namespace {

TEST(Summary, OneToTenMatchesNumpy) {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const Summary s = summarize(x);
  EXPECT_EQ(s.n, 10u);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.p10, 1.9);
  EXPECT_DOUBLE_EQ(s.p90, 9.1);
  EXPECT_DOUBLE_EQ(s.stddev, 3.0276503540974917);
  EXPECT_DOUBLE_EQ(s.cv, 3.0276503540974917 / 5.5);
}

TEST(Summary, UnsortedOddCount) {
  // Sorted: 1.25 2 3.5 7.75 9. p10 sits at index 0.4, p90 at index 3.6.
  const std::vector<double> x = {3.5, 1.25, 9.0, 2.0, 7.75};
  const Summary s = summarize(x);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.min, 1.25);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(s.mean, 4.7);
  EXPECT_DOUBLE_EQ(s.p10, 1.55);
  EXPECT_DOUBLE_EQ(s.p90, 8.5);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(48.425 / 4));
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(48.425 / 4) / 4.7);
}

TEST(Summary, UnsortedEqualsSorted) {
  const std::vector<double> sorted = {0.5, 1.0, 2.0, 4.0, 8.0, 16.0};
  const std::vector<double> shuffled = {8.0, 0.5, 16.0, 2.0, 1.0, 4.0};
  const Summary a = summarize(sorted);
  const Summary b = summarize(shuffled);
  EXPECT_EQ(a.median, b.median);
  EXPECT_EQ(a.p10, b.p10);
  EXPECT_EQ(a.p90, b.p90);
  EXPECT_DOUBLE_EQ(a.median, 3.0);
}

TEST(Summary, SingleSample) {
  const std::vector<double> x = {42.0};
  const Summary s = summarize(x);
  EXPECT_EQ(s.n, 1u);
  EXPECT_EQ(s.median, 42.0);
  EXPECT_EQ(s.min, 42.0);
  EXPECT_EQ(s.max, 42.0);
  EXPECT_EQ(s.mean, 42.0);
  EXPECT_EQ(s.p10, 42.0);
  EXPECT_EQ(s.p90, 42.0);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.cv, 0.0);
}

TEST(Summary, EmptyIsAllZero) {
  const Summary s = summarize({});
  EXPECT_EQ(s.n, 0u);
  EXPECT_EQ(s.median, 0.0);
  EXPECT_EQ(s.min, 0.0);
  EXPECT_EQ(s.max, 0.0);
  EXPECT_EQ(s.mean, 0.0);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.cv, 0.0);
}

TEST(Summary, ZeroMeanGivesZeroCv) {
  const std::vector<double> x = {-1.0, 1.0};
  const Summary s = summarize(x);
  EXPECT_EQ(s.mean, 0.0);
  EXPECT_GT(s.stddev, 0.0);
  EXPECT_EQ(s.cv, 0.0);
}

TEST(Summary, ConstantSamplesHaveZeroSpread) {
  const std::vector<double> x(7, 3.25);
  const Summary s = summarize(x);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.cv, 0.0);
  EXPECT_EQ(s.p10, 3.25);
  EXPECT_EQ(s.p90, 3.25);
}

TEST(Summary, NonFiniteSamplesThrow) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW(summarize(std::vector<double>{1.0, nan, 2.0}), std::invalid_argument);
  EXPECT_THROW(summarize(std::vector<double>{inf}), std::invalid_argument);
  EXPECT_THROW(summarize(std::vector<double>{1.0, -inf}), std::invalid_argument);
}

TEST(Percentile, EndsAndInterpolation) {
  const std::vector<double> x = {10, 20, 30, 40};
  EXPECT_EQ(percentile(x, 0.0), 10.0);
  EXPECT_EQ(percentile(x, 1.0), 40.0);
  EXPECT_DOUBLE_EQ(percentile(x, 0.5), 25.0);
  EXPECT_DOUBLE_EQ(percentile(x, 0.25), 17.5);
  EXPECT_DOUBLE_EQ(percentile(x, 0.75), 32.5);
}

TEST(Percentile, RejectsBadArguments) {
  const std::vector<double> x = {1, 2};
  EXPECT_THROW(percentile({}, 0.5), std::invalid_argument);
  EXPECT_THROW(percentile(x, -0.1), std::invalid_argument);
  EXPECT_THROW(percentile(x, 1.1), std::invalid_argument);
  EXPECT_THROW(percentile(x, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

TEST(SummaryJson, OrderedKeysAndRoundTrip) {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const Summary s = summarize(x);
  nlohmann::ordered_json j = s;
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"n", "median", "min", "max", "mean", "p10", "p90",
                                            "stddev", "cv"}));
  EXPECT_TRUE(j.at("n").is_number_unsigned());

  const nlohmann::json plain = nlohmann::json::parse(j.dump());
  const Summary back = plain.get<Summary>();
  EXPECT_EQ(back.n, s.n);
  EXPECT_EQ(back.median, s.median);
  EXPECT_EQ(back.min, s.min);
  EXPECT_EQ(back.max, s.max);
  EXPECT_EQ(back.mean, s.mean);
  EXPECT_EQ(back.p10, s.p10);
  EXPECT_EQ(back.p90, s.p90);
  EXPECT_EQ(back.stddev, s.stddev);
  EXPECT_EQ(back.cv, s.cv);
}

TEST(SummaryJson, MissingFieldThrows) {
  const nlohmann::json j = {{"n", 1}, {"median", 1.0}};
  EXPECT_THROW(j.get<Summary>(), nlohmann::json::exception);
}

}  // namespace
}  // namespace pathbench::test_summary
