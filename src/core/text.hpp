#pragma once

#include <string_view>

namespace pathbench {

// `text` without leading and trailing blanks (space, tab, CR, LF).
inline std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

}  // namespace pathbench
