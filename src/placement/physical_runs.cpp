#include "placement/physical_runs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "core/unique_fd.hpp"

namespace pathbench {
namespace {

constexpr std::uint64_t kPageBytes = 4096;
constexpr std::uint64_t kPresent = std::uint64_t{1} << 63;
constexpr std::uint64_t kFrameMask = (std::uint64_t{1} << 55) - 1;  // bits 0-54

UniqueFd open_pagemap() { return UniqueFd(::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)); }

// The entries of the pages [address, address + bytes) touches, read from the open `pagemap`.
std::optional<std::vector<std::uint64_t>> read_pagemap_entries(int pagemap, const void* address,
                                                               std::uint64_t bytes) {
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  const std::uint64_t first = start / kPageBytes;
  const std::uint64_t end = bytes == 0 ? first : (start + bytes + kPageBytes - 1) / kPageBytes;
  std::vector<std::uint64_t> entries(end - first);
  auto* out = reinterpret_cast<char*>(entries.data());
  const std::uint64_t want = entries.size() * sizeof(std::uint64_t);
  for (std::uint64_t got = 0; got < want;) {
    const ssize_t n = ::pread(pagemap, out + got, want - got,
                              static_cast<off_t>(first * sizeof(std::uint64_t) + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<std::uint64_t>(n);
  }
  return entries;
}

}  // namespace

std::optional<std::uint64_t> count_physical_runs(std::span<const std::uint64_t> entries) {
  std::uint64_t runs = 0, previous = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::uint64_t frame = entries[i] & kFrameMask;
    if ((entries[i] & kPresent) == 0 || frame == 0) return std::nullopt;
    if (i == 0 || frame != previous + 1) ++runs;
    previous = frame;
  }
  return runs;
}

std::optional<std::vector<std::uint64_t>> read_pagemap(const void* address, std::uint64_t bytes) {
  const UniqueFd pagemap = open_pagemap();
  if (!pagemap.valid()) return std::nullopt;
  return read_pagemap_entries(pagemap.get(), address, bytes);
}

std::optional<PhysicalRunsSummary> summarize_physical_runs(
    std::span<const std::span<const std::byte>> ranges) {
  std::vector<std::uint64_t> runs;
  runs.reserve(ranges.size());
  PhysicalRunsSummary s;
  const UniqueFd pagemap = open_pagemap();  // once for every range
  if (!pagemap.valid()) return std::nullopt;
  for (const std::span<const std::byte>& r : ranges) {
    const std::optional<std::vector<std::uint64_t>> entries =
        read_pagemap_entries(pagemap.get(), r.data(), r.size());
    if (!entries) return std::nullopt;
    const std::optional<std::uint64_t> n = count_physical_runs(*entries);
    if (!n) return std::nullopt;
    runs.push_back(*n);
    s.pages_per_range = std::max<std::uint64_t>(s.pages_per_range, entries->size());
  }
  if (runs.empty()) return std::nullopt;
  std::sort(runs.begin(), runs.end());
  s.ranges = runs.size();
  s.min_runs = runs.front();
  s.median_runs = runs[runs.size() / 2];
  s.max_runs = runs.back();
  return s;
}

std::string describe_slot_runs(const std::optional<PhysicalRunsSummary>& runs,
                               std::optional<std::uint64_t> max_segments) {
  if (!runs) {
    return "the slots' physical layout is unknown (/proc/self/pagemap shows frame numbers only "
           "to CAP_SYS_ADMIN)";
  }
  const std::string range =
      runs->min_runs == runs->max_runs
          ? std::to_string(runs->min_runs)
          : std::to_string(runs->min_runs) + "-" + std::to_string(runs->max_runs);
  std::string text = "the slots' pages lay in " + range + (runs->max_runs == 1 ? " run" : " runs") +
                     " of physically contiguous memory per slot (median " +
                     std::to_string(runs->median_runs) + ", of " +
                     std::to_string(runs->pages_per_range) +
                     " pages): an O_DIRECT read gathers one segment per run";
  if (max_segments && runs->max_runs > *max_segments) {
    text += ", more than the disk's max_segments (" + std::to_string(*max_segments) +
            "): a read into such a slot is split into several requests";
  }
  return text;
}

}  // namespace pathbench
