#include "scenario/request_stream.hpp"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "temp_dir.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_request_stream {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Helpers.

// TempDir with this file's prefix.
struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("pathbench_request_stream") {}
};

fs::path write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

fs::path fixture(const std::string& name) {
  return fs::path(PATHBENCH_SOURCE_DIR) / "tests/fixtures/request_traces" / name;
}

// A request line with the given fields (strings inserted as they are).
std::string line(const std::string& time_s, const std::string& h2d, const std::string& d2h,
                 const std::string& kernel_us) {
  return "{\"time_s\": " + time_s + ", \"h2d_bytes\": " + h2d + ", \"d2h_bytes\": " + d2h +
         ", \"kernel_us\": " + kernel_us + "}\n";
}
const std::string kGoodLine = line("0.5", "64", "32", "10");

struct Refusal {
  std::string file, pointer, what;
};

// How `text` is refused, read from memory as "trace.jsonl"; read from a file, it must be refused
// the same way (the same pointer, the same message after the file's name).
Refusal refusal_of(const std::string& text, const TraceLimits& limits = {}) {
  Refusal from_text;
  try {
    parse_request_trace(text, "trace.jsonl", limits);
    ADD_FAILURE() << "accepted: " << text.substr(0, 200);
    return {};
  } catch (const InputError& e) {
    from_text = {e.file(), e.pointer(), e.what()};
  }
  TempDir dir;
  const fs::path path = write(dir.path() / "trace.jsonl", text);
  try {
    read_request_trace(path, limits);
    ADD_FAILURE() << "accepted from a file: " << text.substr(0, 200);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path.string());
    EXPECT_EQ(e.pointer(), from_text.pointer);
    EXPECT_EQ(std::string(e.what()), path.string() + from_text.what.substr(from_text.file.size()));
  }
  return from_text;
}

// `text` is refused naming trace.jsonl, `pointer`, and exactly `what`.
void expect_refused(const std::string& text, const std::string& pointer, const std::string& what,
                    const TraceLimits& limits = {}) {
  const Refusal r = refusal_of(text, limits);
  EXPECT_EQ(r.file, "trace.jsonl");
  EXPECT_EQ(r.pointer, pointer);
  EXPECT_EQ(r.what, "trace.jsonl: " + (pointer.empty() ? std::string("/") : pointer) + ": " + what);
}

// A fixture is refused naming its path, `pointer`, and exactly `what`.
void expect_fixture_refused(const std::string& name, const std::string& pointer,
                            const std::string& what) {
  const fs::path path = fixture(name);
  try {
    read_request_trace(path);
    ADD_FAILURE() << name << " was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path.string());
    EXPECT_EQ(e.pointer(), pointer);
    EXPECT_EQ(std::string(e.what()),
              path.string() + ": " + (pointer.empty() ? "/" : pointer) + ": " + what);
  }
}

std::vector<double> inter_arrivals(const std::vector<Request>& requests) {
  std::vector<double> gaps;
  double previous = 0;
  for (const Request& r : requests) {
    gaps.push_back(r.arrival_s - previous);
    previous = r.arrival_s;
  }
  return gaps;
}

double mean_of(const std::vector<double>& x) {
  double sum = 0;
  for (double v : x) sum += v;
  return sum / static_cast<double>(x.size());
}

double sample_sd_of(const std::vector<double>& x) {
  const double m = mean_of(x);
  double ss = 0;
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

// The one-sample Kolmogorov-Smirnov statistic: sup |F_n(x) - F(x)|, attained at a sample point,
// just before or at it.
double ks_statistic(std::vector<double> sample, const std::function<double(double)>& cdf) {
  std::sort(sample.begin(), sample.end());
  const double n = static_cast<double>(sample.size());
  double d = 0;
  for (std::size_t i = 0; i < sample.size(); ++i) {
    const double f = cdf(sample[i]);
    d = std::max({d, static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n});
  }
  return d;
}

std::function<double(double)> exponential_cdf(double rate) {
  return [rate](double x) { return x <= 0 ? 0.0 : -std::expm1(-rate * x); };
}

// The KS test's critical value at level alpha for a fully specified distribution: the
// Kolmogorov distribution's quantile sqrt(-ln(alpha / 2) / 2) (1.6276 at 1 %), with Stephens'
// finite-sample correction (Stephens 1970).
double ks_critical_value(std::size_t n, double alpha) {
  const double k = std::sqrt(-0.5 * std::log(alpha / 2));
  const double root_n = std::sqrt(static_cast<double>(n));
  return k / (root_n + 0.12 + 0.11 / root_n);
}

PoissonStream poisson(double rate, std::size_t count, std::uint64_t seed = kDefaultRequestSeed) {
  PoissonStream spec;
  spec.rate_per_s = rate;
  spec.count = count;
  spec.seed = seed;
  return spec;
}

// ---------------------------------------------------------------------------------------------
// Draws: pinned to values computed by an independent (Python) mt19937_64 and SplitMix64.

TEST(RequestDraws, TheEngineIsTheStandardsMt19937_64) {
  // [rand.predef]: the 10000th output of a default-constructed mt19937_64.
  std::mt19937_64 engine;
  engine.discard(9999);
  EXPECT_EQ(engine(), 9981545732273789042ULL);
  EXPECT_EQ(kDefaultRequestSeed, 5489U);
}

TEST(RequestDraws, SplitMix64KnownOutputs) {
  EXPECT_EQ(splitmix64(0), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(splitmix64(1), 0x910A2DEC89025CC1ULL);
}

TEST(RequestDraws, UnitIntervalAndExponentialKnownValues) {
  std::mt19937_64 engine(5489);
  // First output 14514284786278117030: ((x >> 11) + 1) * 2^-53.
  EXPECT_EQ(unit_interval_draw(engine), 0.786820954867802);
  // Second output: -log(0.2504803406880287) / 1, then the third at rate 4.
  EXPECT_DOUBLE_EQ(exponential_draw(engine, 1.0), 1.384374841824267);
  EXPECT_DOUBLE_EQ(exponential_draw(engine, 4.0), 0.34154536262153157 / 4);
}

TEST(RequestDraws, UniformIntegerIsExactAndUnbiased) {
  std::mt19937_64 engine(splitmix64(5489 + 1));
  EXPECT_EQ(uniform_integer_draw(engine, 0, 1000), 305U);
  EXPECT_EQ(uniform_integer_draw(engine, 0, 1000), 279U);
  EXPECT_EQ(uniform_integer_draw(engine, 0, 1000), 438U);

  // All 2^64 values: the engine's output itself.
  std::mt19937_64 a(7), b(7);
  EXPECT_EQ(uniform_integer_draw(a, 0, std::numeric_limits<std::uint64_t>::max()), b());
  EXPECT_EQ(uniform_integer_draw(a, 9, 9), 9U);

  // [1, 4]: each value's count is Binomial(n, 1/4); within 5 standard deviations.
  constexpr int kDraws = 100000;
  std::array<int, 4> counts{};
  for (int i = 0; i < kDraws; ++i) {
    const std::uint64_t v = uniform_integer_draw(engine, 1, 4);
    ASSERT_GE(v, 1U);
    ASSERT_LE(v, 4U);
    ++counts[v - 1];
  }
  const double sd = std::sqrt(kDraws * 0.25 * 0.75);
  for (int c : counts) EXPECT_NEAR(c, kDraws / 4.0, 5 * sd);

  // A span just above 2^63 rejects almost half the outputs; the rest must stay in range.
  const std::uint64_t top = std::uint64_t{1} << 63;
  for (int i = 0; i < 1000; ++i) ASSERT_LE(uniform_integer_draw(engine, 0, top), top);
}

TEST(RequestDraws, UniformRealIsHalfOpen) {
  std::mt19937_64 engine(splitmix64(5489 + 3));
  EXPECT_EQ(uniform_real_draw(engine, 100, 300), 110.2620600958026);
  EXPECT_EQ(uniform_real_draw(engine, 100, 300), 187.30165939911433);
  for (int i = 0; i < 10000; ++i) {
    const double x = uniform_real_draw(engine, 1, 2);
    ASSERT_GE(x, 1);
    ASSERT_LT(x, 2);
  }
  EXPECT_EQ(uniform_real_draw(engine, 5, 5), 5);
}

// ---------------------------------------------------------------------------------------------
// Poisson.

TEST(PoissonRequests, KnownFirstArrivalsForTheDefaultSeed) {
  const auto requests = poisson_requests(poisson(1.0, 3));
  ASSERT_EQ(requests.size(), 3U);
  EXPECT_DOUBLE_EQ(requests[0].arrival_s, 0.2397545597921426);
  EXPECT_DOUBLE_EQ(requests[1].arrival_s, 1.6241294016164096);
  EXPECT_DOUBLE_EQ(requests[2].arrival_s, 1.9656747642379413);
  // The default shape: nothing copied, no kernel time.
  EXPECT_EQ(requests[0].h2d_bytes, 0U);
  EXPECT_EQ(requests[0].d2h_bytes, 0U);
  EXPECT_EQ(requests[0].kernel_us, 0.0);
}

TEST(PoissonRequests, SameSeedSameStreamOtherSeedOther) {
  PoissonStream spec = poisson(500, 1000, 42);
  spec.shape.h2d_bytes = {1, 1 << 20};
  spec.shape.kernel_us = {10, 500};
  const auto a = poisson_requests(spec);
  const auto b = poisson_requests(spec);
  EXPECT_EQ(a, b);
  spec.seed = 43;
  const auto c = poisson_requests(spec);
  ASSERT_EQ(c.size(), a.size());
  std::size_t same_arrivals = 0, same_sizes = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same_arrivals += a[i].arrival_s == c[i].arrival_s;
    same_sizes += a[i].h2d_bytes == c[i].h2d_bytes;
  }
  EXPECT_EQ(same_arrivals, 0U);
  EXPECT_LT(same_sizes, 5U);  // 1000 draws from 2^20 values: a few coincidences at most
}

TEST(PoissonRequests, InterArrivalsAreExponential) {
  constexpr double kRate = 2500;
  constexpr std::size_t kCount = 200000;
  const auto requests = poisson_requests(poisson(kRate, kCount));
  ASSERT_EQ(requests.size(), kCount);
  ASSERT_TRUE(
      std::is_sorted(requests.begin(), requests.end(),
                     [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; }));
  const auto gaps = inter_arrivals(requests);
  const double n = static_cast<double>(kCount);

  // Mean 1 / rate; its standard error is (1 / rate) / sqrt(n).
  const double mean = mean_of(gaps);
  const double mean_tolerance = 5 * (1 / kRate) / std::sqrt(n);
  EXPECT_NEAR(mean, 1 / kRate, mean_tolerance);

  // Coefficient of variation 1; for exponential samples its standard error is 1 / sqrt(n)
  // (delta method with the exponential's moments: var 1, skewness 2, kurtosis 9).
  const double cv = sample_sd_of(gaps) / mean;
  const double cv_tolerance = 5 / std::sqrt(n);
  EXPECT_NEAR(cv, 1.0, cv_tolerance);

  // KS against Exp(rate), below its 1 % critical value.
  const double d = ks_statistic(gaps, exponential_cdf(kRate));
  const double critical = ks_critical_value(kCount, 0.01);
  EXPECT_LT(d, critical);

  std::printf(
      "[stats] n=%zu mean=%.9g (expected %.9g, tolerance %.3g) cv=%.6f (tolerance %.6f) "
      "KS D=%.6f (1%% critical %.6f)\n",
      kCount, mean, 1 / kRate, mean_tolerance, cv, cv_tolerance, d, critical);
}

TEST(PoissonRequests, KsAcrossSeedsRejectsAboutOnePercent) {
  // 40 independent streams of 5000: at the 1 % level, 3 or more rejections has probability
  // below 0.8 % (Binomial(40, 0.01)).
  int rejected = 0;
  double worst = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const auto gaps = inter_arrivals(poisson_requests(poisson(100, 5000, seed)));
    const double d = ks_statistic(gaps, exponential_cdf(100));
    worst = std::max(worst, d);
    rejected += d >= ks_critical_value(gaps.size(), 0.01);
  }
  EXPECT_LE(rejected, 2);
  std::printf("[stats] 40 seeds x 5000: %d rejected at 1%%, largest D=%.5f (critical %.5f)\n",
              rejected, worst, ks_critical_value(5000, 0.01));
}

TEST(PoissonRequests, KsStatisticKnownAnswersAndPower) {
  // Sample {0.1, 0.5, 0.9} against U(0, 1): D = max(1/3 - 0.1, 0.9 - 2/3) = 0.2333...
  const auto uniform = [](double x) { return std::clamp(x, 0.0, 1.0); };
  EXPECT_NEAR(ks_statistic({0.9, 0.1, 0.5}, uniform), 0.7 / 3, 1e-15);
  EXPECT_NEAR(ks_statistic({0.5}, uniform), 0.5, 1e-15);
  EXPECT_NEAR(ks_critical_value(1'000'000, 0.01), 1.62762 / 1000.12, 1e-6);

  // The test has power: the right stream against a 10 % wrong rate, and evenly spaced arrivals
  // of the right mean, are both far beyond the critical value.
  const auto gaps = inter_arrivals(poisson_requests(poisson(1000, 100000)));
  const double critical = ks_critical_value(gaps.size(), 0.01);
  EXPECT_GT(ks_statistic(gaps, exponential_cdf(1100)), 5 * critical);
  const std::vector<double> even(100000, 1e-3);
  EXPECT_GT(ks_statistic(even, exponential_cdf(1000)), 0.5);
}

TEST(PoissonRequests, ADurationIsAPrefixOfTheCountStream) {
  constexpr double kRate = 1000, kDuration = 50;
  PoissonStream spec;
  spec.rate_per_s = kRate;
  spec.duration_s = kDuration;
  const auto timed = poisson_requests(spec);
  ASSERT_FALSE(timed.empty());
  EXPECT_LT(timed.back().arrival_s, kDuration);
  // The count in [0, T) is Poisson(rate * T): within 5 standard deviations of its mean.
  const double expected = kRate * kDuration;
  EXPECT_NEAR(static_cast<double>(timed.size()), expected, 5 * std::sqrt(expected));
  // The same arrival engine: the first requests of a longer count stream, and the next one of
  // that stream is at or past the duration.
  const auto counted = poisson_requests(poisson(kRate, timed.size() + 1));
  EXPECT_TRUE(std::equal(timed.begin(), timed.end(), counted.begin()));
  EXPECT_GE(counted.back().arrival_s, kDuration);
}

TEST(PoissonRequests, FixedAndDrawnShapes) {
  PoissonStream spec = poisson(100, 20000);
  spec.shape = {ByteRange::fixed(65536), ByteRange::fixed(0), KernelTimeRange::fixed(250)};
  for (const Request& r : poisson_requests(spec)) {
    ASSERT_EQ(r.h2d_bytes, 65536U);
    ASSERT_EQ(r.d2h_bytes, 0U);
    ASSERT_EQ(r.kernel_us, 250.0);
  }
  spec.shape = {{0, 1000}, {4096, 8191}, {100, 300}};
  const auto drawn = poisson_requests(spec);
  // The first values of each quantity's engine (splitmix64(seed + k)), pinned.
  EXPECT_EQ(drawn[0].h2d_bytes, 305U);
  EXPECT_EQ(drawn[1].h2d_bytes, 279U);
  EXPECT_EQ(drawn[0].d2h_bytes, 4198U);
  EXPECT_EQ(drawn[1].d2h_bytes, 7915U);
  EXPECT_EQ(drawn[0].kernel_us, 110.2620600958026);
  double h2d_sum = 0, kernel_sum = 0;
  for (const Request& r : drawn) {
    ASSERT_LE(r.h2d_bytes, 1000U);
    ASSERT_GE(r.d2h_bytes, 4096U);
    ASSERT_LE(r.d2h_bytes, 8191U);
    ASSERT_GE(r.kernel_us, 100);
    ASSERT_LT(r.kernel_us, 300);
    h2d_sum += static_cast<double>(r.h2d_bytes);
    kernel_sum += r.kernel_us;
  }
  // Means of discrete U{0..1000} (500, sd 289) and U[100, 300) (200, sd 57.7), within 5 SE.
  const double n = static_cast<double>(drawn.size());
  EXPECT_NEAR(h2d_sum / n, 500, 5 * std::sqrt((1001.0 * 1001.0 - 1) / 12) / std::sqrt(n));
  EXPECT_NEAR(kernel_sum / n, 200, 5 * (200 / std::sqrt(12.0)) / std::sqrt(n));

  // Fixing one quantity leaves the arrivals and the other quantities as they were.
  spec.shape.h2d_bytes = ByteRange::fixed(1);
  const auto partly_fixed = poisson_requests(spec);
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    ASSERT_EQ(partly_fixed[i].arrival_s, drawn[i].arrival_s);
    ASSERT_EQ(partly_fixed[i].d2h_bytes, drawn[i].d2h_bytes);
    ASSERT_EQ(partly_fixed[i].kernel_us, drawn[i].kernel_us);
  }
}

TEST(PoissonRequests, SpecsOutsideTheirRangesAreRefused) {
  const auto refused = [](const PoissonStream& spec, const std::string& part) {
    try {
      poisson_requests(spec);
      ADD_FAILURE() << "accepted; expected: " << part;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused(poisson(0, 10), "rate_per_s must be finite and positive, got 0");
  refused(poisson(std::nan(""), 10), "rate_per_s must be finite and positive");
  refused(poisson(-1, 10), "got -1");
  refused(poisson(10, 0), "count must be in [1, 10000000], got 0");
  refused(poisson(10, kMaxRequests + 1), "got 10000001");
  PoissonStream both = poisson(10, 10);
  both.duration_s = 1;
  refused(both, "duration_s or count must be set, exactly one of them, got both");
  PoissonStream neither = poisson(10, 10);
  neither.count.reset();
  refused(neither, "got neither");
  PoissonStream timed = neither;
  timed.duration_s = 86401;
  refused(timed, "duration_s must be in (0, 86400], got 86401");
  timed.duration_s = 0;
  refused(timed, "duration_s must be in (0, 86400], got 0");
  timed.rate_per_s = 1e6;
  timed.duration_s = 11;
  refused(timed, "rate_per_s * duration_s must be at most 10000000 requests, got 11000000");
  // 1000 requests at one per 1000 s arrive long past a day.
  refused(poisson(1e-3, 1000), "arrives past 86400 s");
  PoissonStream shaped = poisson(10, 10);
  shaped.shape.h2d_bytes = {0, kMaxRequestBytes + 1};
  refused(shaped,
          "shape.h2d_bytes must be a range min <= max <= 68719476736, got [0, 68719476737]");
  shaped.shape.h2d_bytes = {};
  shaped.shape.d2h_bytes = {5, 4};
  refused(shaped, "shape.d2h_bytes must be a range");
  shaped.shape.d2h_bytes = {};
  shaped.shape.kernel_us = {-1, 10};
  refused(shaped, "shape.kernel_us must be a range 0 <= min <= max <= 60000000, got [-1, 10]");
  shaped.shape.kernel_us = {0, std::numeric_limits<double>::infinity()};
  refused(shaped, "shape.kernel_us");
}

// ---------------------------------------------------------------------------------------------
// Bursts.

TEST(BurstRequests, ExactArrivalTimes) {
  BurstStream spec;
  spec.burst_size = 3;
  spec.period_s = 0.25;
  spec.burst_count = 4;
  spec.shape = {ByteRange::fixed(4096), ByteRange::fixed(512), KernelTimeRange::fixed(80)};
  const auto requests = burst_requests(spec);
  const std::vector<double> expected = {0, 0, 0, 0.25, 0.25, 0.25, 0.5, 0.5, 0.5, 0.75, 0.75, 0.75};
  ASSERT_EQ(requests.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(requests[i], (Request{expected[i], 4096, 512, 80})) << i;
  }
}

TEST(BurstRequests, BurstTimesAreProductsNotRunningSums) {
  BurstStream spec;
  spec.burst_size = 1;
  spec.period_s = 0.1;
  spec.burst_count = 11;
  const auto requests = burst_requests(spec);
  ASSERT_EQ(requests.size(), 11U);
  // Ten additions of 0.1 give 0.9999999999999999; 10 * 0.1 is 1.
  EXPECT_EQ(requests[10].arrival_s, 1.0);
  EXPECT_EQ(requests[3].arrival_s, 3 * 0.1);
}

TEST(BurstRequests, JitterStaysInItsBurstAndIsSeeded) {
  BurstStream spec;
  spec.burst_size = 3;
  spec.period_s = 1;
  spec.burst_count = 2;
  spec.jitter_s = 0.01;
  const auto requests = burst_requests(spec);
  ASSERT_EQ(requests.size(), 6U);
  // The jitter engine's first draws (splitmix64(seed + 4)) times 0.01, already in order.
  EXPECT_EQ(requests[0].arrival_s, 0.0007498786080617636);
  EXPECT_EQ(requests[1].arrival_s, 0.004009938066684195);
  EXPECT_EQ(requests[2].arrival_s, 0.007523950410469067);
  for (std::size_t i = 3; i < 6; ++i) {
    EXPECT_GE(requests[i].arrival_s, 1.0);
    EXPECT_LT(requests[i].arrival_s, 1.01);
  }
  EXPECT_EQ(burst_requests(spec), requests);
  spec.seed = 1;
  EXPECT_NE(burst_requests(spec), requests);

  // Many requests per burst: each burst sorted, and within [b T, b T + jitter).
  spec.burst_size = 1000;
  spec.burst_count = 5;
  const auto many = burst_requests(spec);
  ASSERT_TRUE(std::is_sorted(many.begin(), many.end(), [](const Request& a, const Request& b) {
    return a.arrival_s < b.arrival_s;
  }));
  for (std::size_t i = 0; i < many.size(); ++i) {
    const double burst_s = static_cast<double>(i / 1000);
    ASSERT_GE(many[i].arrival_s, burst_s);
    ASSERT_LT(many[i].arrival_s, burst_s + 0.01);
  }
}

TEST(BurstRequests, SpecsOutsideTheirRangesAreRefused) {
  const auto refused = [](const BurstStream& spec, const std::string& part) {
    try {
      burst_requests(spec);
      ADD_FAILURE() << "accepted; expected: " << part;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  BurstStream spec;
  spec.burst_size = 0;
  refused(spec, "burst stream: burst_size must be at least 1, got 0");
  spec = {};
  spec.burst_count = 0;
  refused(spec, "burst_count must be at least 1, got 0");
  spec = {};
  spec.burst_size = 10'000;
  spec.burst_count = 1001;
  refused(spec, "burst_size * burst_count must be at most 10000000, got 10000 * 1001");
  spec = {};
  spec.period_s = 0;
  refused(spec, "period_s must be finite and positive, got 0");
  spec = {};
  spec.jitter_s = 1;
  refused(spec, "jitter_s must be in [0, period_s), got 1");
  spec.jitter_s = -0.5;
  refused(spec, "got -0.5");
  spec = {};
  spec.burst_count = 86'402;
  refused(spec, "(burst_count - 1) * period_s + jitter_s must be at most 86400, got 86401");
  spec = {};
  spec.shape.kernel_us = {0, 60e6 + 1};
  refused(spec, "shape.kernel_us");
}

// ---------------------------------------------------------------------------------------------
// Trace files: good input.

TEST(RequestTrace, GoodFixtureParsesExactly) {
  const std::vector<Request> expected = {
      {0.0, 65536, 0, 250},
      {0.0012, 65536, 4096, 250.5},
      {0.0012, 0, 0, 0},                            // a tie in time; keys in another order
      {1.5e-3, kMaxRequestBytes, 1, kMaxKernelUs},  // both caps, exactly
      {2, 1048576, 18446, 1},
  };
  EXPECT_EQ(read_request_trace(fixture("good_basic.jsonl")), expected);
}

TEST(RequestTrace, WindowsFixtureParsesExactly) {
  const std::vector<Request> expected = {{0.5, 1, 2, 3}, {0.75, 4, 5, 6.25}};
  EXPECT_EQ(read_request_trace(fixture("good_windows.jsonl")), expected);
}

TEST(RequestTrace, TextAndFileAgree) {
  std::ifstream in(fixture("good_basic.jsonl"), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(parse_request_trace(text, "good_basic.jsonl"),
            read_request_trace(fixture("good_basic.jsonl")));
}

TEST(RequestTrace, EdgeValuesAccepted) {
  // -0 is 0 (and -0.0 becomes +0.0); a final line needs no '\n'; the time cap is inclusive;
  // a BOM may start any line.
  const auto requests = parse_request_trace(
      line("-0.0", "-0", "0", "0") + "\xEF\xBB\xBF" + line("86400", "1", "1", "0.5").substr(0, 70),
      "t");
  ASSERT_EQ(requests.size(), 2U);
  EXPECT_EQ(requests[0], (Request{0, 0, 0, 0}));
  EXPECT_FALSE(std::signbit(requests[0].arrival_s));
  EXPECT_EQ(requests[1], (Request{86400, 1, 1, 0.5}));
}

TEST(RequestTrace, LimitsDefaultsAreDocumented) {
  const TraceLimits limits;
  EXPECT_EQ(limits.max_file_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(limits.max_line_bytes, 65536U);
  EXPECT_EQ(limits.max_lines, 10'000'000U);
  EXPECT_EQ(kMaxRequestBytes, 68719476736ULL);
}

// ---------------------------------------------------------------------------------------------
// Trace files: every rule of bad input, with the exact file, pointer and message.

TEST(RequestTraceErrors, Fixtures) {
  expect_fixture_refused("bad_negative_bytes.jsonl", "line 17/h2d_bytes",
                         "expected a non-negative integer, found -5");
  expect_fixture_refused("bad_duplicate_key.jsonl", "line 3/time_s",
                         "duplicate key \"time_s\": JSON readers differ in which one they keep, so "
                         "the line is refused");
  expect_fixture_refused("bad_time_decreases.jsonl", "line 4/time_s",
                         "found 0.2, before the previous request's 0.25 (line 3); times must not "
                         "decrease");
  expect_fixture_refused("bad_not_json.jsonl", "line 2",
                         "not valid JSON at column 63: syntax error while parsing object - "
                         "unexpected end of input; expected '}'");
  expect_fixture_refused("bad_only_comments.jsonl", "",
                         "holds no requests (its 3 lines are blank or comments); a trace needs at "
                         "least one");
  expect_fixture_refused("bad_invalid_utf8.jsonl", "line 2",
                         "bytes that are not UTF-8 at byte 25 of the line; a trace is UTF-8 text");
}

TEST(RequestTraceErrors, TheBriefsExampleMessage) {
  std::string text;
  for (int i = 1; i < 17; ++i) text += "# line " + std::to_string(i) + "\n";
  text += line("0.1", "-5", "0", "1");
  expect_refused(text, "line 17/h2d_bytes", "expected a non-negative integer, found -5");
}

TEST(RequestTraceErrors, BytesMustBeIntegerLiteralsWithinTheCap) {
  const std::string p = "line 2/d2h_bytes";
  const auto d2h = [](const std::string& v) { return kGoodLine + line("1", "0", v, "1"); };
  expect_refused(d2h("-1"), p, "expected a non-negative integer, found -1");
  expect_refused(d2h("1.5"), p, "expected a non-negative integer, found 1.5");
  expect_refused(d2h("1.0"), p, "expected a non-negative integer, found 1.0");
  expect_refused(d2h("1e3"), p, "expected a non-negative integer, found 1e3");
  expect_refused(d2h("-99999999999999999999"), p,
                 "expected a non-negative integer, found -99999999999999999999");
  expect_refused(d2h("\"65536\""), p, "expected a non-negative integer, found \"65536\"");
  expect_refused(d2h("null"), p, "expected a non-negative integer, found null");
  expect_refused(d2h("[1]"), p, "expected a non-negative integer, found an array");
  expect_refused(d2h("{\"a\": 1}"), p, "expected a non-negative integer, found an object");
  expect_refused(d2h("68719476737"), p,
                 "at most 68719476736 bytes (64 GiB) per request, found 68719476737");
  // 2^64: beyond uint64, which nlohmann would read as a double.
  expect_refused(d2h("18446744073709551616"), p,
                 "at most 68719476736 bytes (64 GiB) per request, found 18446744073709551616");
  expect_refused(kGoodLine + line("1", "true", "0", "1"), "line 2/h2d_bytes",
                 "expected a non-negative integer, found true");
}

TEST(RequestTraceErrors, TimesAreFiniteNonNegativeCappedAndNonDecreasing) {
  const std::string p = "line 1/time_s";
  expect_refused(line("-0.5", "1", "1", "1"), p,
                 "expected a finite non-negative number of seconds, found -0.5");
  expect_refused(line("-3", "1", "1", "1"), p,
                 "expected a finite non-negative number of seconds, found -3");
  expect_refused(line("\"0.1\"", "1", "1", "1"), p,
                 "expected a finite non-negative number of seconds, found \"0.1\"");
  expect_refused(line("1e999", "1", "1", "1"), p,
                 "expected a finite number, found 1e999 (beyond a double's range)");
  expect_refused(line("86400.5", "1", "1", "1"), p, "at most 86400 seconds, found 86400.5");
  expect_refused(line("0.3", "1", "1", "1") + "\n# a comment\n" + line("0.2999", "1", "1", "1"),
                 "line 4/time_s",
                 "found 0.2999, before the previous request's 0.3 (line 1); times must not "
                 "decrease");
}

TEST(RequestTraceErrors, KernelTimesAreFiniteNonNegativeAndCapped) {
  const std::string p = "line 1/kernel_us";
  expect_refused(line("0", "1", "1", "-1"), p,
                 "expected a finite non-negative number of microseconds, found -1");
  expect_refused(line("0", "1", "1", "false"), p,
                 "expected a finite non-negative number of microseconds, found false");
  expect_refused(line("0", "1", "1", "-1e999"), p,
                 "expected a finite number, found -1e999 (beyond a double's range)");
  expect_refused(line("0", "1", "1", "60000000.5"), p,
                 "at most 60000000 microseconds, found 60000000.5");
}

TEST(RequestTraceErrors, KeysRequiredKnownAndUnique) {
  const std::array<std::string, 4> keys = {"time_s", "h2d_bytes", "d2h_bytes", "kernel_us"};
  for (const std::string& missing : keys) {
    std::string text = "{";
    for (const std::string& k : keys) {
      if (k != missing) text += (text.size() > 1 ? ", \"" : "\"") + k + "\": 1";
    }
    text += "}\n";
    expect_refused(kGoodLine + text, "line 2/" + missing,
                   "missing; a request has time_s, h2d_bytes, d2h_bytes and kernel_us");
  }
  expect_refused("{}", "line 1/time_s",
                 "missing; a request has time_s, h2d_bytes, d2h_bytes and kernel_us");
  expect_refused(R"({"time_s": 1, "h2d_bytes": 1, "d2h_bytes": 1, "kernel_us": 1, "prio": 2})",
                 "line 1/prio",
                 "unknown key \"prio\"; a request has exactly time_s, h2d_bytes, d2h_bytes and "
                 "kernel_us");
  // The pointer escapes the key ("/" -> "~1"); the message shows it as it is.
  expect_refused(R"({"a/b": 1})", "line 1/a~1b",
                 "unknown key \"a/b\"; a request has exactly time_s, h2d_bytes, d2h_bytes and "
                 "kernel_us");
  // The first key problem in the line is the one reported; a bad first value does not hide it.
  expect_refused(R"({"kernel_us": -1, "x": 0, "kernel_us": 2})", "line 1/x",
                 "unknown key \"x\"; a request has exactly time_s, h2d_bytes, d2h_bytes and "
                 "kernel_us");
  expect_refused(R"({"h2d_bytes": 1, "h2d_bytes": 1})", "line 1/h2d_bytes",
                 "duplicate key \"h2d_bytes\": JSON readers differ in which one they keep, so the "
                 "line is refused");
  // Keys of a nested object are not the line's keys.
  expect_refused(R"({"time_s": {"time_s": 1}, "h2d_bytes": 1, "d2h_bytes": 1, "kernel_us": 1})",
                 "line 1/time_s",
                 "expected a finite non-negative number of seconds, found an object");
}

TEST(RequestTraceErrors, LinesMustBeOneJsonObject) {
  expect_refused(kGoodLine + "[1, 2]\n", "line 2",
                 "expected a JSON object (one request), found an array");
  expect_refused("42\n", "line 1", "expected a JSON object (one request), found 42");
  expect_refused("\"hello\"\n", "line 1", "expected a JSON object (one request), found \"hello\"");
  expect_refused("null", "line 1", "expected a JSON object (one request), found null");
  expect_refused(kGoodLine + kGoodLine.substr(0, kGoodLine.size() - 1) + " {}\n", "line 2",
                 "not valid JSON at column 68: syntax error while parsing value - unexpected '{'; "
                 "expected end of input");
  expect_refused("{\"time_s\": 0.1,}\n", "line 1",
                 "not valid JSON at column 16: syntax error while parsing object key - unexpected "
                 "'}'; expected string literal");
  expect_refused("// not a comment\n", "line 1",
                 "not valid JSON at column 1: syntax error while parsing value - invalid literal; "
                 "last read: '/'");
}

TEST(RequestTraceErrors, NulBytesAndInvalidUtf8AnywhereAreRefused) {
  expect_refused(kGoodLine + std::string("{\"time_s\": 1\0, ", 15) + "}\n", "line 2",
                 "a NUL byte at byte 13 of the line; a trace is text");
  expect_refused(std::string("# a comment with a NUL: \0\n", 26) + kGoodLine, "line 1",
                 "a NUL byte at byte 25 of the line; a trace is text");
  const std::string utf8_rule = " of the line; a trace is UTF-8 text";
  expect_refused("# \xFF\n" + kGoodLine, "line 1",
                 "bytes that are not UTF-8 at byte 3" + utf8_rule);
  // An overlong '/', a UTF-16 surrogate, a code point past U+10FFFF, a cut sequence.
  expect_refused("#\xC0\xAF\n" + kGoodLine, "line 1",
                 "bytes that are not UTF-8 at byte 2" + utf8_rule);
  expect_refused("#\xED\xA0\x80\n" + kGoodLine, "line 1",
                 "bytes that are not UTF-8 at byte 2" + utf8_rule);
  expect_refused("#\xF4\x90\x80\x80\n" + kGoodLine, "line 1",
                 "bytes that are not UTF-8 at byte 2" + utf8_rule);
  expect_refused(kGoodLine + "# caf\xC3", "line 2",
                 "bytes that are not UTF-8 at byte 6" + utf8_rule);
  // Valid multi-byte text is fine, in comments and in (unknown) keys alike.
  EXPECT_EQ(parse_request_trace("# café, 東京, 🚀\n" + kGoodLine, "t").size(), 1U);
}

TEST(RequestTraceErrors, LineLengthCap) {
  TraceLimits limits;
  limits.max_line_bytes = 70;
  const std::string padded = kGoodLine.substr(0, kGoodLine.size() - 1) + "    ";
  ASSERT_EQ(padded.size(), 70U);
  EXPECT_EQ(parse_request_trace(padded + "\n", "t", limits).size(), 1U);
  expect_refused(kGoodLine + padded + " \n", "line 2",
                 "longer than 70 bytes; a trace line is one small JSON object", limits);

  // The default, 64 KiB: a comment of exactly that many bytes passes, one more does not.
  const std::string at_cap = "#" + std::string(65535, 'x') + "\n";
  EXPECT_EQ(parse_request_trace(at_cap + kGoodLine, "t").size(), 1U);
  expect_refused(kGoodLine + "#" + std::string(65536, 'x') + "\n", "line 2",
                 "longer than 65536 bytes; a trace line is one small JSON object");
  // A 3 MB line spans several of the reader's 1 MiB chunks and has no '\n' at all.
  expect_refused(kGoodLine + "#" + std::string(3'000'000, 'x'), "line 2",
                 "longer than 65536 bytes; a trace line is one small JSON object");
}

TEST(RequestTraceErrors, LineCountCap) {
  TraceLimits limits;
  limits.max_lines = 3;
  // Three lines, the last ending with '\n': no fourth line.
  EXPECT_EQ(parse_request_trace("\n# c\n" + kGoodLine, "t", limits).size(), 1U);
  expect_refused("\n# c\n" + kGoodLine + "\n", "line 4", "more than 3 lines in the trace", limits);
}

TEST(RequestTraceErrors, FileSizeCapBeforeReading) {
  TraceLimits limits;
  limits.max_file_bytes = 10;
  const std::string text = "# 11 bytes\n";
  try {
    parse_request_trace(text, "trace.jsonl", limits);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "");
    EXPECT_EQ(std::string(e.what()),
              "trace.jsonl: /: is 11 bytes, more than the 10 a trace may have");
  }
  TempDir dir;
  const fs::path path = write(dir.path() / "big.jsonl", text);
  try {
    read_request_trace(path, limits);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path.string());
    EXPECT_EQ(e.pointer(), "");
    EXPECT_EQ(std::string(e.what()), path.string() + ": /: cannot read: " + path.string() +
                                         " is 11 bytes, more than the 10 this input may have");
  }
}

TEST(RequestTraceErrors, EmptyTraces) {
  expect_refused("", "", "is empty; a trace needs at least one request");
  expect_refused("\n \n# only this\n\t\n", "",
                 "holds no requests (its 4 lines are blank or comments); a trace needs at least "
                 "one");
}

TEST(RequestTraceErrors, OnlyReadableRegularFiles) {
  TempDir dir;
  const auto refusal = [](const fs::path& path) -> std::optional<InputError> {
    try {
      read_request_trace(path);
    } catch (const InputError& e) {
      return e;
    }
    return std::nullopt;
  };

  const auto missing = refusal(dir.path() / "absent.jsonl");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->file(), (dir.path() / "absent.jsonl").string());
  EXPECT_EQ(missing->pointer(), "");
  EXPECT_EQ(std::string(missing->what()),
            (dir.path() / "absent.jsonl").string() + ": /: cannot read: No such file or directory");

  const auto directory = refusal(dir.path());
  ASSERT_TRUE(directory);
  EXPECT_EQ(std::string(directory->what()),
            dir.path().string() + ": /: cannot read: " + dir.path().string() +
                " is a directory, not a regular file; pathbench reads regular files only");

  // A FIFO with no writer: refused at once, never waited on.
  const fs::path fifo = dir.path() / "pipe.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto read_fifo = std::async(std::launch::async, [&] {
    const auto e = refusal(fifo);
    return e ? std::string(e->what()) : std::string("read");
  });
  ASSERT_EQ(read_fifo.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(read_fifo.get(), fifo.string() + ": /: cannot read: " + fifo.string() +
                                 " is a FIFO, not a regular file; pathbench reads regular files "
                                 "only");
}

TEST(RequestTraceErrors, UnreadableFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a file of mode 000";
  TempDir dir;
  const fs::path locked = write(dir.path() / "locked.jsonl", kGoodLine);
  ASSERT_EQ(::chmod(locked.c_str(), 0), 0);
  try {
    read_request_trace(locked);
    ADD_FAILURE() << "read a file of mode 000";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "");
    EXPECT_EQ(std::string(e.what()), locked.string() + ": /: cannot read: Permission denied");
  }
}

// ---------------------------------------------------------------------------------------------
// Summary.

TEST(RequestSummary, KnownTotals) {
  const std::vector<Request> requests = {
      {0.5, 100, 0, 250}, {1.0, 300, 4096, 250}, {2.0, 200, 1024, 500.5}};
  RequestStreamSummary expected;
  expected.count = 3;
  expected.duration_s = 2.0;
  expected.mean_rate_per_s = 1.5;
  expected.total_h2d_bytes = 600;
  expected.max_h2d_bytes = 300;
  expected.total_d2h_bytes = 5120;
  expected.max_d2h_bytes = 4096;
  expected.total_kernel_us = 1000.5;
  EXPECT_EQ(summarize_requests(requests), expected);
}

TEST(RequestSummary, NoRateWithoutDuration) {
  EXPECT_EQ(summarize_requests({}), RequestStreamSummary{});
  const std::vector<Request> at_once(4, Request{0, 10, 20, 1});
  const auto s = summarize_requests(at_once);
  EXPECT_EQ(s.count, 4U);
  EXPECT_EQ(s.duration_s, 0.0);
  EXPECT_FALSE(s.mean_rate_per_s.has_value());
  EXPECT_EQ(s.total_h2d_bytes, 40U);
  EXPECT_EQ(s.total_d2h_bytes, 80U);
}

TEST(RequestSummary, OfAGeneratedStream) {
  BurstStream spec;
  spec.burst_size = 4;
  spec.period_s = 0.5;
  spec.burst_count = 3;
  spec.shape = {ByteRange::fixed(1 << 20), ByteRange::fixed(1 << 10), KernelTimeRange::fixed(25)};
  const auto s = summarize_requests(burst_requests(spec));
  EXPECT_EQ(s.count, 12U);
  EXPECT_EQ(s.duration_s, 1.0);
  EXPECT_EQ(s.mean_rate_per_s, 12.0);
  EXPECT_EQ(s.total_h2d_bytes, 12U << 20);
  EXPECT_EQ(s.max_d2h_bytes, 1U << 10);
  EXPECT_EQ(s.total_kernel_us, 300.0);
}

TEST(RequestSummary, ByteTotalsNeverWrap) {
  const std::uint64_t half = std::uint64_t{1} << 63;
  const std::vector<Request> requests = {{0, half, 0, 0}, {1, half, 0, 0}};
  EXPECT_THROW(summarize_requests(requests), std::overflow_error);
}

}  // namespace
}  // namespace pathbench::test_request_stream
