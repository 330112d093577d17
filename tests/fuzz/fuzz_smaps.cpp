// /proc/self/smaps as the placement checks read it (query_huge_backing): the text parsed, then the
// huge-page backing of ranges around the mappings it found. parse_smaps throws std::runtime_error
// for a field pathbench relies on whose value it cannot read (the kernel's format changed).

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "placement/smaps.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace pathbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<SmapsEntry> entries;
  fuzz::expect_only<std::runtime_error>("parse_smaps",
                                        [&] { entries = parse_smaps(fuzz::as_text(data, size)); });
  fuzz::expect_no_throw("huge_backing_in", [&] {
    constexpr auto kTop = std::numeric_limits<std::uintptr_t>::max();
    (void)huge_backing_in(entries, 0, kTop);
    for (const auto& e : entries) {
      if (auto b = huge_backing_in(entries, e.start, e.end - e.start)) {
        (void)b->describe();
        const double f = b->fraction();
        fuzz::check(f >= 0, "negative huge-page fraction");
      }
      (void)huge_backing_in(entries, e.end, kTop - e.end);
    }
  });
  return 0;
}
