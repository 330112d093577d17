#pragma once

// The distribution of one operation's latencies (per-request copy latency and the like) in a fixed,
// small amount of memory, for percentiles far into the tail (P99, P99.9) over millions of samples.
//
// Buckets are log-linear, as in HDR Histogram: every power-of-two range of values starting at
// `lowest` is split into S equal sub-buckets, S being the smallest power of two >= 10^digits (16,
// 128 or 1024). A bucket is then at most 1/S (< 10^-digits) of its lower edge wide, which bounds
// the relative error of every percentile. S is a power of two so that the edges are `lowest` times
// an exactly representable multiplier and the index arithmetic is exact.
//
// Bucket 0 holds [0, lowest]; bucket i >= 1 holds (edge(i-1), edge(i)]: closed above, like
// Prometheus's `le`, so a bucket's upper edge is itself a value of the bucket. The last edge is
// `highest`; greater values go to the overflow count. Number of buckets, K = floor(log2(highest /
// lowest)) whole octaves and a partial one:
//   1 + S * K + ceil(S * (highest / (lowest * 2^K) - 1)),
// at most 64 * S, since highest / lowest may be at most 2^63. The defaults (1 ns .. 1000 s, 2
// digits, S = 128) give 5098 buckets (40 KB of counts); 1 digit gives 639 and 3 digits 40776.
//
// Count, min, max and the sum are exact (the sum is kept as a fixed-point integer wide enough for
// any double, so adding is exact and merging is associative; sum() rounds it once).

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace pathbench {

struct LatencyHistogramConfig {
  double lowest = 1e-9;        // seconds; the upper edge of bucket 0
  double highest = 1000.0;     // seconds; the upper edge of the last bucket
  int significant_digits = 2;  // 1..3: buckets are < 10^-digits of their value wide
  bool operator==(const LatencyHistogramConfig&) const = default;
};

class LatencyHistogram {
 public:
  // Throws std::invalid_argument for a config outside the documented ranges (lowest and highest
  // finite, 0 < lowest < highest, highest / lowest <= 2^63, digits 1..3).
  explicit LatencyHistogram(LatencyHistogramConfig config = {});

  // One duration in seconds: finite and >= 0 (0 goes to bucket 0), else std::invalid_argument and
  // the histogram is unchanged.
  void record(double seconds);
  template <typename Rep, typename Period>
  void record(std::chrono::duration<Rep, Period> duration) {
    record(std::chrono::duration<double>(duration).count());
  }

  // Adds `other`'s samples. Both must have the same config (std::invalid_argument otherwise).
  // Exact, so associative and commutative: any merge order gives the same histogram.
  void merge(const LatencyHistogram& other);

  const LatencyHistogramConfig& config() const { return config_; }
  std::uint64_t count() const { return count_; }
  std::uint64_t overflow_count() const { return overflow_; }  // values > highest
  // Exact; 0 when empty.
  double min() const { return min_; }
  double max() const { return max_; }
  double sum() const;   // the exact sum rounded once (to nearest, ties to even)
  double mean() const;  // sum() / count(); 0 when empty

  // The value of the sample of rank max(1, ceil(q * count)) (nearest rank, as HDR Histogram),
  // represented by its bucket's upper edge (the highest value equivalent to the bucket, HDR's
  // convention) clamped to max(). So for that sample x, in bucket i >= 1, x <= result <= x * (1 +
  // 1/S) to the rounding of the edges: never below the true order statistic, and within
  // 10^-digits of it. In bucket 0 the error is at most `lowest` in absolute terms; a rank in the
  // overflow gives max(). q = 0 gives min() and q = 1 max() exactly. Throws
  // std::invalid_argument for q outside [0, 1] (NaN included) and for an empty histogram.
  double value_at_quantile(double q) const;

  // Cumulative counts at the caller's `le` bounds (finite, strictly increasing, else
  // std::invalid_argument), then {+Inf, count()}. A bucket counts as <= le when its upper edge is
  // <= le: the count at le is exactly the number of samples <= the greatest edge <= le, so it may
  // leave out samples of the one bucket straddling le (all within 1/S of le). Overflowed samples
  // count only at +Inf, except that every sample counts at an le >= max().
  std::vector<std::pair<double, std::uint64_t>> cumulative_buckets(
      std::span<const double> le_bounds) const;

  // The buckets, for exporters and tests: bucket_count() regular buckets, indices 0..count-1.
  std::size_t bucket_count() const { return counts_.size(); }
  double bucket_upper_edge(std::size_t index) const;       // index < bucket_count()
  std::uint64_t count_in_bucket(std::size_t index) const;  // index < bucket_count()
  // bucket_count() for values > highest; std::invalid_argument as record() for a bad value.
  std::size_t bucket_index(double seconds) const;

  // {"schema":"pathbench.histogram/v1","lowest","highest","significant_digits","count","min",
  //  "max","sum","overflow","buckets":[[upper_edge_seconds, count], ...]}, only non-empty buckets,
  // in increasing order. Numbers are written shortest round-trip, so from_json restores every
  // value exactly. Throws std::overflow_error when the sum exceeds the largest double (only
  // possible with samples near 1e308 s), which JSON could not hold.
  nlohmann::ordered_json to_json() const;
  // Reads what to_json writes, checking every field; an ordered_json converts implicitly. Throws
  // std::invalid_argument "WHERE/FIELD: what is wrong": `where` locates the histogram object and
  // ends in its JSON pointer ("result.json: /cases/3/histogram"), FIELD is the pointer below it
  // ("/buckets/2/0"). The sum is restored as written, i.e. rounded: the histogram reports the same
  // sum() and compares equal, and what is added later is added to it exactly; only a sum merged
  // from histograms read back may differ in its last bit from one merged in memory.
  static LatencyHistogram from_json(const nlohmann::json& j, const std::string& where);

  // Equal when everything they report is: config, counts, min, max and sum().
  bool operator==(const LatencyHistogram& other) const;

 private:
  // An unsigned fixed-point number, the unit 2^-1074 (the smallest double), wide enough for 2^64
  // of the largest double: adding doubles to it is exact.
  class ExactSum {
   public:
    void add(double non_negative_finite);
    void add(const ExactSum& other);
    double rounded() const;

   private:
    // 2099 bits hold any finite double, 64 more the carries of 2^64 of them.
    static constexpr std::size_t kWords = 34;
    std::uint64_t word_bits(int lowest_bit) const;
    bool any_bit_below(int bit) const;
    void add_at(std::size_t word, std::uint64_t value);
    std::array<std::uint64_t, kWords> words_{};
  };

  double raw_edge(std::size_t index) const;
  std::size_t raw_index(double above_lowest) const;

  LatencyHistogramConfig config_;
  int sub_bucket_bits_ = 0;  // log2(S)
  std::vector<std::uint64_t> counts_;
  std::uint64_t overflow_ = 0;
  std::uint64_t count_ = 0;
  double min_ = 0;
  double max_ = 0;
  ExactSum sum_;
};

}  // namespace pathbench
