// The CPU and node list syntaxes of sysfs and /proc (cpulist, Cpus_allowed_list: "0-3,8,10-11",
// "0-15:2/4"; cpumap, Cpus_allowed: "ff,ffffffff"), the `--devices` option and the peer family's
// pair values. Lists that parse must survive format_cpu_list and parse back to the same set.

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "core/errors.hpp"
#include "inventory/cpulist.hpp"
#include "inventory/gpu_selection.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace pathbench;

namespace {

void round_trip(const std::vector<int>& ids, const char* parser) {
  fuzz::check(std::is_sorted(ids.begin(), ids.end()) &&
                  std::adjacent_find(ids.begin(), ids.end()) == ids.end(),
              std::string(parser) + " returned ids that are not sorted and unique");
  // Formatting a million ids and parsing them again proves nothing a thousand do not, and would
  // slow every input that names a large range.
  if (ids.size() > 4096) return;
  const std::string text = format_cpu_list(ids);
  fuzz::check(parse_cpu_list(text) == ids, std::string(parser) + ": format_cpu_list gave \"" +
                                               text +
                                               "\", which parses back "
                                               "to another set");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::expect_only<std::invalid_argument>(
      "parse_cpu_list", [&] { round_trip(parse_cpu_list(text), "parse_cpu_list"); });
  fuzz::expect_only<std::invalid_argument>(
      "parse_cpu_mask", [&] { round_trip(parse_cpu_mask(text), "parse_cpu_mask"); });
  fuzz::expect_only<InputError>("parse_device_list", [&] {
    const auto gpus = parse_device_list(text, {0, 1, 2, 3});
    (void)join_indexes(gpus);
    for (const auto& pair : gpu_pair_values(gpus)) {
      fuzz::check(parse_gpu_pair(pair).has_value(),
                  "gpu_pair_values gave \"" + pair + "\", which parse_gpu_pair refuses");
    }
  });
  fuzz::expect_no_throw("parse_gpu_pair", [&] { (void)parse_gpu_pair(text); });
  return 0;
}
