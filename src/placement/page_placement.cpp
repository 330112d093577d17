#include "placement/page_placement.hpp"

#include <numaif.h>

#include <cerrno>
#include <vector>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace pathbench {

namespace {
constexpr std::uintptr_t kPage = 4096;
}  // namespace

double PagePlacement::fraction_on(int node) const {
  if (pages_sampled == 0) return 0.0;
  const auto it = pages_per_node.find(node);
  if (it == pages_per_node.end()) return 0.0;
  return static_cast<double>(it->second) / static_cast<double>(pages_sampled);
}

std::string PagePlacement::describe() const {
  if (pages_sampled == 0) return "no pages sampled";
  const std::string of = concat("/", std::to_string(pages_sampled));
  std::string text;
  const auto append = [&](const std::string& part) {
    if (!text.empty()) text += ", ";
    text += part;
  };
  for (const auto& [node, pages] : pages_per_node) {
    append(std::to_string(pages) + of + " pages on node " + std::to_string(node));
  }
  if (pages_not_present > 0) {
    append(std::to_string(pages_not_present) + of + " pages not present");
  }
  if (pages_error > 0) append(std::to_string(pages_error) + of + " pages with errors");
  return text;
}

PagePlacement placement_from_status(const int* status, std::size_t count) {
  PagePlacement placement;
  placement.pages_sampled = count;
  for (std::size_t i = 0; i < count; ++i) {
    if (status[i] >= 0) {
      ++placement.pages_per_node[status[i]];
    } else if (status[i] == -ENOENT) {
      ++placement.pages_not_present;
    } else {
      // -EFAULT also covers pages only read so far (backed by the shared zero page).
      ++placement.pages_error;
    }
  }
  return placement;
}

PagePlacement query_page_placement(const void* addr, std::size_t bytes, std::size_t max_samples) {
  if (bytes == 0 || max_samples == 0) return {};
  const auto begin = reinterpret_cast<std::uintptr_t>(addr) & ~(kPage - 1);
  const auto last = (reinterpret_cast<std::uintptr_t>(addr) + bytes - 1) & ~(kPage - 1);
  const std::uint64_t pages = (last - begin) / kPage + 1;
  const std::uint64_t samples = pages < max_samples ? pages : max_samples;

  std::vector<void*> addresses(samples);
  for (std::uint64_t i = 0; i < samples; ++i) {
    // 128-bit product: i * pages overflows 64 bits only for absurd sizes, but costs nothing.
    const auto index =
        static_cast<std::uint64_t>(static_cast<unsigned __int128>(i) * pages / samples);
    addresses[i] = reinterpret_cast<void*>(begin + index * kPage);
  }
  std::vector<int> status(samples, 0);
  // nodes == nullptr: query only, nothing moves.
  if (::move_pages(0, static_cast<unsigned long>(samples), addresses.data(), nullptr, status.data(),
                   0) < 0) {
    throw SystemError("move_pages(query, " + std::to_string(samples) + " pages)", errno);
  }
  return placement_from_status(status.data(), status.size());
}

}  // namespace pathbench
