#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pathbench {

// Linux list syntax as in /sys/devices/system/node/node0/cpulist or Cpus_allowed_list:
// "0-3,8,10-11". Also accepts the kernel's strided form "0-15:2/4" (use 2 of every 4). Empty or
// all-whitespace text is the empty set. Returns sorted, unique ids. Throws std::invalid_argument
// quoting the text on anything else.
std::vector<int> parse_cpu_list(std::string_view text);

// Hex mask syntax as in /sys/.../cpumap or Cpus_allowed: comma-separated 32-bit words, most
// significant first ("ff,ffffffff" is CPUs 0-39). Returns sorted ids. Throws
// std::invalid_argument quoting the text.
std::vector<int> parse_cpu_mask(std::string_view text);

// Compact list syntax: {0,1,2,3,8} -> "0-3,8". Input need not be sorted; duplicates are ignored.
// Negative ids throw std::invalid_argument.
std::string format_cpu_list(std::vector<int> cpus);

// The ids sorted, each once.
std::vector<int> sorted_unique(std::vector<int> ids);

}  // namespace pathbench
