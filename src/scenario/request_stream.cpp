#include "scenario/request_stream.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "core/text.hpp"
#include "core/unique_fd.hpp"

namespace pathbench {

// ---------------------------------------------------------------------------------------------
// Draws.

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

namespace {
constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;  // 2^-53: a double's 53-bit fraction
}  // namespace

double unit_interval_draw(std::mt19937_64& engine) {
  return static_cast<double>((engine() >> 11) + 1) * kTwoToMinus53;
}

double exponential_draw(std::mt19937_64& engine, double rate_per_s) {
  return -std::log(unit_interval_draw(engine)) / rate_per_s;
}

std::uint64_t uniform_integer_draw(std::mt19937_64& engine, std::uint64_t min, std::uint64_t max) {
  const std::uint64_t span = max - min + 1;  // 0 when [min, max] is all 2^64 values
  if (span == 0) return engine();
  // 2^64 mod span: the outputs below it would make the low residues one draw likelier.
  const std::uint64_t rejected_below = (0 - span) % span;
  for (;;) {
    const std::uint64_t x = engine();
    if (x >= rejected_below) return min + x % span;
  }
}

double uniform_real_draw(std::mt19937_64& engine, double min, double max) {
  const double u = static_cast<double>(engine() >> 11) * kTwoToMinus53;
  const double x = min + u * (max - min);
  // u < 1, but the product and sum round: keep the promise of a half-open interval.
  return x < max || max <= min ? x : std::nextafter(max, min);
}

namespace {

// ---------------------------------------------------------------------------------------------
// Spec checks (std::invalid_argument: the caller validated user input already).

// `x` as a message shows it: a whole number of up to 15 digits in full (a cap reads 60000000,
// not 6e+07), anything else as the shortest text that reads back as `x`.
std::string number_text(double x) {
  std::array<char, 32> buf{};
  const bool whole = std::isfinite(x) && std::fabs(x) < 1e15 && x == std::trunc(x);
  const auto end =
      whole ? std::to_chars(buf.data(), buf.data() + buf.size(), x, std::chars_format::fixed, 0).ptr
            : std::to_chars(buf.data(), buf.data() + buf.size(), x).ptr;
  return std::string(buf.data(), end);
}

void require(bool ok, std::string_view stream, std::string_view field, const std::string& rule,
             const std::string& found) {
  if (!ok)
    throw std::invalid_argument(concat(stream, ": ", field, " must be ", rule, ", got ", found));
}

void check_shape(const RequestShape& shape, std::string_view stream) {
  const auto bytes = [&](const ByteRange& r, std::string_view field) {
    require(r.min <= r.max && r.max <= kMaxRequestBytes, stream, field,
            concat("a range min <= max <= ", std::to_string(kMaxRequestBytes)),
            concat("[", std::to_string(r.min), ", ", std::to_string(r.max), "]"));
  };
  bytes(shape.h2d_bytes, "shape.h2d_bytes");
  bytes(shape.d2h_bytes, "shape.d2h_bytes");
  const KernelTimeRange& k = shape.kernel_us;
  require(std::isfinite(k.min_us) && std::isfinite(k.max_us) && 0 <= k.min_us &&
              k.min_us <= k.max_us && k.max_us <= kMaxKernelUs,
          stream, "shape.kernel_us",
          concat("a range 0 <= min <= max <= ", number_text(kMaxKernelUs)),
          concat("[", number_text(k.min_us), ", ", number_text(k.max_us), "]"));
}

void check_poisson(const PoissonStream& spec) {
  constexpr std::string_view kStream = "poisson stream";
  require(std::isfinite(spec.rate_per_s) && spec.rate_per_s > 0, kStream, "rate_per_s",
          "finite and positive", number_text(spec.rate_per_s));
  require(spec.duration_s.has_value() != spec.count.has_value(), kStream, "duration_s or count",
          "set, exactly one of them", spec.duration_s ? "both" : "neither");
  if (spec.duration_s) {
    const double d = *spec.duration_s;
    require(std::isfinite(d) && d > 0 && d <= kMaxArrivalSeconds, kStream, "duration_s",
            "in (0, " + number_text(kMaxArrivalSeconds) + "]", number_text(d));
    require(spec.rate_per_s * d <= static_cast<double>(kMaxRequests), kStream,
            "rate_per_s * duration_s", "at most " + std::to_string(kMaxRequests) + " requests",
            number_text(spec.rate_per_s * d));
  } else {
    require(*spec.count >= 1 && *spec.count <= kMaxRequests, kStream, "count",
            "in [1, " + std::to_string(kMaxRequests) + "]", std::to_string(*spec.count));
  }
  check_shape(spec.shape, kStream);
}

void check_bursts(const BurstStream& spec) {
  constexpr std::string_view kStream = "burst stream";
  require(spec.burst_size >= 1, kStream, "burst_size", "at least 1",
          std::to_string(spec.burst_size));
  require(spec.burst_count >= 1, kStream, "burst_count", "at least 1",
          std::to_string(spec.burst_count));
  require(spec.burst_size <= kMaxRequests / spec.burst_count, kStream, "burst_size * burst_count",
          "at most " + std::to_string(kMaxRequests),
          std::to_string(spec.burst_size) + " * " + std::to_string(spec.burst_count));
  require(std::isfinite(spec.period_s) && spec.period_s > 0, kStream, "period_s",
          "finite and positive", number_text(spec.period_s));
  require(std::isfinite(spec.jitter_s) && spec.jitter_s >= 0 && spec.jitter_s < spec.period_s,
          kStream, "jitter_s", "in [0, period_s)", number_text(spec.jitter_s));
  const double last = static_cast<double>(spec.burst_count - 1) * spec.period_s + spec.jitter_s;
  require(last <= kMaxArrivalSeconds, kStream, "(burst_count - 1) * period_s + jitter_s",
          "at most " + number_text(kMaxArrivalSeconds), number_text(last));
  check_shape(spec.shape, kStream);
}

// ---------------------------------------------------------------------------------------------
// Generators.

// The engine of the k-th random quantity (k >= 1; arrivals use the seed itself, k = 0).
std::mt19937_64 quantity_engine(std::uint64_t seed, std::uint64_t k) {
  return std::mt19937_64(splitmix64(seed + k));
}

// Draws each request's sizes and kernel time, each from its own engine (see the header).
class ShapeDrawer {
 public:
  ShapeDrawer(const RequestShape& shape, std::uint64_t seed)
      : shape_(shape),
        h2d_(quantity_engine(seed, 1)),
        d2h_(quantity_engine(seed, 2)),
        kernel_(quantity_engine(seed, 3)) {}

  Request at(double arrival_s) {
    return {arrival_s, bytes(shape_.h2d_bytes, h2d_), bytes(shape_.d2h_bytes, d2h_), kernel_us()};
  }

 private:
  static std::uint64_t bytes(const ByteRange& r, std::mt19937_64& engine) {
    return r.min == r.max ? r.min : uniform_integer_draw(engine, r.min, r.max);
  }
  double kernel_us() {
    const KernelTimeRange& k = shape_.kernel_us;
    return k.min_us == k.max_us ? k.min_us : uniform_real_draw(kernel_, k.min_us, k.max_us);
  }

  RequestShape shape_;
  std::mt19937_64 h2d_, d2h_, kernel_;
};

}  // namespace

std::vector<Request> poisson_requests(const PoissonStream& spec) {
  check_poisson(spec);
  std::mt19937_64 arrivals(spec.seed);
  ShapeDrawer shape(spec.shape, spec.seed);
  std::vector<Request> requests;
  // A duration's count is random; its mean plus five standard deviations almost always suffices.
  const double expected =
      spec.count ? static_cast<double>(*spec.count) : spec.rate_per_s * *spec.duration_s;
  requests.reserve(static_cast<std::size_t>(
      std::min(expected + 5 * std::sqrt(expected) + 16, static_cast<double>(kMaxRequests))));
  double t = 0;
  while (!spec.count || requests.size() < *spec.count) {
    t += exponential_draw(arrivals, spec.rate_per_s);
    if (spec.duration_s && t >= *spec.duration_s) break;
    // Only a count can run past the day (a duration is at most one), and only a duration past
    // the count cap (by chance, its mean being within it).
    if (t > kMaxArrivalSeconds) {
      throw std::invalid_argument("poisson stream: count " + std::to_string(*spec.count) +
                                  " at rate_per_s " + number_text(spec.rate_per_s) +
                                  " arrives past " + number_text(kMaxArrivalSeconds) + " s");
    }
    if (requests.size() == kMaxRequests) {
      throw std::invalid_argument("poisson stream: more than " + std::to_string(kMaxRequests) +
                                  " requests were drawn within duration_s");
    }
    requests.push_back(shape.at(t));
  }
  return requests;
}

std::vector<Request> burst_requests(const BurstStream& spec) {
  check_bursts(spec);
  ShapeDrawer shape(spec.shape, spec.seed);
  std::mt19937_64 jitter = quantity_engine(spec.seed, 4);
  std::vector<Request> requests;
  requests.reserve(spec.burst_size * spec.burst_count);
  for (std::size_t b = 0; b < spec.burst_count; ++b) {
    const double burst_s = static_cast<double>(b) * spec.period_s;
    const auto first = static_cast<std::ptrdiff_t>(requests.size());
    for (std::size_t i = 0; i < spec.burst_size; ++i) {
      const double offset = spec.jitter_s > 0 ? uniform_real_draw(jitter, 0, spec.jitter_s) : 0;
      requests.push_back(shape.at(burst_s + offset));
    }
    std::stable_sort(requests.begin() + first, requests.end(),
                     [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  }
  return requests;
}

// ---------------------------------------------------------------------------------------------
// Trace files.

namespace {

using json = nlohmann::json;

constexpr std::array<std::string_view, 4> kTraceKeys = {"time_s", "h2d_bytes", "d2h_bytes",
                                                        "kernel_us"};
enum TraceKey : std::size_t { kTimeS, kH2dBytes, kD2hBytes, kKernelUs };
constexpr std::string_view kTraceKeyList = "time_s, h2d_bytes, d2h_bytes and kernel_us";

// The offset of the first byte of `text` that does not start a valid UTF-8 sequence (overlong
// forms, surrogates and code points past U+10FFFF included), or npos.
std::size_t first_invalid_utf8(std::string_view text) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char b0 = byte(i);
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    char32_t cp = 0, min = 0;
    if ((b0 & 0xE0) == 0xC0) {
      n = 2, cp = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      n = 3, cp = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      n = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
      return i;
    }
    if (i + n > text.size()) return i;
    for (std::size_t k = 1; k < n; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += n;
  }
  return std::string_view::npos;
}

// One value of a trace line as the SAX parser reported it, kept until the whole line has parsed
// (a syntax error later in the line is reported before any field's value).
struct FieldValue {
  enum class Kind { kAbsent, kNegativeInteger, kUnsignedInteger, kFloat, kOther };
  Kind kind = Kind::kAbsent;
  std::int64_t negative = 0;
  std::uint64_t unsigned_value = 0;
  double float_value = 0;
  std::string text;  // as messages show it: the number's token, a JSON string, "an object", ...
};

// SAX handler for one line: records the four fields and the first key problem (unknown or
// repeated); values nested deeper than the fields are skipped.
class TraceLineHandler {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  TraceLineHandler(const std::string& file, const std::string& line_pointer)
      : file_(file), line_pointer_(line_pointer) {}

  bool null() { return value(FieldValue::Kind::kOther, "null"); }
  bool boolean(bool v) { return value(FieldValue::Kind::kOther, v ? "true" : "false"); }
  bool number_integer(number_integer_t v) {
    if (v >= 0) return number_unsigned(static_cast<std::uint64_t>(v));  // "-0"
    FieldValue f{FieldValue::Kind::kNegativeInteger, v, 0, 0, std::to_string(v)};
    return store(std::move(f));
  }
  bool number_unsigned(number_unsigned_t v) {
    return store({FieldValue::Kind::kUnsignedInteger, 0, v, 0, std::to_string(v)});
  }
  bool number_float(number_float_t v, const string_t& token) {
    return store({FieldValue::Kind::kFloat, 0, 0, v, token});
  }
  bool string(string_t& v) {
    return value(FieldValue::Kind::kOther,
                 json(v).dump(-1, ' ', false, json::error_handler_t::replace));
  }
  bool binary(binary_t& /*v*/) { return value(FieldValue::Kind::kOther, "binary data"); }
  bool start_object(std::size_t /*elements*/) {
    if (depth_ == 0) is_object_ = true;
    value(FieldValue::Kind::kOther, "an object");
    ++depth_;
    return true;
  }
  bool start_array(std::size_t /*elements*/) {
    value(FieldValue::Kind::kOther, "an array");
    ++depth_;
    return true;
  }
  bool end_object() { return leave(); }
  bool end_array() { return leave(); }
  bool key(string_t& k) {
    if (depth_ == 1) field_key(k);
    return true;
  }

  [[noreturn]] bool parse_error(std::size_t /*position*/, const std::string& token,
                                const nlohmann::detail::exception& e) {
    if (e.id == 406 && depth_ == 1 && current_ != kNoField) {
      // nlohmann's lexer read a number beyond double's range (1e999): a bad value, not bad JSON.
      throw InputError(file_, field_pointer(kTraceKeys[current_]),
                       "expected a finite number, found " + token + " (beyond a double's range)");
    }
    throw InputError(file_, line_pointer_, "not valid JSON " + parse_error_text(e.what()));
  }

  bool is_object() const { return is_object_; }
  const std::string& top_level_text() const { return top_level_text_; }
  // The first key that is unknown or repeated, and what is wrong with it.
  bool has_bad_key() const { return !bad_key_problem_.empty(); }
  const std::string& bad_key() const { return bad_key_; }
  const std::string& bad_key_problem() const { return bad_key_problem_; }
  const std::array<FieldValue, kTraceKeys.size()>& fields() const { return fields_; }
  std::string field_pointer(std::string_view key) const {
    return concat(line_pointer_, "/", pointer_token(key));
  }

 private:
  static constexpr std::size_t kNoField = kTraceKeys.size();

  // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error ..." ->
  // "at column 9: syntax error ...": the line is always line 1 to nlohmann.
  static std::string parse_error_text(std::string message) {
    if (const auto end = message.find("] "); end != std::string::npos) message.erase(0, end + 2);
    constexpr std::string_view kAt = "parse error at line 1, column ";
    if (message.starts_with(kAt))
      return concat("at column ", std::string_view(message).substr(kAt.size()));
    return ": " + message;
  }

  void field_key(const std::string& k) {
    const auto it = std::find(kTraceKeys.begin(), kTraceKeys.end(), k);
    current_ = static_cast<std::size_t>(it - kTraceKeys.begin());
    if (current_ == kNoField) {
      note_bad_key(
          k, "unknown key " + quoted(k) + "; a request has exactly " + std::string(kTraceKeyList));
    } else if (seen_[current_]) {
      note_bad_key(k, "duplicate key " + quoted(k) +
                          ": JSON readers differ in which one they keep, so the line is refused");
      current_ = kNoField;  // the first value stands for the messages about values
    } else {
      seen_[current_] = true;
    }
  }
  void note_bad_key(const std::string& k, std::string problem) {
    if (has_bad_key()) return;
    bad_key_ = k;
    bad_key_problem_ = std::move(problem);
  }
  static std::string quoted(const std::string& s) {
    return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
  }

  bool value(FieldValue::Kind kind, std::string text) {
    FieldValue f;
    f.kind = kind;
    f.text = std::move(text);
    return store(std::move(f));
  }
  // A value completes at depth 0 (the whole line) or 1 (a field); deeper ones are skipped.
  bool store(FieldValue&& f) {
    if (depth_ == 0 && !is_object_) {
      top_level_text_ = std::move(f.text);
    } else if (depth_ == 1 && current_ != kNoField) {
      fields_[current_] = std::move(f);
      current_ = kNoField;
    }
    return true;
  }
  bool leave() {
    --depth_;
    return true;
  }

  const std::string& file_;
  const std::string& line_pointer_;
  std::size_t depth_ = 0;
  bool is_object_ = false;
  std::string top_level_text_;
  std::size_t current_ = kNoField;  // the field whose value comes next
  std::array<bool, kTraceKeys.size()> seen_{};
  std::array<FieldValue, kTraceKeys.size()> fields_{};
  std::string bad_key_, bad_key_problem_;
};

// Turns lines into requests, line by line, keeping what the next line's checks need.
class TraceParser {
 public:
  TraceParser(std::string file, const TraceLimits& limits)
      : file_(std::move(file)), limits_(limits) {}

  // Bytes of the line being assembled, before its '\n': refused once past the cap, so that a
  // line of a GB is never held.
  void check_line_length(std::size_t bytes) const {
    if (bytes > limits_.max_line_bytes) {
      throw InputError(file_, line_pointer(line_number_ + 1),
                       "longer than " + std::to_string(limits_.max_line_bytes) +
                           " bytes; a trace line is one small JSON object");
    }
  }

  void add_line(std::string_view line) {
    ++line_number_;
    if (line_number_ > limits_.max_lines) {
      throw InputError(file_, line_pointer(line_number_),
                       "more than " + std::to_string(limits_.max_lines) + " lines in the trace");
    }
    check_line_length(line.size());
    pointer_ = line_pointer(line_number_);
    check_bytes(line);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
    const std::string_view content = trim(line);
    if (content.empty() || content.starts_with('#')) return;
    parse_request(line);
  }

  std::vector<Request> finish() {
    if (requests_.empty()) {
      throw InputError(file_, "",
                       line_number_ == 0
                           ? std::string("is empty; a trace needs at least one request")
                           : "holds no requests (its " + std::to_string(line_number_) +
                                 " lines are blank or comments); a trace needs at least one");
    }
    return std::move(requests_);
  }

 private:
  static std::string line_pointer(std::size_t number) { return "line " + std::to_string(number); }

  void check_bytes(std::string_view line) const {
    if (const auto nul = line.find('\0'); nul != std::string_view::npos) {
      throw InputError(
          file_, pointer_,
          "a NUL byte at byte " + std::to_string(nul + 1) + " of the line; a trace is text");
    }
    if (const auto bad = first_invalid_utf8(line); bad != std::string_view::npos) {
      throw InputError(file_, pointer_,
                       "bytes that are not UTF-8 at byte " + std::to_string(bad + 1) +
                           " of the line; a trace is UTF-8 text");
    }
  }

  void parse_request(std::string_view line) {
    TraceLineHandler handler(file_, pointer_);
    json::sax_parse(line.begin(), line.end(), &handler, json::input_format_t::json, true);
    if (!handler.is_object()) {
      throw InputError(file_, pointer_,
                       "expected a JSON object (one request), found " + handler.top_level_text());
    }
    if (handler.has_bad_key()) {
      throw InputError(file_, handler.field_pointer(handler.bad_key()), handler.bad_key_problem());
    }
    const auto& fields = handler.fields();
    for (std::size_t k = 0; k < kTraceKeys.size(); ++k) {
      if (fields[k].kind == FieldValue::Kind::kAbsent) {
        throw InputError(file_, handler.field_pointer(kTraceKeys[k]),
                         concat("missing; a request has ", kTraceKeyList));
      }
    }
    Request r;
    r.arrival_s = seconds(fields[kTimeS], handler.field_pointer(kTraceKeys[kTimeS]));
    r.h2d_bytes = bytes(fields[kH2dBytes], handler.field_pointer(kTraceKeys[kH2dBytes]));
    r.d2h_bytes = bytes(fields[kD2hBytes], handler.field_pointer(kTraceKeys[kD2hBytes]));
    r.kernel_us = kernel_us(fields[kKernelUs], handler.field_pointer(kTraceKeys[kKernelUs]));
    requests_.push_back(r);
    previous_time_text_ = fields[kTimeS].text;
    previous_time_line_ = line_number_;
  }

  // A finite non-negative JSON number at most `max` ("seconds", "microseconds" name the unit).
  double number(const FieldValue& f, const std::string& pointer, double max,
                std::string_view unit) const {
    double x = 0;
    switch (f.kind) {
      case FieldValue::Kind::kUnsignedInteger:
        x = static_cast<double>(f.unsigned_value);
        break;
      case FieldValue::Kind::kFloat:
        x = f.float_value;
        break;
      default:
        x = -1;
        break;
    }
    if (!(std::isfinite(x) && x >= 0)) {
      throw InputError(
          file_, pointer,
          concat("expected a finite non-negative number of ", unit, ", found ", f.text));
    }
    if (x > max) {
      throw InputError(file_, pointer,
                       concat("at most ", number_text(max), " ", unit, ", found ", f.text));
    }
    return x + 0.0;  // -0.0 becomes 0
  }

  double seconds(const FieldValue& f, const std::string& pointer) const {
    const double t = number(f, pointer, kMaxArrivalSeconds, "seconds");
    if (!requests_.empty() && t < requests_.back().arrival_s) {
      throw InputError(file_, pointer,
                       "found " + f.text + ", before the previous request's " +
                           previous_time_text_ + " (line " + std::to_string(previous_time_line_) +
                           "); times must not decrease");
    }
    return t;
  }

  double kernel_us(const FieldValue& f, const std::string& pointer) const {
    return number(f, pointer, kMaxKernelUs, "microseconds");
  }

  std::uint64_t bytes(const FieldValue& f, const std::string& pointer) const {
    // nlohmann reads an integer literal beyond 64 bits as a double: digits only, so too large.
    const bool huge_integer = f.kind == FieldValue::Kind::kFloat &&
                              f.text.find_first_not_of("0123456789") == std::string::npos;
    if (f.kind != FieldValue::Kind::kUnsignedInteger && !huge_integer) {
      throw InputError(file_, pointer, "expected a non-negative integer, found " + f.text);
    }
    if (huge_integer || f.unsigned_value > kMaxRequestBytes) {
      throw InputError(file_, pointer,
                       "at most " + std::to_string(kMaxRequestBytes) +
                           " bytes (64 GiB) per request, found " + f.text);
    }
    return f.unsigned_value;
  }

  std::string file_;
  TraceLimits limits_;
  std::size_t line_number_ = 0;  // lines added so far
  std::string pointer_;          // "line N" of the line being parsed
  std::vector<Request> requests_;
  std::string previous_time_text_;
  std::size_t previous_time_line_ = 0;
};

// Cuts a byte stream, chunk by chunk, into lines for a TraceParser, holding at most one line.
class LineSplitter {
 public:
  explicit LineSplitter(TraceParser& parser) : parser_(parser) {}

  void feed(std::string_view chunk) {
    while (!chunk.empty()) {
      const auto newline = chunk.find('\n');
      const std::string_view piece = chunk.substr(0, newline);
      parser_.check_line_length(pending_.size() + piece.size());
      if (newline == std::string_view::npos) {
        pending_.append(piece);
        return;
      }
      if (pending_.empty()) {
        parser_.add_line(piece);  // the common case: the whole line is in this chunk
      } else {
        pending_.append(piece);
        parser_.add_line(pending_);
        pending_.clear();
      }
      chunk.remove_prefix(newline + 1);
    }
  }

  // The last line, when the input does not end with '\n'.
  void finish() {
    if (!pending_.empty()) parser_.add_line(pending_);
    pending_.clear();
  }

 private:
  TraceParser& parser_;
  std::string pending_;
};

// open_regular_file's checks (regular file, size cap, no blocking on a FIFO) as InputErrors.
int open_trace(const std::filesystem::path& path, std::uint64_t max_bytes) {
  try {
    return open_regular_file(path, max_bytes);
  } catch (const SystemError& e) {
    throw InputError(path.string(), "",
                     std::string("cannot read: ") + std::strerror(e.error_number()));
  } catch (const std::exception& e) {
    throw InputError(path.string(), "", std::string("cannot read: ") + e.what());
  }
}

}  // namespace

std::vector<Request> read_request_trace(const std::filesystem::path& path,
                                        const TraceLimits& limits) {
  const std::string file = path.string();
  const UniqueFd fd(open_trace(path, limits.max_file_bytes));
  TraceParser parser(file, limits);
  LineSplitter lines(parser);
  std::vector<char> buffer(std::size_t{1} << 20);
  std::uint64_t read_so_far = 0;
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(file, "", std::string("cannot read: ") + std::strerror(errno));
    }
    read_so_far += static_cast<std::uint64_t>(n);
    if (read_so_far > limits.max_file_bytes) {
      throw InputError(file, "",
                       "cannot read: grew beyond " + std::to_string(limits.max_file_bytes) +
                           " bytes while being read");
    }
    lines.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
  }
  lines.finish();
  return parser.finish();
}

std::vector<Request> parse_request_trace(std::string_view text, const std::string& file,
                                         const TraceLimits& limits) {
  if (text.size() > limits.max_file_bytes) {
    throw InputError(file, "",
                     "is " + std::to_string(text.size()) + " bytes, more than the " +
                         std::to_string(limits.max_file_bytes) + " a trace may have");
  }
  TraceParser parser(file, limits);
  LineSplitter lines(parser);
  lines.feed(text);
  lines.finish();
  return parser.finish();
}

// ---------------------------------------------------------------------------------------------
// Summary.

namespace {
void add_bytes(std::uint64_t& total, std::uint64_t bytes) {
  if (bytes > std::numeric_limits<std::uint64_t>::max() - total) {
    throw std::overflow_error("request stream: byte total beyond 2^64");
  }
  total += bytes;
}
}  // namespace

RequestStreamSummary summarize_requests(std::span<const Request> requests) {
  RequestStreamSummary s;
  s.count = requests.size();
  for (const Request& r : requests) {
    s.duration_s = std::max(s.duration_s, r.arrival_s);
    add_bytes(s.total_h2d_bytes, r.h2d_bytes);
    add_bytes(s.total_d2h_bytes, r.d2h_bytes);
    s.max_h2d_bytes = std::max(s.max_h2d_bytes, r.h2d_bytes);
    s.max_d2h_bytes = std::max(s.max_d2h_bytes, r.d2h_bytes);
    s.total_kernel_us += r.kernel_us;
  }
  if (s.duration_s > 0) s.mean_rate_per_s = static_cast<double>(s.count) / s.duration_s;
  return s;
}

}  // namespace pathbench
