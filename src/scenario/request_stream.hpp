#pragma once

// The request streams the serving benchmark family replays against one GPU: when each request
// arrives and what it costs (bytes host->device before its step, bytes back after it, the kernel's
// duration). Three sources, each returning every request at once as a vector sorted by arrival
// (a stream is at most kMaxRequests requests, 320 MB, and the replayer needs the whole schedule
// before it starts so that building it never perturbs the measurement):
//   - poisson_requests: a Poisson process at a rate, for a duration or a count;
//   - burst_requests: N requests at once every T seconds, optionally jittered;
//   - read_request_trace: a JSON Lines trace file, every field validated.
//
// Reproducibility: the generators draw from std::mt19937_64, whose output the C++ standard fixes
// bit for bit, and turn its outputs into uniform, exponential and integer draws with the
// arithmetic below rather than with <random>'s distributions (whose algorithms each standard
// library chooses: libstdc++ and libc++ give different std::exponential_distribution sequences
// for the same engine). The uniform and integer draws are then identical everywhere; an
// exponential draw is -log(u) / rate, exact but for std::log, which IEEE 754 does not require to
// be correctly rounded (glibc's and LLVM's agree to within one ulp).
//
// Each random quantity has an engine of its own, so that making one of them drawn or fixed leaves
// the others unchanged: arrivals use mt19937_64(seed); h2d bytes, d2h bytes, kernel time and
// burst jitter use mt19937_64(splitmix64(seed + k)) for k = 1, 2, 3, 4 respectively.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pathbench {

struct Request {
  double arrival_s = 0;         // seconds after the stream starts
  std::uint64_t h2d_bytes = 0;  // copied host -> device before the step
  std::uint64_t d2h_bytes = 0;  // copied device -> host after it (KV offload)
  double kernel_us = 0;         // the decode-like kernel's duration per step
  bool operator==(const Request&) const = default;
};

// Caps every source enforces, so that a typo (a rate of 1e9, a size in bits) fails at once
// instead of allocating gigabytes or running for days.
inline constexpr std::size_t kMaxRequests = 10'000'000;
inline constexpr std::uint64_t kMaxRequestBytes = std::uint64_t{64} << 30;  // 64 GiB each way
inline constexpr double kMaxArrivalSeconds = 86'400;                        // one day
inline constexpr double kMaxKernelUs = 60e6;                                // one minute
inline constexpr std::uint64_t kDefaultRequestSeed = std::mt19937_64::default_seed;  // 5489

// ---------------------------------------------------------------------------------------------
// The portable draws (see above), exposed so that tests can pin them.

// SplitMix64's output for `x` (Steele, Lea, Flood 2014): spreads nearby seeds apart.
std::uint64_t splitmix64(std::uint64_t x);
// A double in (0, 1]: ((next >> 11) + 1) * 2^-53. Never 0, so that log() is always finite.
double unit_interval_draw(std::mt19937_64& engine);
// Exponential with mean 1 / rate_per_s, by inverse transform: -log(unit_interval_draw) / rate.
double exponential_draw(std::mt19937_64& engine, double rate_per_s);
// An integer uniform on [min, max] (min <= max), unbiased: outputs below 2^64 mod (max - min + 1)
// are rejected and drawn again.
std::uint64_t uniform_integer_draw(std::mt19937_64& engine, std::uint64_t min, std::uint64_t max);
// A double uniform on [min, max): min + (next >> 11) * 2^-53 * (max - min).
double uniform_real_draw(std::mt19937_64& engine, double min, double max);

// ---------------------------------------------------------------------------------------------
// What each generated request costs: a fixed value (min == max) or a uniform draw from [min, max]
// (bytes: every integer of the range; kernel time: [min, max)).

struct ByteRange {
  std::uint64_t min = 0, max = 0;  // max <= kMaxRequestBytes
  static ByteRange fixed(std::uint64_t bytes) { return {bytes, bytes}; }
};

struct KernelTimeRange {
  double min_us = 0, max_us = 0;  // finite, 0 <= min_us <= max_us <= kMaxKernelUs
  static KernelTimeRange fixed(double us) { return {us, us}; }
};

struct RequestShape {
  ByteRange h2d_bytes;
  ByteRange d2h_bytes;
  KernelTimeRange kernel_us;
};

// The generators check their spec and throw std::invalid_argument, naming the field, for one
// outside the documented ranges. The scenario layer validates user input (with file and pointer)
// before it builds a spec, so these are the last line of defence, not the user's error messages.

// A Poisson process: independent exponential inter-arrival times of mean 1 / rate_per_s, the
// first one counted from 0 (so no request arrives at exactly 0). Exactly one of duration_s (every
// arrival in [0, duration_s)) and count (that many requests) is set.
struct PoissonStream {
  double rate_per_s = 0;             // finite, > 0
  std::optional<double> duration_s;  // finite, (0, kMaxArrivalSeconds];
                                     // rate_per_s * duration_s <= kMaxRequests, and so
                                     // must the count drawn be
  std::optional<std::size_t> count;  // 1..kMaxRequests; the last arrival <= kMaxArrivalSeconds
  RequestShape shape;
  std::uint64_t seed = kDefaultRequestSeed;
};
std::vector<Request> poisson_requests(const PoissonStream& spec);

// burst_count bursts of burst_size requests, burst b at b * period_s exactly (computed as a
// product, not a running sum, so no rounding accumulates). With jitter_s > 0 each request arrives
// at its burst's time plus a uniform draw from [0, jitter_s); jitter_s < period_s keeps each burst
// before the next. Within a burst the requests are sorted by arrival (ties keep drawing order).
struct BurstStream {
  std::size_t burst_size = 1;   // >= 1; burst_size * burst_count <= kMaxRequests
  double period_s = 1;          // finite, > 0
  std::size_t burst_count = 1;  // >= 1; (burst_count - 1) * period_s + jitter_s
                                // <= kMaxArrivalSeconds
  double jitter_s = 0;          // finite, 0 <= jitter_s < period_s
  RequestShape shape;
  std::uint64_t seed = kDefaultRequestSeed;  // used for the jitter and drawn sizes only
};
std::vector<Request> burst_requests(const BurstStream& spec);

// ---------------------------------------------------------------------------------------------
// Trace files, JSON Lines: one request per line,
//   {"time_s": 0.0012, "h2d_bytes": 65536, "d2h_bytes": 0, "kernel_us": 250}
// Lines are split at '\n' (a '\r' before it is dropped, for files written on Windows); a UTF-8
// byte order mark at the start of a line is skipped (nlohmann's parser would skip it anyway, and
// traces concatenated from files that each had one keep working). A line that is only white space,
// or whose first non-white-space character is '#', is ignored. Line numbers count every line,
// from 1. Any other line must be one JSON object holding exactly the four keys, each once:
//   - time_s, kernel_us: JSON numbers, finite, >= 0; time_s <= kMaxArrivalSeconds and not below
//     the previous request's; kernel_us <= kMaxKernelUs;
//   - h2d_bytes, d2h_bytes: integer literals (digits only: 1.0, 1e3 and -1 are refused; -0 is 0),
//     at most kMaxRequestBytes (which also keeps them within uint64).
// A NUL byte or bytes that are not UTF-8 anywhere, comment lines included, are refused, as are
// more than max_lines lines, a line longer than max_line_bytes (found without reading the rest of
// it), a file larger than max_file_bytes (found before reading, and if it grows while read), and
// a trace with no requests. Only a regular file is read: a directory, FIFO (never opened for a
// blocking read), device or missing file is refused.
//
// Every refusal is InputError(file, pointer, what): `file` the path as given, `pointer`
// "line N/<key>" for a field ("line 17/h2d_bytes: expected a non-negative integer, found -5"; an
// unknown key escaped as a JSON pointer token), "line N" for the line as a whole (not JSON, not an
// object, too long, a NUL byte, the first line past max_lines), and empty for the file (cannot be
// read, too large, no requests).

struct TraceLimits {
  std::uint64_t max_file_bytes = std::uint64_t{1} << 30;  // 1 GiB: 10M lines of 100 bytes
  std::size_t max_line_bytes = std::size_t{64} << 10;     // 64 KiB, without the '\n'
  std::size_t max_lines = kMaxRequests;                   // every line, blank and comment too
};

std::vector<Request> read_request_trace(const std::filesystem::path& path,
                                        const TraceLimits& limits = {});
// The same rules for a trace already in memory; `file` names it in errors.
std::vector<Request> parse_request_trace(std::string_view text, const std::string& file,
                                         const TraceLimits& limits = {});

// ---------------------------------------------------------------------------------------------
// What a stream offers, for the result's context.
struct RequestStreamSummary {
  std::size_t count = 0;
  double duration_s = 0;  // the last arrival (arrivals count from the stream's start); 0 if empty
  // count / duration_s: the offered load. Empty when duration_s is 0 (no requests, or all at 0),
  // where no rate is defined.
  std::optional<double> mean_rate_per_s;
  std::uint64_t total_h2d_bytes = 0, max_h2d_bytes = 0;
  std::uint64_t total_d2h_bytes = 0, max_d2h_bytes = 0;
  double total_kernel_us = 0;
  bool operator==(const RequestStreamSummary&) const = default;
};
// Throws std::overflow_error if a byte total passes 2^64 (impossible within the caps above).
RequestStreamSummary summarize_requests(std::span<const Request> requests);

}  // namespace pathbench
