#include "inventory/buddyinfo.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include "core/text.hpp"
#include "inventory/sysfs.hpp"

namespace pathbench {
namespace {

constexpr unsigned kDefaultThpOrder = 9;

// The next blank-separated word of `text`, consumed; empty at the end.
std::string_view next_word(std::string_view& text) {
  const auto start = text.find_first_not_of(" \t\r");
  if (start == std::string_view::npos) {
    text = {};
    return {};
  }
  text.remove_prefix(start);
  const auto end = std::min(text.find_first_of(" \t\r"), text.size());
  const std::string_view word = text.substr(0, end);
  text.remove_prefix(end);
  return word;
}

template <typename T>
bool whole_number(std::string_view word, T& out) {
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), out);
  return !word.empty() && ec == std::errc{} && end == word.data() + word.size();
}

[[noreturn]] void malformed(std::string_view line, const char* what) {
  throw std::invalid_argument(concat("buddyinfo: ", what, " in line \"", trim(line), "\""));
}

}  // namespace

std::vector<NodeFreeMemory> parse_buddyinfo(std::string_view text, std::uint64_t page_bytes,
                                            unsigned thp_order) {
  std::map<int, NodeFreeMemory> nodes;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    if (trim(line).empty()) continue;

    std::string_view rest = line;
    const std::string_view node_label = next_word(rest);
    const std::string_view node_word = next_word(rest);  // "0,"
    int node = 0;
    if (node_label != "Node" || !node_word.ends_with(',') ||
        !whole_number(node_word.substr(0, node_word.size() - 1), node) || node < 0) {
      malformed(line, "expected \"Node <n>,\"");
    }
    if (next_word(rest) != "zone" || next_word(rest).empty()) malformed(line, "expected a zone");

    NodeFreeMemory& sum = nodes[node];
    sum.node = node;
    unsigned order = 0;
    for (std::string_view word = next_word(rest); !word.empty(); word = next_word(rest), ++order) {
      std::uint64_t blocks = 0;
      if (!whole_number(word, blocks)) malformed(line, "a free-block count is not a number");
      // Orders stop at about 10 (MAX_PAGE_ORDER); more than 63 is no buddyinfo.
      if (order >= 64 || page_bytes > (std::numeric_limits<std::uint64_t>::max() >> order)) {
        malformed(line, "too many orders");
      }
      const std::uint64_t bytes = blocks * (page_bytes << order);
      sum.free_bytes += bytes;
      if (order >= thp_order) sum.free_thp_block_bytes += bytes;
    }
  }
  std::vector<NodeFreeMemory> out;
  out.reserve(nodes.size());
  for (const auto& [id, node] : nodes) out.push_back(node);
  return out;
}

unsigned read_thp_order(std::uint64_t page_bytes, const std::filesystem::path& root) {
  const auto text =
      read_file_if_present(root / "sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  const auto thp_bytes = text ? parse_int(*text) : std::nullopt;
  if (!thp_bytes || *thp_bytes <= 0 || page_bytes == 0) return kDefaultThpOrder;
  const auto pages = static_cast<std::uint64_t>(*thp_bytes) / page_bytes;
  if (!std::has_single_bit(pages)) return kDefaultThpOrder;
  return static_cast<unsigned>(std::countr_zero(pages));
}

std::vector<NodeFreeMemory> read_free_memory(const std::filesystem::path& root) {
  const auto text = read_file_if_present(root / "proc/buddyinfo");
  if (!text) return {};
  const auto page_bytes = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return parse_buddyinfo(*text, page_bytes, read_thp_order(page_bytes, root));
}

}  // namespace pathbench
