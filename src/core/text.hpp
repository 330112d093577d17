#pragma once

#include <string>
#include <string_view>

namespace pathbench {

// `text` without leading and trailing white space (what isspace accepts in the C locale).
inline std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

// The parts joined into one string, allocated once. Also where `"literal" + std::string&&` would
// do: GCC 12 misreads that operator's insert-at-front as an overlapping memcpy (-Wrestrict,
// GCC bug 105651), and the release build is warning-free.
template <typename... Parts>
std::string concat(const Parts&... parts) {
  const std::string_view views[] = {std::string_view(parts)...};
  std::size_t size = 0;
  for (auto v : views) size += v.size();
  std::string out;
  out.reserve(size);
  for (auto v : views) out += v;
  return out;
}

}  // namespace pathbench
