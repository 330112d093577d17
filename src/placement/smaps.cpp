#include "placement/smaps.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace pathbench {

namespace {

bool parse_hex(std::string_view s, std::uintptr_t& out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc{} && ptr == s.data() + s.size();
}

// "55b9fdffe000-55b9fe000000 r--p ..." -> the range; anything else is not a mapping header.
bool parse_header(std::string_view line, SmapsEntry& entry) {
  const auto space = line.find(' ');
  const std::string_view range = line.substr(0, space);
  const auto dash = range.find('-');
  if (dash == std::string_view::npos) return false;
  std::uintptr_t start = 0, end = 0;
  if (!parse_hex(range.substr(0, dash), start) || !parse_hex(range.substr(dash + 1), end)) {
    return false;
  }
  entry = SmapsEntry{};
  entry.start = start;
  entry.end = end;
  return true;
}

// "   8 kB" -> 8. A field pathbench relies on that does not parse means the kernel's format
// changed; a silent 0 would turn into a misleading "not huge" verdict.
std::uint64_t parse_kb(std::string_view key, std::string_view value, std::size_t line_no) {
  value = trim(value);
  std::uint64_t kb = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), kb);
  const std::string_view rest = trim(std::string_view(ptr, value.data() + value.size() - ptr));
  if (ec != std::errc{} || (!rest.empty() && rest != "kB")) {
    throw std::runtime_error("smaps line " + std::to_string(line_no) + ": cannot read " +
                             std::string(key) + " value '" + std::string(value) + "'");
  }
  return kb;
}

bool is_hugetlb(const SmapsEntry& e) {
  // VmFlags "ht" marks a hugetlb VMA even before any page is faulted in.
  std::istringstream flags(e.vm_flags);
  std::string flag;
  while (flags >> flag) {
    if (flag == "ht") return true;
  }
  return e.private_hugetlb_kb + e.shared_hugetlb_kb > 0;
}

}  // namespace

std::vector<SmapsEntry> parse_smaps(std::string_view text) {
  std::vector<SmapsEntry> entries;
  SmapsEntry current;
  bool in_entry = false;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    ++line_no;
    if (line.empty()) continue;

    const auto colon = line.find(':');
    const auto space = line.find(' ');
    // A key line's first token ends with ':'; a header's first token is "start-end".
    const bool key_line =
        colon != std::string_view::npos && (space == std::string_view::npos || colon < space);
    if (!key_line) {
      SmapsEntry next;
      if (parse_header(line, next)) {
        if (in_entry) entries.push_back(std::move(current));
        current = std::move(next);
        in_entry = true;
      }
      continue;
    }
    if (!in_entry) continue;
    const std::string_view key = line.substr(0, colon);
    const std::string_view value = line.substr(colon + 1);
    if (key == "Rss") {
      current.rss_kb = parse_kb(key, value, line_no);
    } else if (key == "AnonHugePages") {
      current.anon_huge_kb = parse_kb(key, value, line_no);
    } else if (key == "Private_Hugetlb") {
      current.private_hugetlb_kb = parse_kb(key, value, line_no);
    } else if (key == "Shared_Hugetlb") {
      current.shared_hugetlb_kb = parse_kb(key, value, line_no);
    } else if (key == "KernelPageSize") {
      current.kernel_page_kb = parse_kb(key, value, line_no);
    } else if (key == "Locked") {
      current.locked_kb = parse_kb(key, value, line_no);
    } else if (key == "VmFlags") {
      current.vm_flags = std::string(trim(value));
    }
  }
  if (in_entry) entries.push_back(std::move(current));
  return entries;
}

std::string HugeBacking::describe() const {
  char text[200];
  std::snprintf(text, sizeof text,
                "%s: %llu of %llu kB resident huge (%.1f %%), KernelPageSize %llu kB",
                hugetlb ? "hugetlb" : "AnonHugePages", static_cast<unsigned long long>(huge_kb),
                static_cast<unsigned long long>(resident_kb), 100.0 * fraction(),
                static_cast<unsigned long long>(kernel_page_kb));
  return text;
}

std::optional<HugeBacking> huge_backing_in(const std::vector<SmapsEntry>& entries,
                                           std::uintptr_t addr, std::uint64_t bytes) {
  const std::uintptr_t end = addr + bytes;
  std::optional<HugeBacking> backing;
  for (const auto& e : entries) {
    if (e.end <= addr || e.start >= end) continue;
    if (!backing) backing.emplace();
    if (e.kernel_page_kb > backing->kernel_page_kb) backing->kernel_page_kb = e.kernel_page_kb;
    if (is_hugetlb(e)) {
      // Rss does not count hugetlb pages: what is resident there is the hugetlb total.
      const std::uint64_t kb = e.private_hugetlb_kb + e.shared_hugetlb_kb;
      backing->hugetlb = true;
      backing->resident_kb += kb;
      if (e.kernel_page_kb >= 2048) backing->huge_kb += kb;
    } else {
      backing->resident_kb += e.rss_kb;
      backing->huge_kb += e.anon_huge_kb;
    }
  }
  return backing;
}

namespace {

std::vector<SmapsEntry> read_own_smaps() {
  std::ifstream in("/proc/self/smaps");
  if (!in) throw SystemError("open /proc/self/smaps", errno);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_smaps(text.str());
}

}  // namespace

std::optional<HugeBacking> query_huge_backing(const void* addr, std::uint64_t bytes) {
  return huge_backing_in(read_own_smaps(), reinterpret_cast<std::uintptr_t>(addr), bytes);
}

std::string LockState::describe() const {
  return std::to_string(flagged) + " of " + std::to_string(entries) +
         " smaps entries of the buffer have VM_LOCKED ('lo'); Locked " + std::to_string(locked_kb) +
         " kB";
}

LockState lock_state_in(const std::vector<SmapsEntry>& entries, std::uintptr_t addr,
                        std::uint64_t bytes) {
  LockState state;
  for (const auto& e : entries) {
    if (e.end <= addr || e.start >= addr + bytes) continue;
    ++state.entries;
    state.locked_kb += e.locked_kb;
    std::istringstream flags(e.vm_flags);
    std::string flag;
    while (flags >> flag) {
      if (flag == "lo") {
        ++state.flagged;
        break;
      }
    }
  }
  return state;
}

LockState query_lock_state(const void* addr, std::uint64_t bytes) {
  return lock_state_in(read_own_smaps(), reinterpret_cast<std::uintptr_t>(addr), bytes);
}

}  // namespace pathbench
