#include "inventory/cpulist.hpp"
#include "core/text.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace pathbench {
namespace {

// Far above any real NR_CPUS / MAX_NUMNODES; stops "0-4000000000" from allocating gigabytes.
constexpr int kMaxId = 1 << 20;

[[noreturn]] void reject(std::string_view kind, std::string_view text, std::string_view why) {
  throw std::invalid_argument("invalid " + std::string(kind) + " \"" + std::string(text) +
                              "\": " + std::string(why));
}

int parse_id(std::string_view number, std::string_view whole) {
  int value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec == std::errc::invalid_argument || end != number.data() + number.size() ||
      value < 0) {
    reject("CPU list", whole, concat("\"", number, "\" is not a non-negative integer"));
  }
  if (ec == std::errc::result_out_of_range || value > kMaxId) {
    reject("CPU list", whole, "\"" + std::string(number) + "\" is out of range");
  }
  return value;
}

}  // namespace

std::vector<int> parse_cpu_list(std::string_view text) {
  const std::string_view whole = text;
  text = trim(text);
  std::vector<int> ids;
  if (text.empty()) return ids;
  // Inclusive [first, last] spans, merged before they are expanded: expanding each element as
  // it came made "0-1048576,0-1048576,..." (a few KiB of text) cost gigabytes and minutes.
  std::vector<std::pair<int, int>> spans;
  std::size_t strided_spans = 0;
  while (true) {
    auto comma = text.find(',');
    std::string_view item = trim(text.substr(0, comma));
    if (item.empty()) reject("CPU list", whole, "empty element");

    // Kernel grammar: N | N-M | N-M:used/group
    int used = 1, group = 1;
    if (auto colon = item.find(':'); colon != std::string_view::npos) {
      std::string_view stride = item.substr(colon + 1);
      auto slash = stride.find('/');
      if (slash == std::string_view::npos) reject("CPU list", whole, "stride needs used/group");
      used = parse_id(stride.substr(0, slash), whole);
      group = parse_id(stride.substr(slash + 1), whole);
      if (used == 0 || group == 0 || used > group) {
        reject("CPU list", whole, "stride must satisfy 0 < used <= group");
      }
      item = item.substr(0, colon);
      if (item.find('-') == std::string_view::npos) {
        reject("CPU list", whole, "a stride needs a range");
      }
    }
    int first = 0, last = 0;
    if (auto dash = item.find('-'); dash != std::string_view::npos) {
      first = parse_id(trim(item.substr(0, dash)), whole);
      last = parse_id(trim(item.substr(dash + 1)), whole);
      if (first > last) reject("CPU list", whole, "range runs backwards");
    } else {
      first = last = parse_id(item, whole);
    }
    if (used == group) {
      spans.emplace_back(first, last);
    } else {
      // "used of every group": one span per group. Bounded in all, since no merge can help.
      for (int start = first; start <= last; start += group) {
        if (++strided_spans > static_cast<std::size_t>(kMaxId)) {
          reject("CPU list", whole, "strided ranges list too many groups");
        }
        spans.emplace_back(start, std::min(last, start + used - 1));
      }
    }
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  std::sort(spans.begin(), spans.end());
  int next = 0;  // the lowest id not yet in `ids`: overlaps are skipped, so each id is added once
  for (const auto& [first, last] : spans) {
    for (int id = std::max(first, next); id <= last; ++id) ids.push_back(id);
    next = std::max(next, last + 1);
  }
  return ids;
}

std::vector<int> parse_cpu_mask(std::string_view text) {
  const std::string_view whole = text;
  text = trim(text);
  std::vector<int> ids;
  if (text.empty()) return ids;

  std::vector<std::string_view> words;
  while (true) {
    auto comma = text.find(',');
    words.push_back(trim(text.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  if (words.size() > static_cast<std::size_t>(kMaxId / 32)) {
    reject("CPU mask", whole, "too many words");
  }
  // The last word holds bits 0-31.
  for (std::size_t w = 0; w < words.size(); ++w) {
    std::string_view word = words[words.size() - 1 - w];
    if (word.empty() || word.size() > 8) {
      reject("CPU mask", whole, "each comma-separated word must have 1 to 8 hex digits");
    }
    std::uint32_t bits = 0;
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), bits, 16);
    if (ec != std::errc{} || end != word.data() + word.size()) {
      reject("CPU mask", whole, concat("\"", word, "\" is not hexadecimal"));
    }
    for (int bit = 0; bit < 32; ++bit) {
      if (bits & (std::uint32_t{1} << bit)) ids.push_back(static_cast<int>(w) * 32 + bit);
    }
  }
  return ids;  // already ascending: words from least significant, bits from 0
}

std::string format_cpu_list(std::vector<int> cpus) {
  cpus = sorted_unique(std::move(cpus));
  if (!cpus.empty() && cpus.front() < 0) {
    throw std::invalid_argument("format_cpu_list: negative id " + std::to_string(cpus.front()));
  }
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> sorted_unique(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace pathbench
