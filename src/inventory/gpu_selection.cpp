#include "inventory/gpu_selection.hpp"
#include "inventory/cpulist.hpp"

#include <algorithm>
#include <cctype>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace pathbench {

namespace {

// A CUDA index: decimal digits only, at most 4 of them.
std::optional<int> parse_index(std::string_view s) {
  if (s.empty() || s.size() > 4) return std::nullopt;
  int value = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

std::string join_indexes(const std::vector<int>& indexes) {
  std::string out;
  for (int i : indexes) out += (out.empty() ? "" : ", ") + std::to_string(i);
  return out;
}

std::vector<int> parse_device_list(std::string_view text, const std::vector<int>& available,
                                   const std::string& option) {
  std::vector<int> sorted_available = available;
  std::sort(sorted_available.begin(), sorted_available.end());
  const std::string_view all = trim(text);
  if (all == "all") return sorted_available;
  if (all.empty()) {
    throw InputError::option(option,
                             "expected \"all\" or a comma list of CUDA device indexes (0,1)");
  }
  const std::string machine = sorted_available.empty() ? "this machine has no usable CUDA device"
                                                       : "this machine's CUDA devices are " +
                                                             join_indexes(sorted_available);
  std::vector<int> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = all.find(',', start);
    const std::string_view item =
        trim(all.substr(start, comma == std::string_view::npos ? all.npos : comma - start));
    const auto index = parse_index(item);
    if (!index) {
      throw InputError::option(
          option, "\"" + std::string(item) +
                      "\" is not a CUDA device index (expected \"all\" or a comma list "
                      "such as 0,1)");
    }
    if (std::find(out.begin(), out.end(), *index) != out.end()) {
      throw InputError::option(option, "GPU " + std::to_string(*index) + " is listed twice");
    }
    out.push_back(*index);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  // The whole list is well-formed; now, does this machine have each GPU?
  for (int index : out) {
    if (!std::binary_search(sorted_available.begin(), sorted_available.end(), index)) {
      throw InputError::option(option,
                               "GPU " + std::to_string(index) + " does not exist; " + machine);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> gpu_pair_values(const std::vector<int>& gpus) {
  const std::vector<int> sorted = sorted_unique(gpus);
  std::vector<std::string> out;
  for (int s : sorted) {
    for (int d : sorted) {
      if (s != d) out.push_back(std::to_string(s) + "-" + std::to_string(d));
    }
  }
  return out;
}

std::optional<std::pair<int, int>> parse_gpu_pair(std::string_view text) {
  const std::size_t dash = text.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const auto s = parse_index(text.substr(0, dash));
  const auto d = parse_index(text.substr(dash + 1));
  if (!s || !d || *s == *d) return std::nullopt;
  return std::make_pair(*s, *d);
}

}  // namespace pathbench
