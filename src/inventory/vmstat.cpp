#include "inventory/vmstat.hpp"

#include <charconv>
#include <stdexcept>
#include <string>

#include "core/text.hpp"
#include "inventory/sysfs.hpp"

namespace pathbench {

VmCounters parse_vmstat(std::string_view text) {
  VmCounters counters;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = trim(text.substr(0, newline));
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    const auto space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, space);
    const std::string_view value = trim(line.substr(space + 1));
    vm_counter_fields([&](std::string_view key, VmCounter field) {
      if (key != name) return;
      std::uint64_t number = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (value.empty() || ec != std::errc{} || end != value.data() + value.size()) {
        throw std::invalid_argument(
            concat("vmstat: value of ", name, " \"", value, "\" is not a whole number"));
      }
      counters.*field = number;
    });
  }
  return counters;
}

std::optional<VmCounters> read_vmstat(const std::filesystem::path& root) {
  const auto text = read_file_if_present(root / "proc/vmstat");
  if (!text) return std::nullopt;
  return parse_vmstat(*text);
}

VmCounters vm_counter_difference(const VmCounters& start, const VmCounters& end) {
  VmCounters difference;
  vm_counter_fields([&](std::string_view, VmCounter field) {
    const auto& before = start.*field;
    const auto& after = end.*field;
    if (before && after && *after >= *before) difference.*field = *after - *before;
  });
  return difference;
}

}  // namespace pathbench
