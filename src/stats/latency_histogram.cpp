#include "stats/latency_histogram.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "core/text.hpp"

namespace pathbench {
namespace {

constexpr std::string_view kSchema = "pathbench.histogram/v1";
constexpr std::uint64_t kMaxCount = std::numeric_limits<std::uint64_t>::max();
// Keeps the bucket count within the documented 64 * S (see the header).
constexpr double kMaxRangeRatio = 0x1p63;

// Shortest round-trip form: an error about an edge must show the exact value, and std::to_string
// would print 1e-9 as 0.000000.
std::string number_text(double value) {
  std::array<char, 32> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), value);
  return std::string(buf.data(), res.ptr);
}

// A JSON value as it would be written, ASCII only and cut short, so that a hostile input can
// neither drive the terminal nor make the message megabytes long.
std::string value_text(const nlohmann::json& value) {
  constexpr std::size_t kMaxChars = 60;
  std::string text = value.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxChars) {
    text.resize(kMaxChars);
    text += "...";
  }
  return text;
}

std::string config_text(const LatencyHistogramConfig& config) {
  return concat("lowest ", number_text(config.lowest), " s, highest ", number_text(config.highest),
                " s, ", std::to_string(config.significant_digits), " significant digits");
}

struct ConfigProblem {
  std::string_view field;
  std::string what;
};

// The first field of `config` outside its range, for the constructor and from_json to report
// in their own words.
std::optional<ConfigProblem> config_problem(const LatencyHistogramConfig& config) {
  if (!std::isfinite(config.lowest) || !(config.lowest > 0)) {
    return ConfigProblem{"lowest", concat("must be a finite number of seconds > 0, not ",
                                          number_text(config.lowest))};
  }
  if (!std::isfinite(config.highest) || !(config.highest > config.lowest)) {
    return ConfigProblem{
        "highest", concat("must be a finite number of seconds greater than lowest (",
                          number_text(config.lowest), "), not ", number_text(config.highest))};
  }
  if (config.highest / config.lowest > kMaxRangeRatio) {
    return ConfigProblem{"highest",
                         concat("may be at most 2^63 times lowest (", number_text(config.lowest),
                                "), not ", number_text(config.highest))};
  }
  if (config.significant_digits < 1 || config.significant_digits > 3) {
    return ConfigProblem{"significant_digits", concat("must be 1, 2 or 3, not ",
                                                      std::to_string(config.significant_digits))};
  }
  return std::nullopt;
}

// log2 of the smallest power of two >= 10^digits.
int sub_bucket_bits_for(int significant_digits) {
  constexpr std::array<int, 3> kBits = {4, 7, 10};  // 16 >= 10, 128 >= 100, 1024 >= 1000
  return kBits[static_cast<std::size_t>(significant_digits - 1)];
}

bool is_valid_sample(double seconds) { return std::isfinite(seconds) && seconds >= 0; }

void check_sample(double seconds, std::string_view caller) {
  if (!is_valid_sample(seconds)) {
    throw std::invalid_argument(concat("LatencyHistogram::", caller,
                                       ": a duration must be a finite number of seconds >= 0, not ",
                                       number_text(seconds)));
  }
}

// Reads the fields of one histogram object; every failure names where the object is and the
// pointer of the field below it.
class FieldReader {
 public:
  FieldReader(const nlohmann::json& object, const std::string& where)
      : object_(object), where_(where) {}

  [[noreturn]] void fail(std::string_view pointer, std::string_view what) const {
    throw std::invalid_argument(concat(where_, pointer, ": ", what));
  }

  const nlohmann::json& field(std::string_view key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) fail(concat("/", key), "is missing");
    return *it;
  }

  double number(const nlohmann::json& value, std::string_view pointer) const {
    if (!value.is_number()) fail(pointer, concat("must be a number, not ", value_text(value)));
    const double number = value.get<double>();
    if (!std::isfinite(number)) fail(pointer, "must be a finite number");
    return number;
  }
  double number(std::string_view key) const { return number(field(key), concat("/", key)); }

  double seconds(std::string_view key) const {
    const double value = number(key);
    if (value < 0) fail(concat("/", key), concat("must be >= 0 seconds, not ", number_text(value)));
    return value;
  }

  // JSON has one number type; a count must be written as an integer (5, not 5.0) and not be
  // negative. Parsed text gives unsigned integers, JSON built in code signed ones: both are read.
  std::uint64_t count(const nlohmann::json& value, std::string_view pointer) const {
    if (value.is_number_unsigned()) return value.get<std::uint64_t>();
    if (!value.is_number_integer()) {
      fail(pointer, concat("must be a non-negative integer, not ", value_text(value)));
    }
    const auto signed_value = value.get<std::int64_t>();
    if (signed_value < 0) fail(pointer, concat("must not be negative, not ", value_text(value)));
    return static_cast<std::uint64_t>(signed_value);
  }
  std::uint64_t count(std::string_view key) const { return count(field(key), concat("/", key)); }

 private:
  const nlohmann::json& object_;
  const std::string& where_;
};

constexpr std::array<std::string_view, 10> kFields = {
    "schema", "lowest", "highest", "significant_digits", "count",
    "min",    "max",    "sum",     "overflow",           "buckets"};

// A typo ("bucket") would otherwise read as an empty histogram.
void check_no_unknown_fields(const nlohmann::json& object, const FieldReader& reader) {
  for (const auto& item : object.items()) {
    if (std::find(kFields.begin(), kFields.end(), item.key()) == kFields.end()) {
      reader.fail(
          "", concat("unknown field ", value_text(nlohmann::json(item.key())), " in ", kSchema));
    }
  }
}

LatencyHistogramConfig read_config(const FieldReader& reader) {
  LatencyHistogramConfig config;
  config.lowest = reader.number("lowest");
  config.highest = reader.number("highest");
  const std::uint64_t digits = reader.count("significant_digits");
  if (digits < 1 || digits > 3) {
    reader.fail("/significant_digits", concat("must be 1, 2 or 3, not ", std::to_string(digits)));
  }
  config.significant_digits = static_cast<int>(digits);
  if (const auto problem = config_problem(config)) {
    reader.fail(concat("/", problem->field), problem->what);
  }
  return config;
}

}  // namespace

// ---- ExactSum ---------------------------------------------------------------------------------

void LatencyHistogram::ExactSum::add_at(std::size_t word, std::uint64_t value) {
  for (; value != 0 && word < kWords; ++word) {
    words_[word] += value;
    value = words_[word] < value ? 1 : 0;  // the carry
  }
}

void LatencyHistogram::ExactSum::add(double non_negative_finite) {
  // A double is significand * 2^(exponent): place the significand's 53 bits at bit
  // (exponent + 1074) of the accumulator.
  const auto bits = std::bit_cast<std::uint64_t>(non_negative_finite);
  const auto biased_exponent = static_cast<int>(bits >> 52);
  std::uint64_t significand = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased_exponent != 0) significand |= std::uint64_t{1} << 52;  // normal: the implicit bit
  const int lowest_bit = biased_exponent == 0 ? 0 : biased_exponent - 1;
  const auto word = static_cast<std::size_t>(lowest_bit / 64);
  const int shift = lowest_bit % 64;
  add_at(word, significand << shift);
  if (shift > 11) add_at(word + 1, significand >> (64 - shift));  // the bits past this word
}

void LatencyHistogram::ExactSum::add(const ExactSum& other) {
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < kWords; ++i) {
    const std::uint64_t partial = words_[i] + other.words_[i];
    const std::uint64_t total = partial + carry;
    carry = (partial < words_[i] || total < partial) ? 1 : 0;
    words_[i] = total;
  }
}

std::uint64_t LatencyHistogram::ExactSum::word_bits(int lowest_bit) const {
  // Below bit 0 only when the whole value is in word 0 (its top bit < 63).
  if (lowest_bit < 0) return words_[0] << -lowest_bit;
  const auto word = static_cast<std::size_t>(lowest_bit / 64);
  const int shift = lowest_bit % 64;
  std::uint64_t bits = words_[word] >> shift;
  if (shift != 0 && word + 1 < kWords) bits |= words_[word + 1] << (64 - shift);
  return bits;
}

bool LatencyHistogram::ExactSum::any_bit_below(int bit) const {
  if (bit <= 0) return false;
  const auto word = static_cast<std::size_t>(bit / 64);
  const int shift = bit % 64;
  for (std::size_t i = 0; i < word; ++i) {
    if (words_[i] != 0) return true;
  }
  return shift != 0 && (words_[word] & ((std::uint64_t{1} << shift) - 1)) != 0;
}

double LatencyHistogram::ExactSum::rounded() const {
  std::size_t used = kWords;
  while (used > 0 && words_[used - 1] == 0) --used;
  if (used == 0) return 0.0;
  const int top_bit = static_cast<int>(64 * (used - 1)) + 63 - std::countl_zero(words_[used - 1]);
  // The 64 bits from the top: 53 for the significand, the rounding bit, 10 more that are sticky.
  const int window_bottom = top_bit - 63;
  const std::uint64_t window = word_bits(window_bottom);
  std::uint64_t significand = window >> 11;
  const bool round_bit = ((window >> 10) & 1) != 0;
  const bool sticky = (window & 0x3FF) != 0 || any_bit_below(window_bottom);
  if (round_bit && (sticky || (significand & 1) != 0)) ++significand;  // to nearest, ties to even
  // significand <= 2^53 converts exactly; ldexp gives +inf past the largest double.
  return std::ldexp(static_cast<double>(significand), top_bit - 52 - 1074);
}

// ---- LatencyHistogram -------------------------------------------------------------------------

LatencyHistogram::LatencyHistogram(LatencyHistogramConfig config) : config_(config) {
  if (const auto problem = config_problem(config)) {
    throw std::invalid_argument(concat("LatencyHistogram: ", problem->field, " ", problem->what));
  }
  sub_bucket_bits_ = sub_bucket_bits_for(config.significant_digits);
  counts_.assign(raw_index(config.highest) + 1, 0);
}

double LatencyHistogram::raw_edge(std::size_t index) const {
  if (index == 0) return config_.lowest;
  const std::size_t octave = (index - 1) >> sub_bucket_bits_;
  const std::size_t sub_bucket = (index - 1) & ((std::size_t{1} << sub_bucket_bits_) - 1);
  // lowest * 2^octave * (1 + (sub_bucket + 1) / S); the multiplier is exact, so each edge is
  // rounded once and the same on every machine.
  const double sub_buckets = std::ldexp(1.0, sub_bucket_bits_);
  const double multiplier = std::ldexp(sub_buckets + static_cast<double>(sub_bucket) + 1.0,
                                       static_cast<int>(octave) - sub_bucket_bits_);
  return config_.lowest * multiplier;
}

std::size_t LatencyHistogram::raw_index(double above_lowest) const {
  const double scaled = above_lowest / config_.lowest;
  std::size_t index = 1;
  if (scaled > 1) {
    int exponent = 0;
    const double fraction = std::frexp(scaled, &exponent);  // scaled = fraction * 2^exponent
    // Within the octave, (lower, upper] sub-buckets: the ceiling; exact, since S is a power of 2.
    const double position = std::ldexp(2 * fraction - 1, sub_bucket_bits_);
    index = (static_cast<std::size_t>(exponent - 1) << sub_bucket_bits_) +
            static_cast<std::size_t>(std::ceil(position));
    index = std::max<std::size_t>(index, 1);
  }
  // The division rounds, so `scaled` may sit one bucket off; the edges as computed decide.
  while (index > 1 && above_lowest <= raw_edge(index - 1)) --index;
  while (above_lowest > raw_edge(index)) ++index;
  return index;
}

double LatencyHistogram::bucket_upper_edge(std::size_t index) const {
  if (index >= counts_.size()) {
    throw std::out_of_range(concat("LatencyHistogram::bucket_upper_edge: no bucket ",
                                   std::to_string(index), " of ", std::to_string(counts_.size())));
  }
  return index + 1 == counts_.size() ? config_.highest : raw_edge(index);
}

std::uint64_t LatencyHistogram::count_in_bucket(std::size_t index) const {
  if (index >= counts_.size()) {
    throw std::out_of_range(concat("LatencyHistogram::count_in_bucket: no bucket ",
                                   std::to_string(index), " of ", std::to_string(counts_.size())));
  }
  return counts_[index];
}

std::size_t LatencyHistogram::bucket_index(double seconds) const {
  check_sample(seconds, "bucket_index");
  if (seconds <= config_.lowest) return 0;
  if (seconds > config_.highest) return counts_.size();
  return raw_index(seconds);
}

void LatencyHistogram::record(double seconds) {
  check_sample(seconds, "record");
  if (count_ == kMaxCount) throw std::overflow_error("LatencyHistogram::record: 2^64 - 1 samples");
  if (seconds == 0) seconds = 0;  // -0.0 would be written as a negative min
  const std::size_t index = bucket_index(seconds);
  if (index == counts_.size()) {
    ++overflow_;
  } else {
    ++counts_[index];
  }
  min_ = count_ == 0 ? seconds : std::min(min_, seconds);
  max_ = count_ == 0 ? seconds : std::max(max_, seconds);
  sum_.add(seconds);
  ++count_;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (other.config_ != config_) {
    throw std::invalid_argument(concat("LatencyHistogram::merge: the configurations differ (",
                                       config_text(config_), " vs ", config_text(other.config_),
                                       ")"));
  }
  if (other.count_ > kMaxCount - count_) {
    throw std::overflow_error("LatencyHistogram::merge: more than 2^64 - 1 samples");
  }
  if (other.count_ == 0) return;
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  overflow_ += other.overflow_;
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  sum_.add(other.sum_);
  count_ += other.count_;
}

double LatencyHistogram::sum() const { return sum_.rounded(); }

double LatencyHistogram::mean() const {
  return count_ == 0 ? 0.0 : sum() / static_cast<double>(count_);
}

double LatencyHistogram::value_at_quantile(double q) const {
  if (!(q >= 0.0 && q <= 1.0)) {
    throw std::invalid_argument(
        concat("LatencyHistogram::value_at_quantile: q must be in [0, 1], not ", number_text(q)));
  }
  if (count_ == 0) {
    throw std::invalid_argument("LatencyHistogram::value_at_quantile: no samples");
  }
  if (q == 0.0) return min_;
  if (q == 1.0) return max_;
  // Compared as doubles first: q * count may round up to 2^64, which no uint64 holds.
  const double wanted = std::ceil(q * static_cast<double>(count_));
  const std::uint64_t rank = wanted >= static_cast<double>(count_)
                                 ? count_
                                 : std::max<std::uint64_t>(1, static_cast<std::uint64_t>(wanted));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(bucket_upper_edge(i), max_);
  }
  return max_;  // the rank is among the overflowed samples: max is all that is known of them
}

std::vector<std::pair<double, std::uint64_t>> LatencyHistogram::cumulative_buckets(
    std::span<const double> le_bounds) const {
  for (std::size_t i = 0; i < le_bounds.size(); ++i) {
    if (!std::isfinite(le_bounds[i]) || (i > 0 && !(le_bounds[i] > le_bounds[i - 1]))) {
      throw std::invalid_argument(
          concat("LatencyHistogram::cumulative_buckets: le bounds must be finite and strictly "
                 "increasing (+Inf is added), bound ",
                 std::to_string(i), " is ", number_text(le_bounds[i])));
    }
  }
  std::vector<std::pair<double, std::uint64_t>> cumulative;
  cumulative.reserve(le_bounds.size() + 1);
  std::size_t next_bucket = 0;
  std::uint64_t at_or_below = 0;
  for (const double le : le_bounds) {
    while (next_bucket < counts_.size() && bucket_upper_edge(next_bucket) <= le) {
      at_or_below += counts_[next_bucket++];
    }
    cumulative.emplace_back(le, le >= max_ ? count_ : at_or_below);
  }
  cumulative.emplace_back(std::numeric_limits<double>::infinity(), count_);
  return cumulative;
}

nlohmann::ordered_json LatencyHistogram::to_json() const {
  const double total = sum();
  if (!std::isfinite(total)) {
    throw std::overflow_error("LatencyHistogram::to_json: the sum exceeds the largest double");
  }
  nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) buckets.push_back({bucket_upper_edge(i), counts_[i]});
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["schema"] = std::string(kSchema);
  j["lowest"] = config_.lowest;
  j["highest"] = config_.highest;
  j["significant_digits"] = config_.significant_digits;
  j["count"] = count_;
  j["min"] = min_;
  j["max"] = max_;
  j["sum"] = total;
  j["overflow"] = overflow_;
  j["buckets"] = std::move(buckets);
  return j;
}

LatencyHistogram LatencyHistogram::from_json(const nlohmann::json& j, const std::string& where) {
  const FieldReader reader(j, where);
  if (!j.is_object()) reader.fail("", concat("must be a JSON object, not ", value_text(j)));
  check_no_unknown_fields(j, reader);
  const nlohmann::json& schema = reader.field("schema");
  if (!schema.is_string() || schema.get<std::string>() != kSchema) {
    reader.fail("/schema", concat("must be \"", kSchema, "\", not ", value_text(schema)));
  }

  LatencyHistogram h(read_config(reader));
  h.count_ = reader.count("count");
  h.overflow_ = reader.count("overflow");
  h.min_ = reader.seconds("min");
  h.max_ = reader.seconds("max");
  const double sum = reader.seconds("sum");

  const nlohmann::json& buckets = reader.field("buckets");
  if (!buckets.is_array()) {
    reader.fail("/buckets", concat("must be an array of [upper_edge_seconds, count] pairs, not ",
                                   value_text(buckets)));
  }
  std::uint64_t total = h.overflow_;
  std::optional<std::size_t> first_bucket;
  std::optional<std::size_t> last_bucket;
  for (std::size_t k = 0; k < buckets.size(); ++k) {
    const std::string at = concat("/buckets/", std::to_string(k));
    const nlohmann::json& pair = buckets[k];
    if (!pair.is_array() || pair.size() != 2) {
      reader.fail(at, concat("must be a pair [upper_edge_seconds, count], not ", value_text(pair)));
    }
    const std::string edge_at = concat(at, "/0");
    const double edge = reader.number(pair[0], edge_at);
    const std::size_t index =
        is_valid_sample(edge) ? h.bucket_index(edge) : h.counts_.size();  // a miss if negative
    if (index == h.counts_.size() || h.bucket_upper_edge(index) != edge) {
      reader.fail(edge_at, concat(number_text(edge), " is not a bucket edge of a histogram of ",
                                  config_text(h.config_)));
    }
    if (last_bucket && index <= *last_bucket) {
      reader.fail(edge_at, concat("the edges must increase, but ", number_text(edge), " follows ",
                                  number_text(h.bucket_upper_edge(*last_bucket))));
    }
    const std::string count_at = concat(at, "/1");
    const std::uint64_t count = reader.count(pair[1], count_at);
    if (count == 0) reader.fail(count_at, "must be > 0: only non-empty buckets are listed");
    if (count > kMaxCount - total) reader.fail(count_at, "the counts add up to more than 2^64 - 1");
    total += count;
    h.counts_[index] = count;
    if (!first_bucket) first_bucket = index;
    last_bucket = index;
  }
  if (total != h.count_) {
    reader.fail("/count", concat("is ", std::to_string(h.count_), ", but the buckets and overflow ",
                                 "hold ", std::to_string(total), " samples"));
  }

  if (h.count_ == 0) {
    if (h.min_ != 0 || h.max_ != 0 || sum != 0) {
      reader.fail(h.min_ != 0   ? "/min"
                  : h.max_ != 0 ? "/max"
                                : "/sum",
                  "must be 0 in a histogram of no samples");
    }
  } else {
    if (h.min_ > h.max_) {
      reader.fail("/min",
                  concat(number_text(h.min_), " is greater than max ", number_text(h.max_)));
    }
    // The extremes are exact, so they must lie in the outermost non-empty buckets.
    const std::size_t overflow_index = h.counts_.size();
    const std::size_t lowest_used = first_bucket.value_or(overflow_index);
    const std::size_t highest_used = h.overflow_ > 0 ? overflow_index : *last_bucket;
    if (h.bucket_index(h.min_) != lowest_used) {
      reader.fail("/min", concat(number_text(h.min_),
                                 " does not lie in the lowest non-empty bucket (or overflow)"));
    }
    if (h.bucket_index(h.max_) != highest_used) {
      reader.fail("/max", concat(number_text(h.max_),
                                 " does not lie in the highest non-empty bucket (or overflow)"));
    }
    if (sum < h.max_) {
      reader.fail("/sum", concat(number_text(sum), " is less than max ", number_text(h.max_),
                                 ", but samples are never negative"));
    }
  }
  h.sum_.add(sum);
  return h;
}

bool LatencyHistogram::operator==(const LatencyHistogram& other) const {
  return config_ == other.config_ && counts_ == other.counts_ && overflow_ == other.overflow_ &&
         count_ == other.count_ && min_ == other.min_ && max_ == other.max_ && sum() == other.sum();
}

}  // namespace pathbench
