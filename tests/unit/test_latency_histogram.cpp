#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "stats/latency_histogram.hpp"
#include "stats/summary.hpp"

namespace pathbench::test_latency_histogram {
namespace {

using nlohmann::json;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint64_t kMaxU64 = std::numeric_limits<std::uint64_t>::max();

double precision_bound(int digits) { return std::pow(10.0, -digits); }

int sub_buckets_for(int digits) { return digits == 1 ? 16 : digits == 2 ? 128 : 1024; }

LatencyHistogram histogram_of(const std::vector<double>& samples,
                              LatencyHistogramConfig config = {}) {
  LatencyHistogram h(config);
  for (double x : samples) h.record(x);
  return h;
}

// 1 s .. 8 s at 1 digit (16 sub-buckets): small enough that every edge is known by hand.
LatencyHistogramConfig small_config() {
  return {.lowest = 1.0, .highest = 8.0, .significant_digits = 1};
}

// Samples of small_config() whose sum is exact in binary: 0 (bucket 0), 1.03125 and 1.0625
// (bucket 1, edge 1.0625), 3 (an edge itself) and 9 (overflow).
LatencyHistogram small_histogram() {
  return histogram_of({0.0, 1.03125, 1.0625, 3.0, 9.0}, small_config());
}

std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument thrown)";
}

// ---- configuration and buckets ----------------------------------------------------------------

TEST(LatencyHistogramConfig, DefaultsAreOneNanosecondToThousandSecondsAtTwoDigits) {
  const LatencyHistogram h;
  EXPECT_EQ(h.config().lowest, 1e-9);
  EXPECT_EQ(h.config().highest, 1000.0);
  EXPECT_EQ(h.config().significant_digits, 2);
  // 1 + 128 * 39 whole octaves + 105 sub-buckets of the 40th (1000 / (1e-9 * 2^39) = 1.819).
  EXPECT_EQ(h.bucket_count(), 5098u);
  EXPECT_EQ(LatencyHistogram({.significant_digits = 1}).bucket_count(), 639u);
  EXPECT_EQ(LatencyHistogram({.significant_digits = 3}).bucket_count(), 40776u);
}

TEST(LatencyHistogramConfig, PowerOfTwoRangeHasWholeOctaves) {
  const LatencyHistogram h({.lowest = 1.0, .highest = 1024.0, .significant_digits = 2});
  EXPECT_EQ(h.bucket_count(), 1u + 10u * 128u);
  // The widest range allowed, 2^63, stays within the documented 64 * S buckets.
  const LatencyHistogram widest({.lowest = 1.0, .highest = 0x1p63, .significant_digits = 3});
  EXPECT_EQ(widest.bucket_count(), 1u + 63u * 1024u);
  EXPECT_LE(widest.bucket_count(), 64u * 1024u);
}

TEST(LatencyHistogramConfig, RejectsEachOutOfRangeField) {
  struct Bad {
    LatencyHistogramConfig config;
    std::string field;
  };
  const std::vector<Bad> bad = {
      {{.lowest = 0.0}, "lowest"},
      {{.lowest = -1e-9}, "lowest"},
      {{.lowest = kNan}, "lowest"},
      {{.lowest = kInf}, "lowest"},
      {{.lowest = 1.0, .highest = 1.0}, "highest"},
      {{.lowest = 1.0, .highest = 0.5}, "highest"},
      {{.highest = kInf}, "highest"},
      {{.highest = kNan}, "highest"},
      {{.lowest = 1.0, .highest = 0x1p64}, "highest"},
      {{.significant_digits = 0}, "significant_digits"},
      {{.significant_digits = 4}, "significant_digits"},
  };
  for (const Bad& b : bad) {
    const std::string message = message_of([&] { LatencyHistogram h(b.config); });
    EXPECT_EQ(message.rfind("LatencyHistogram: " + b.field + " ", 0), 0u) << message;
  }
}

TEST(LatencyHistogramBuckets, KnownEdgesOfASmallRange) {
  const LatencyHistogram h(small_config());
  ASSERT_EQ(h.bucket_count(), 1u + 3u * 16u);
  EXPECT_EQ(h.bucket_upper_edge(0), 1.0);
  EXPECT_EQ(h.bucket_upper_edge(1), 1.0625);
  EXPECT_EQ(h.bucket_upper_edge(16), 2.0);
  EXPECT_EQ(h.bucket_upper_edge(17), 2.125);
  EXPECT_EQ(h.bucket_upper_edge(24), 3.0);
  EXPECT_EQ(h.bucket_upper_edge(33), 4.25);
  EXPECT_EQ(h.bucket_upper_edge(48), 8.0);
  EXPECT_THROW(h.bucket_upper_edge(49), std::out_of_range);
  EXPECT_THROW(h.count_in_bucket(49), std::out_of_range);

  // Buckets are closed above: an edge belongs to the bucket it ends.
  EXPECT_EQ(h.bucket_index(0.0), 0u);
  EXPECT_EQ(h.bucket_index(0.25), 0u);
  EXPECT_EQ(h.bucket_index(1.0), 0u);
  EXPECT_EQ(h.bucket_index(1.03125), 1u);
  EXPECT_EQ(h.bucket_index(1.0625), 1u);
  EXPECT_EQ(h.bucket_index(1.0626), 2u);
  EXPECT_EQ(h.bucket_index(2.0), 16u);
  EXPECT_EQ(h.bucket_index(2.0001), 17u);
  EXPECT_EQ(h.bucket_index(3.0), 24u);
  EXPECT_EQ(h.bucket_index(8.0), 48u);
  EXPECT_EQ(h.bucket_index(8.0001), 49u);  // overflow
  EXPECT_THROW(h.bucket_index(-1.0), std::invalid_argument);
  EXPECT_THROW(h.bucket_index(kNan), std::invalid_argument);
}

TEST(LatencyHistogramBuckets, EdgesIncreaseAndEachBucketIsNarrowerThanThePrecision) {
  for (int digits = 1; digits <= 3; ++digits) {
    SCOPED_TRACE(digits);
    const LatencyHistogram h({.significant_digits = digits});
    EXPECT_EQ(h.bucket_upper_edge(0), 1e-9);
    EXPECT_EQ(h.bucket_upper_edge(h.bucket_count() - 1), 1000.0);
    double widest = 0;
    for (std::size_t i = 1; i < h.bucket_count(); ++i) {
      const double lower = h.bucket_upper_edge(i - 1);
      const double upper = h.bucket_upper_edge(i);
      ASSERT_GT(upper, lower) << i;
      ASSERT_LE(upper - lower, precision_bound(digits) * lower) << i;
      widest = std::max(widest, (upper - lower) / lower);
    }
    // The widest is the first sub-bucket of an octave: exactly 1/S of its lower edge.
    EXPECT_NEAR(widest, 1.0 / sub_buckets_for(digits), 1e-12);
  }
}

TEST(LatencyHistogramBuckets, EveryEdgeLiesInItsOwnBucketAndTheNextDoubleInTheNext) {
  for (int digits = 1; digits <= 3; ++digits) {
    SCOPED_TRACE(digits);
    const LatencyHistogram h({.significant_digits = digits});
    for (std::size_t i = 0; i < h.bucket_count(); ++i) {
      const double edge = h.bucket_upper_edge(i);
      ASSERT_EQ(h.bucket_index(edge), i);
      ASSERT_EQ(h.bucket_index(std::nextafter(edge, kInf)), i + 1);
      ASSERT_EQ(h.bucket_index(std::nextafter(edge, 0.0)), i);
    }
  }
}

// ---- recording and the exact statistics -------------------------------------------------------

TEST(LatencyHistogramRecord, RejectsNegativeAndNonFiniteAndLeavesTheHistogramAlone) {
  LatencyHistogram h;
  h.record(5e-6);
  const LatencyHistogram before = h;
  for (const double bad : {-1e-9, -1.0, kNan, kInf, -kInf}) {
    const std::string message = message_of([&] { h.record(bad); });
    EXPECT_NE(message.find("LatencyHistogram::record: a duration must be a finite number of "
                           "seconds >= 0"),
              std::string::npos)
        << message;
    EXPECT_EQ(h, before);
  }
  EXPECT_EQ(h.count(), 1u);
}

TEST(LatencyHistogramRecord, ZeroAndValuesBelowLowestGoToBucketZero) {
  LatencyHistogram h;
  h.record(0.0);
  h.record(-0.0);
  h.record(4e-10);
  EXPECT_EQ(h.count_in_bucket(0), 3u);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.min(), 0.0);
  EXPECT_FALSE(std::signbit(h.min()));  // -0.0 is recorded as 0
  EXPECT_EQ(h.max(), 4e-10);
  EXPECT_EQ(h.value_at_quantile(0.5), 4e-10);  // bucket 0's edge (1 ns) clamped to max
}

TEST(LatencyHistogramRecord, ValuesAboveHighestOverflowAndMaxStaysExact) {
  LatencyHistogram h;
  h.record(1000.0);  // highest itself is the last bucket's edge
  h.record(1000.5);
  h.record(1e9);
  EXPECT_EQ(h.count_in_bucket(h.bucket_count() - 1), 1u);
  EXPECT_EQ(h.overflow_count(), 2u);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.max(), 1e9);
  EXPECT_EQ(h.value_at_quantile(0.5), 1e9);  // rank 2 is overflowed: all that is known is max
  EXPECT_EQ(h.value_at_quantile(0.3), 1000.0);
}

TEST(LatencyHistogramRecord, ChronoDurationsAreSeconds) {
  LatencyHistogram h;
  h.record(std::chrono::microseconds(9));
  h.record(std::chrono::nanoseconds(1200000));
  EXPECT_EQ(h.min(), 9e-6);
  EXPECT_EQ(h.max(), 1.2e-3);
}

TEST(LatencyHistogramStats, CountMinMaxSumMean) {
  const LatencyHistogram h = histogram_of({0.5, 0.125, 0.25});
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.min(), 0.125);
  EXPECT_EQ(h.max(), 0.5);
  EXPECT_EQ(h.sum(), 0.875);
  EXPECT_EQ(h.mean(), 0.875 / 3);
  const LatencyHistogram empty;
  EXPECT_EQ(empty.count(), 0u);
  EXPECT_EQ(empty.min(), 0.0);
  EXPECT_EQ(empty.max(), 0.0);
  EXPECT_EQ(empty.sum(), 0.0);
  EXPECT_EQ(empty.mean(), 0.0);
}

TEST(LatencyHistogramStats, SumIsExactWhereAddingDoublesIsNot) {
  LatencyHistogram tenths;
  double naive = 0;
  for (int i = 0; i < 10; ++i) {
    tenths.record(0.1);
    naive += 0.1;
  }
  EXPECT_NE(naive, 1.0);         // 0.9999999999999999
  EXPECT_EQ(tenths.sum(), 1.0);  // 10 * 0.1000000000000000055... rounds to 1
  EXPECT_EQ(tenths.mean(), 0.1);

  // 2^53 + 1 is a tie and rounds to even (2^53); the next 1 makes it exact again, which a double
  // accumulator (stuck at 2^53) never sees.
  LatencyHistogram big;
  big.record(0x1p53);
  big.record(1.0);
  EXPECT_EQ(big.sum(), 0x1p53);
  big.record(1.0);
  EXPECT_EQ(big.sum(), 0x1p53 + 2);
  big.record(1.0);  // 2^53 + 3: a tie between +2 and +4, to the even significand
  EXPECT_EQ(big.sum(), 0x1p53 + 4);
  // Just above a tie rounds up, however far below the rounding bit the excess is.
  for (const double excess : {0x1p-5, 0x1p-20, 0x1p-200}) {
    const LatencyHistogram above_tie = histogram_of({0x1p53, 1.0, excess});
    EXPECT_EQ(above_tie.sum(), 0x1p53 + 2) << excess;
  }

  LatencyHistogram tiny;
  const double denorm = std::numeric_limits<double>::denorm_min();
  for (int i = 0; i < 3; ++i) tiny.record(denorm);
  EXPECT_EQ(tiny.sum(), 3 * denorm);

  LatencyHistogram apart;
  apart.record(1e300);
  apart.record(1e-300);
  EXPECT_EQ(apart.sum(), 1e300);
}

TEST(LatencyHistogramStats, SumIsExactAtEveryExponent) {
  // Each double lands at its own bit offset of the fixed-point sum; x and x + x are exact, so
  // any bit lost at any offset shows.
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::uint64_t> significands(0, (std::uint64_t{1} << 52) - 1);
  for (int exponent = -1074; exponent <= 1023; ++exponent) {
    const double fraction = std::ldexp(static_cast<double>(significands(rng)), -52);
    const double x = exponent < -1022 ? std::ldexp(1.0, exponent)  // subnormal: one bit
                                      : std::ldexp(1.0 + fraction, exponent);
    LatencyHistogram h(small_config());
    h.record(x);
    ASSERT_EQ(h.sum(), x) << exponent;
    h.record(x);
    ASSERT_EQ(h.sum(), 2 * x) << exponent;  // +inf for the top exponent, as 2 * x is
  }
}

TEST(LatencyHistogramStats, SumCarriesAcrossAFullWord) {
  // With 2^-1074 as the unit, bits 1088..1151 (values 2^14 .. 2^77) are one 64-bit word. These
  // values fill it with ones; 2^13 + 2^13 then carries out of the word below, through it.
  const std::vector<double> filling = {std::ldexp(0x1p53 - 1, 25), std::ldexp(0x1p11 - 1, 14),
                                       0x1p13};
  LatencyHistogram recorded = histogram_of(filling);
  recorded.record(0x1p13);
  EXPECT_EQ(recorded.sum(), 0x1p78);
  LatencyHistogram merged = histogram_of(filling);
  merged.merge(histogram_of({0x1p13}));
  EXPECT_EQ(merged.sum(), 0x1p78);
}

TEST(LatencyHistogramStats, SumOfManyDyadicSamplesEqualsTheIntegerSum) {
  // Samples k * 2^-30 s: their exact sum is an integer sum, known without rounding.
  std::mt19937_64 rng(12);
  std::uniform_int_distribution<std::uint64_t> numerators(1, std::uint64_t{1} << 40);
  LatencyHistogram h;
  std::uint64_t numerator_sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t k = numerators(rng);
    numerator_sum += k;
    h.record(std::ldexp(static_cast<double>(k), -30));
  }
  EXPECT_EQ(h.sum(), std::ldexp(static_cast<double>(numerator_sum), -30));
}

TEST(LatencyHistogramStats, SumBeyondTheLargestDoubleCannotBeWritten) {
  LatencyHistogram h;
  h.record(std::numeric_limits<double>::max());
  h.record(std::numeric_limits<double>::max());
  EXPECT_EQ(h.sum(), kInf);
  EXPECT_THROW(h.to_json(), std::overflow_error);
}

// ---- quantiles --------------------------------------------------------------------------------

TEST(LatencyHistogramQuantile, RejectsBadQAndEmptyHistograms) {
  EXPECT_NE(message_of([] { LatencyHistogram().value_at_quantile(0.5); }).find("no samples"),
            std::string::npos);
  const LatencyHistogram h = histogram_of({1e-6});
  for (const double q : {-0.01, 1.01, kNan, kInf}) {
    EXPECT_NE(message_of([&] { h.value_at_quantile(q); }).find("q must be in [0, 1]"),
              std::string::npos);
  }
}

TEST(LatencyHistogramQuantile, OneSampleIsEveryQuantileExactly) {
  const LatencyHistogram h = histogram_of({7.3e-6});
  for (const double q : {0.0, 1e-9, 0.25, 0.5, 0.99, 0.999999, 1.0}) {
    EXPECT_EQ(h.value_at_quantile(q), 7.3e-6) << q;
  }
}

TEST(LatencyHistogramQuantile, NearestRankRepresentedByTheBucketEdge) {
  std::vector<double> samples;
  for (int i = 1; i <= 100; ++i) samples.push_back(i * 1e-6);
  const LatencyHistogram h = histogram_of(samples);
  auto edge_of = [&](double x) { return h.bucket_upper_edge(h.bucket_index(x)); };
  EXPECT_EQ(h.value_at_quantile(0.0), samples.front());
  EXPECT_EQ(h.value_at_quantile(1.0), samples.back());
  // Rank ceil(0.5 * 100) = 50: the 50 us sample, given as its bucket's upper edge.
  const double p50 = h.value_at_quantile(0.5);
  EXPECT_EQ(p50, edge_of(samples[49]));
  EXPECT_GE(p50, samples[49]);
  EXPECT_LE(p50, samples[49] * (1 + 0.01));
  EXPECT_EQ(h.value_at_quantile(0.505), edge_of(samples[50]));  // rank ceil(50.5) = 51
  // Rank 100 is max, whose bucket edge is clamped to it.
  EXPECT_EQ(h.value_at_quantile(0.995), samples.back());
  // Rank 1 (any q > 0 that small) is min's bucket.
  EXPECT_EQ(h.value_at_quantile(1e-12), edge_of(samples.front()));
}

TEST(LatencyHistogramQuantile, NonDecreasingInQ) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> latency(std::log(20e-6), 1.5);
  LatencyHistogram h;
  for (int i = 0; i < 20000; ++i) h.record(latency(rng));
  double previous = h.value_at_quantile(0.0);
  for (int i = 1; i <= 10000; ++i) {
    const double value = h.value_at_quantile(i / 10000.0);
    ASSERT_GE(value, previous) << i;
    previous = value;
  }
  EXPECT_EQ(previous, h.max());
}

struct Distribution {
  std::string name;
  std::function<double(std::mt19937_64&)> draw;
};

std::vector<Distribution> synthetic_distributions() {
  return {
      {"uniform 1us..1ms",
       [](std::mt19937_64& rng) {
         return std::uniform_real_distribution<double>(1e-6, 1e-3)(rng);
       }},
      {"2us + exponential(mean 50us)",
       [](std::mt19937_64& rng) {
         return 2e-6 + std::exponential_distribution<double>(1.0 / 50e-6)(rng);
       }},
      {"lognormal(median 20us, sigma 1)",
       [](std::mt19937_64& rng) {
         return std::lognormal_distribution<double>(std::log(20e-6), 1.0)(rng);
       }},
      {"bimodal 9us + 1% at 1.2ms",
       [](std::mt19937_64& rng) {
         const bool slow = std::bernoulli_distribution(0.01)(rng);
         const double median = slow ? 1.2e-3 : 9e-6;
         return std::lognormal_distribution<double>(std::log(median), 0.05)(rng);
       }},
  };
}

// n - 1 = 10^5, so that every q = m / 10^5 asked for below is an exact order statistic for
// percentile() (NumPy's linear interpolation) and also the nearest rank ceil(q * n) that the
// histogram reports: the two answers are the same sample, and any difference is the histogram's.
constexpr std::size_t kSyntheticSamples = 100001;

class SyntheticQuantiles : public ::testing::TestWithParam<std::tuple<std::size_t, int>> {};

TEST_P(SyntheticQuantiles, RelativeErrorWithinPrecisionOfTheExactOrderStatistic) {
  const std::size_t distribution_index = std::get<0>(GetParam());
  const int digits = std::get<1>(GetParam());
  const Distribution distribution = synthetic_distributions()[distribution_index];
  std::mt19937_64 rng(20240612 + distribution_index);
  std::vector<double> samples(kSyntheticSamples);
  for (double& x : samples) x = distribution.draw(rng);
  const LatencyHistogram h = histogram_of(samples, {.significant_digits = digits});
  std::sort(samples.begin(), samples.end());
  const double bound = precision_bound(digits);
  const auto n = static_cast<double>(kSyntheticSamples - 1);

  double worst = 0;
  auto check = [&](double q) {
    const double exact = percentile(samples, q);
    const double estimate = h.value_at_quantile(q);
    const double error = std::abs(estimate - exact) / exact;
    EXPECT_LE(error, bound) << distribution.name << " q=" << q << " exact " << exact
                            << " histogram " << estimate;
    worst = std::max(worst, error);
  };
  for (const double q : {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999,
                         0.9995, 0.9999, 1.0}) {
    check(q);
  }
  // Every 97th rank, and each of the last 500 (the tail, where P99.9 lives). At q = j / (n - 1)
  // the histogram's sample is exactly sorted[j], and its edge is never below it.
  std::vector<std::size_t> ranks;
  for (std::size_t j = 0; j < kSyntheticSamples; j += 97) ranks.push_back(j);
  for (std::size_t j = kSyntheticSamples - 500; j < kSyntheticSamples; ++j) ranks.push_back(j);
  for (const std::size_t j : ranks) {
    const double q = static_cast<double>(j) / n;
    check(q);
    EXPECT_GE(h.value_at_quantile(q), samples[j]) << j;
  }
  std::printf("[ quantile ] %-32s digits %d: worst relative error %.3e (bound %.0e)\n",
              distribution.name.c_str(), digits, worst, bound);
  EXPECT_GT(worst, 0.0);  // the histogram is not secretly storing samples
}

INSTANTIATE_TEST_SUITE_P(AllDistributionsAndDigits, SyntheticQuantiles,
                         ::testing::Combine(::testing::Values<std::size_t>(0, 1, 2, 3),
                                            ::testing::Values(1, 2, 3)));

TEST(LatencyHistogramQuantile, BimodalTailIsTheSlowModeNotAnInterpolation) {
  // 99 % near 9 us and 1 % near 1.2 ms, in random order. Around rank 99000 the answer jumps from
  // one mode to the other; a histogram interpolating between buckets would report a value
  // between the modes that no request took.
  std::mt19937_64 rng(7);
  std::vector<double> samples;
  for (int i = 0; i < 99000; ++i) samples.push_back(9e-6 * (1 + 1e-4 * (i % 100)));
  for (int i = 0; i < 1000; ++i) samples.push_back(1.2e-3 * (1 + 1e-3 * (i % 10)));
  std::shuffle(samples.begin(), samples.end(), rng);
  const LatencyHistogram h = histogram_of(samples);
  std::sort(samples.begin(), samples.end());
  auto expect_sample_of_rank = [&](double q, std::size_t rank) {
    const double exact = samples[rank - 1];
    const double estimate = h.value_at_quantile(q);
    EXPECT_GE(estimate, exact) << q;
    EXPECT_LE(estimate, exact * 1.01) << q;
  };
  expect_sample_of_rank(0.5, 50000);
  expect_sample_of_rank(0.989995, 99000);  // ceil(98999.5): the slowest fast sample
  expect_sample_of_rank(0.990005, 99001);  // ceil(99000.5): the fastest slow sample
  expect_sample_of_rank(0.999, 99900);
  EXPECT_LT(h.value_at_quantile(0.989995), 9.2e-6);
  EXPECT_GE(h.value_at_quantile(0.990005), 1.2e-3);
}

// ---- merging ----------------------------------------------------------------------------------

std::vector<double> mixed_samples(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<double> samples;
  for (int i = 0; i < n; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    if (u < 0.001) {
      samples.push_back(0.0);
    } else if (u < 0.002) {
      samples.push_back(2000.0 * (1 + u));  // overflow
    } else if (u < 0.012) {
      samples.push_back(std::lognormal_distribution<double>(std::log(1.2e-3), 0.1)(rng));
    } else {
      samples.push_back(std::lognormal_distribution<double>(std::log(9e-6), 0.3)(rng));
    }
  }
  return samples;
}

TEST(LatencyHistogramMerge, AssociativeCommutativeAndEqualToRecordingEverything) {
  const std::vector<double> samples = mixed_samples(5, 60000);
  LatencyHistogram a, b, c;
  std::mt19937_64 rng(6);
  for (const double x : samples) {
    const auto part = std::uniform_int_distribution<int>(0, 2)(rng);
    (part == 0 ? a : part == 1 ? b : c).record(x);
  }
  ASSERT_GT(a.overflow_count() * b.overflow_count() * c.overflow_count(), 0u);
  const LatencyHistogram all = histogram_of(samples);

  auto merged = [](LatencyHistogram first, const LatencyHistogram& second) {
    first.merge(second);
    return first;
  };
  const LatencyHistogram ab_c = merged(merged(a, b), c);
  const LatencyHistogram a_bc = merged(a, merged(b, c));
  const LatencyHistogram cb_a = merged(merged(c, b), a);
  const LatencyHistogram b_ac = merged(b, merged(a, c));
  const LatencyHistogram ca_b = merged(merged(c, a), b);
  for (const LatencyHistogram* h : {&ab_c, &a_bc, &cb_a, &b_ac, &ca_b}) {
    EXPECT_EQ(*h, all);
    EXPECT_EQ(h->to_json().dump(), all.to_json().dump());  // the sum to the last bit
    EXPECT_EQ(h->value_at_quantile(0.999), all.value_at_quantile(0.999));
  }
  EXPECT_EQ(merged(a, b), merged(b, a));
  EXPECT_EQ(all.count(), samples.size());
  EXPECT_EQ(all.min(), *std::min_element(samples.begin(), samples.end()));
  EXPECT_EQ(all.max(), *std::max_element(samples.begin(), samples.end()));
}

TEST(LatencyHistogramMerge, EmptyIsTheIdentity) {
  const LatencyHistogram h = histogram_of({3e-6, 5e-6});
  LatencyHistogram empty_first;
  empty_first.merge(h);
  EXPECT_EQ(empty_first, h);
  EXPECT_EQ(empty_first.min(), 3e-6);  // not the empty histogram's 0
  LatencyHistogram h_then_empty = h;
  h_then_empty.merge(LatencyHistogram());
  EXPECT_EQ(h_then_empty, h);
}

TEST(LatencyHistogramMerge, WithItselfDoublesEveryCount) {
  const LatencyHistogram original = histogram_of(mixed_samples(8, 5000));
  LatencyHistogram doubled = original;
  doubled.merge(doubled);
  EXPECT_EQ(doubled.count(), 2 * original.count());
  EXPECT_EQ(doubled.overflow_count(), 2 * original.overflow_count());
  EXPECT_EQ(doubled.sum(), 2 * original.sum());
  for (std::size_t i = 0; i < original.bucket_count(); ++i) {
    ASSERT_EQ(doubled.count_in_bucket(i), 2 * original.count_in_bucket(i));
  }
}

TEST(LatencyHistogramMerge, DifferentConfigurationsAreRefused) {
  LatencyHistogram h = histogram_of({1e-6});
  const LatencyHistogram before = h;
  const LatencyHistogram other({.significant_digits = 3});
  const std::string message = message_of([&] { h.merge(other); });
  EXPECT_NE(message.find("LatencyHistogram::merge: the configurations differ (lowest 1e-09 s, "
                         "highest 1000 s, 2 significant digits vs lowest 1e-09 s, highest 1000 s, "
                         "3 significant digits)"),
            std::string::npos)
      << message;
  EXPECT_EQ(h, before);
  EXPECT_THROW(h.merge(LatencyHistogram({.highest = 10.0})), std::invalid_argument);
}

// ---- JSON -------------------------------------------------------------------------------------

TEST(LatencyHistogramJson, KnownSmallHistogramIsWrittenExactly) {
  EXPECT_EQ(small_histogram().to_json().dump(),
            R"({"schema":"pathbench.histogram/v1","lowest":1.0,"highest":8.0,)"
            R"("significant_digits":1,"count":5,"min":0.0,"max":9.0,"sum":14.09375,)"
            R"("overflow":1,"buckets":[[1.0,1],[1.0625,2],[3.0,1]]})");
  EXPECT_EQ(LatencyHistogram().to_json().dump(),
            R"({"schema":"pathbench.histogram/v1","lowest":1e-09,"highest":1000.0,)"
            R"("significant_digits":2,"count":0,"min":0.0,"max":0.0,"sum":0.0,)"
            R"("overflow":0,"buckets":[]})");
}

TEST(LatencyHistogramJson, RoundTripThroughTextIsExact) {
  for (int digits = 1; digits <= 3; ++digits) {
    SCOPED_TRACE(digits);
    LatencyHistogram h({.significant_digits = digits});
    for (const double x : mixed_samples(20 + digits, 50000)) h.record(x);
    const std::string text = h.to_json().dump();
    const LatencyHistogram back = LatencyHistogram::from_json(json::parse(text), "t.json: /h");
    EXPECT_EQ(back, h);
    EXPECT_EQ(back.to_json().dump(), text);
    EXPECT_EQ(back.sum(), h.sum());
    EXPECT_EQ(back.min(), h.min());
    EXPECT_EQ(back.max(), h.max());
    for (const double q : {0.0, 0.5, 0.99, 0.999, 1.0}) {
      EXPECT_EQ(back.value_at_quantile(q), h.value_at_quantile(q));
    }
  }
  for (const LatencyHistogram& h : {LatencyHistogram(), small_histogram()}) {
    // An ordered_json (what the repository's reader gives) converts implicitly.
    EXPECT_EQ(LatencyHistogram::from_json(h.to_json(), "x"), h);
  }
}

TEST(LatencyHistogramJson, ReadBackHistogramMergesLikeTheOriginal) {
  const LatencyHistogram a = histogram_of(mixed_samples(30, 2000));
  const LatencyHistogram b = histogram_of(mixed_samples(31, 2000));
  LatencyHistogram from_text = LatencyHistogram::from_json(json::parse(a.to_json().dump()), "a");
  from_text.merge(b);
  LatencyHistogram in_memory = a;
  in_memory.merge(b);
  EXPECT_EQ(from_text.count(), in_memory.count());
  for (std::size_t i = 0; i < a.bucket_count(); ++i) {
    ASSERT_EQ(from_text.count_in_bucket(i), in_memory.count_in_bucket(i));
  }
  EXPECT_EQ(from_text.max(), in_memory.max());
  EXPECT_EQ(from_text.value_at_quantile(0.999), in_memory.value_at_quantile(0.999));
}

struct BadJson {
  std::string name;
  std::function<void(json&)> mutate;
  std::string pointer;  // below the histogram's own pointer
  std::string reason;   // a part of the message after "POINTER: "
};

std::vector<BadJson> bad_json_cases() {
  return {
      {"not an object",
       [](json& j) {
         j = json::array({1, 2});
       },
       "", "must be a JSON object"},
      {"missing count", [](json& j) { j.erase("count"); }, "/count", "is missing"},
      {"missing buckets", [](json& j) { j.erase("buckets"); }, "/buckets", "is missing"},
      {"unknown field", [](json& j) { j["bucket"] = json::array(); }, "",
       "unknown field \"bucket\""},
      {"other schema", [](json& j) { j["schema"] = "pathbench.histogram/v2"; }, "/schema",
       "must be \"pathbench.histogram/v1\", not \"pathbench.histogram/v2\""},
      {"schema not a string", [](json& j) { j["schema"] = 1; }, "/schema", "not 1"},
      {"lowest a string", [](json& j) { j["lowest"] = "1e-9"; }, "/lowest",
       "must be a number, not \"1e-9\""},
      {"lowest negative", [](json& j) { j["lowest"] = -1.0; }, "/lowest",
       "must be a finite number of seconds > 0, not -1"},
      {"highest below lowest", [](json& j) { j["highest"] = 0.5; }, "/highest",
       "greater than lowest (1), not 0.5"},
      {"digits 4", [](json& j) { j["significant_digits"] = 4; }, "/significant_digits",
       "must be 1, 2 or 3, not 4"},
      {"digits 0", [](json& j) { j["significant_digits"] = 0; }, "/significant_digits",
       "must be 1, 2 or 3, not 0"},
      {"digits a float", [](json& j) { j["significant_digits"] = 1.0; }, "/significant_digits",
       "must be a non-negative integer, not 1.0"},
      {"digits a bool", [](json& j) { j["significant_digits"] = true; }, "/significant_digits",
       "must be a non-negative integer, not true"},
      {"count negative", [](json& j) { j["count"] = -1; }, "/count",
       "must not be negative, not -1"},
      {"count a float", [](json& j) { j["count"] = 5.5; }, "/count",
       "must be a non-negative integer, not 5.5"},
      {"count a string", [](json& j) { j["count"] = "5"; }, "/count",
       "must be a non-negative integer, not \"5\""},
      {"count too high", [](json& j) { j["count"] = 6; }, "/count",
       "is 6, but the buckets and overflow hold 5 samples"},
      {"overflow negative", [](json& j) { j["overflow"] = -2; }, "/overflow",
       "must not be negative, not -2"},
      {"overflow too high", [](json& j) { j["overflow"] = 2; }, "/count",
       "is 5, but the buckets and overflow hold 6 samples"},
      {"min negative", [](json& j) { j["min"] = -0.5; }, "/min", "must be >= 0 seconds, not -0.5"},
      {"min null", [](json& j) { j["min"] = nullptr; }, "/min", "must be a number, not null"},
      {"min above max", [](json& j) { j["min"] = 9.5; }, "/min", "9.5 is greater than max 9"},
      {"min outside the lowest bucket", [](json& j) { j["min"] = 1.01; }, "/min",
       "1.01 does not lie in the lowest non-empty bucket"},
      {"max outside the overflow", [](json& j) { j["max"] = 3.0; }, "/max",
       "3 does not lie in the highest non-empty bucket"},
      {"max infinite", [](json& j) { j["max"] = kInf; }, "/max", "must be a finite number"},
      {"sum below max", [](json& j) { j["sum"] = 8.0; }, "/sum", "8 is less than max 9"},
      {"sum negative", [](json& j) { j["sum"] = -1.0; }, "/sum", "must be >= 0 seconds"},
      {"buckets an object", [](json& j) { j["buckets"] = json::object(); }, "/buckets",
       "must be an array of [upper_edge_seconds, count] pairs, not {}"},
      {"bucket not a pair", [](json& j) { j["buckets"][1] = json::array({1.0625}); }, "/buckets/1",
       "must be a pair [upper_edge_seconds, count], not [1.0625]"},
      {"bucket a triple", [](json& j) { j["buckets"][1].push_back(0); }, "/buckets/1",
       "must be a pair"},
      {"edge a string", [](json& j) { j["buckets"][1][0] = "1.0625"; }, "/buckets/1/0",
       "must be a number"},
      {"edge not an edge", [](json& j) { j["buckets"][1][0] = 1.06; }, "/buckets/1/0",
       "1.06 is not a bucket edge of a histogram of lowest 1 s, highest 8 s, 1 significant digits"},
      {"edge negative", [](json& j) { j["buckets"][0][0] = -1.0; }, "/buckets/0/0",
       "-1 is not a bucket edge"},
      {"edge above highest", [](json& j) { j["buckets"][2][0] = 16.0; }, "/buckets/2/0",
       "16 is not a bucket edge"},
      {"edges not increasing", [](json& j) { std::swap(j["buckets"][1], j["buckets"][2]); },
       "/buckets/2/0", "the edges must increase, but 1.0625 follows 3"},
      {"edge repeated",
       [](json& j) {
         j["buckets"] = json::array({json::array({1.0, 1}), json::array({1.0625, 1}),
                                     json::array({1.0625, 1}), json::array({3.0, 1})});
       },
       "/buckets/2/0", "the edges must increase, but 1.0625 follows 1.0625"},
      {"bucket count zero", [](json& j) { j["buckets"][1][1] = 0; }, "/buckets/1/1",
       "must be > 0: only non-empty buckets are listed"},
      {"bucket count negative", [](json& j) { j["buckets"][1][1] = -3; }, "/buckets/1/1",
       "must not be negative, not -3"},
      {"bucket count a float", [](json& j) { j["buckets"][1][1] = 1.5; }, "/buckets/1/1",
       "must be a non-negative integer, not 1.5"},
      {"bucket counts wrap around",
       [](json& j) {
         j["buckets"][0][1] = kMaxU64;
         j["count"] = 4;
       },
       "/buckets/0/1", "the counts add up to more than 2^64 - 1"},
      {"empty with a min",
       [](json& j) {
         j["min"] = 1.0;
         j["count"] = 0;
         j["overflow"] = 0;
         j["buckets"] = json::array();
         j["max"] = 0.0;
         j["sum"] = 0.0;
       },
       "/min", "must be 0 in a histogram of no samples"},
  };
}

TEST(LatencyHistogramJson, EveryBadFieldIsNamed) {
  const std::string where = "result.json: /cases/3/histogram";
  const json valid = json::parse(small_histogram().to_json().dump());
  ASSERT_EQ(LatencyHistogram::from_json(valid, where), small_histogram());
  for (const BadJson& bad : bad_json_cases()) {
    SCOPED_TRACE(bad.name);
    json j = valid;
    bad.mutate(j);
    const std::string message = message_of([&] { LatencyHistogram::from_json(j, where); });
    const std::string prefix = where + bad.pointer + ": ";
    EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
    EXPECT_NE(message.find(bad.reason, prefix.size()), std::string::npos) << message;
  }
}

TEST(LatencyHistogramJson, HostileTextIsEscapedAndCutShort) {
  json j = json::parse(small_histogram().to_json().dump());
  j["schema"] = "\x1b[2J" + std::string(10000, 'x');
  const std::string message = message_of([&] { LatencyHistogram::from_json(j, "h.json: /h"); });
  EXPECT_EQ(message.rfind("h.json: /h/schema: must be", 0), 0u) << message;
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  EXPECT_NE(message.find("\\u001b[2J"), std::string::npos);
  EXPECT_LT(message.size(), 200u);
}

// ---- cumulative buckets -----------------------------------------------------------------------

TEST(LatencyHistogramCumulative, KnownCountsAtChosenBounds) {
  const LatencyHistogram h = small_histogram();  // 0 | 1.03125 1.0625 | 3 | 9 (overflow)
  const std::vector<double> le = {-1.0, 0.5, 1.0, 1.05, 1.0625, 2.9, 3.0, 8.0, 8.5, 9.0, 20.0};
  const auto cumulative = h.cumulative_buckets(le);
  const std::vector<std::pair<double, std::uint64_t>> expected = {
      {-1.0, 0},   {0.5, 0},   // 0 is <= 0.5, but its bucket's edge (1) is not: rounded down
      {1.0, 1},    {1.05, 1},  // 1.03125 is in the bucket ending at 1.0625
      {1.0625, 3}, {2.9, 3},  {3.0, 4}, {8.0, 4},  // 9 overflowed
      {8.5, 4},    {9.0, 5},                       // le >= max: every sample
      {20.0, 5},   {kInf, 5},
  };
  EXPECT_EQ(cumulative, expected);
  EXPECT_EQ(h.cumulative_buckets({}), (std::vector<std::pair<double, std::uint64_t>>{{kInf, 5}}));
  EXPECT_EQ(LatencyHistogram().cumulative_buckets(le).back(),
            (std::pair<double, std::uint64_t>{kInf, 0}));
}

TEST(LatencyHistogramCumulative, ExactCountUpToTheGreatestEdgeAtOrBelowLe) {
  std::vector<double> samples = mixed_samples(40, 50000);
  const LatencyHistogram h = histogram_of(samples);
  std::sort(samples.begin(), samples.end());
  auto at_or_below = [&](double x) {
    return static_cast<std::uint64_t>(std::upper_bound(samples.begin(), samples.end(), x) -
                                      samples.begin());
  };
  std::vector<double> le;
  for (double x = 1e-6; x < 5000; x *= 1.37) le.push_back(x);
  const auto cumulative = h.cumulative_buckets(le);
  ASSERT_EQ(cumulative.size(), le.size() + 1);
  for (std::size_t i = 0; i < le.size(); ++i) {
    SCOPED_TRACE(le[i]);
    EXPECT_EQ(cumulative[i].first, le[i]);
    if (le[i] >= h.max()) {
      EXPECT_EQ(cumulative[i].second, samples.size());
      continue;
    }
    if (le[i] > h.config().highest) {
      EXPECT_EQ(cumulative[i].second, samples.size() - h.overflow_count());
      continue;
    }
    const std::size_t bucket = h.bucket_index(le[i]);
    const double greatest_edge = h.bucket_upper_edge(bucket) <= le[i]
                                     ? h.bucket_upper_edge(bucket)
                                     : h.bucket_upper_edge(bucket - 1);
    EXPECT_EQ(cumulative[i].second, at_or_below(greatest_edge));
    // Rounded down by at most one bucket: everything <= le / (1 + 1/S) is counted.
    EXPECT_GE(cumulative[i].second, at_or_below(le[i] / (1 + 1.0 / 128)));
    EXPECT_LE(cumulative[i].second, at_or_below(le[i]));
  }
  EXPECT_EQ(cumulative.back(), (std::pair<double, std::uint64_t>{kInf, samples.size()}));
}

TEST(LatencyHistogramCumulative, BoundsMustBeFiniteAndIncreasing) {
  const LatencyHistogram h = small_histogram();
  for (const std::vector<double>& le :
       {std::vector<double>{1.0, kNan}, std::vector<double>{1.0, kInf},
        std::vector<double>{2.0, 1.0}, std::vector<double>{1.0, 1.0}}) {
    EXPECT_NE(message_of([&] {
                h.cumulative_buckets(le);
              }).find("le bounds must be finite and strictly increasing"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace pathbench::test_latency_histogram
