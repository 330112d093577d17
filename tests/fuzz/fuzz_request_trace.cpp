// Request traces (JSON Lines) as the serving family reads them: parse_request_trace either returns
// a stream that keeps every documented rule (sorted arrivals, fields in range, at least one
// request) or refuses with InputError.

#include <cmath>
#include <cstdint>

#include "core/errors.hpp"
#include "scenario/request_stream.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace pathbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  TraceLimits limits;
  limits.max_line_bytes = 4096;
  limits.max_lines = 10000;
  fuzz::expect_only<InputError>("parse_request_trace", [&] {
    const auto requests = parse_request_trace(fuzz::as_text(data, size), "trace.jsonl", limits);
    fuzz::check(!requests.empty(), "a trace was accepted without requests");
    double last = 0;
    for (const auto& r : requests) {
      fuzz::check(
          std::isfinite(r.arrival_s) && r.arrival_s >= last && r.arrival_s <= kMaxArrivalSeconds,
          "an accepted arrival is out of order or out of range");
      fuzz::check(r.h2d_bytes <= kMaxRequestBytes && r.d2h_bytes <= kMaxRequestBytes,
                  "accepted bytes beyond the cap");
      fuzz::check(std::isfinite(r.kernel_us) && r.kernel_us >= 0 && r.kernel_us <= kMaxKernelUs,
                  "an accepted kernel time is out of range");
      last = r.arrival_s;
    }
    (void)summarize_requests(requests);
  });
  return 0;
}
