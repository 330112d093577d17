#pragma once

#include <cstdint>
#include <string_view>

namespace pathbench {

// The value of an integer command-line option, parsed strictly: decimal digits with an optional
// leading '-', nothing else (no "", no "0x10", no "1e3", no "+5", no " 5", no "5 "), within
// [min, max]. Anything else is InputError::option(name, "expected an integer in [min, max],
// found ...").
std::int64_t parse_integer_option(std::string_view name, std::string_view text, std::int64_t min,
                                  std::int64_t max);

}  // namespace pathbench
