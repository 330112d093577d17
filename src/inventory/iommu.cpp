#include "inventory/iommu.hpp"

#include <system_error>

#include "inventory/sysfs.hpp"

namespace pathbench {
namespace {

constexpr std::string_view kSpace = " \t\r\n";

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool is_iommu_token(std::string_view token) {
  return starts_with(token, "iommu=") || starts_with(token, "intel_iommu=") ||
         starts_with(token, "amd_iommu=") || starts_with(token, "iommu.");
}

// Counts directory entries; empty when the directory cannot be listed (absent, or hidden by a
// container), which is "unknown", not "none".
std::optional<int> count_entries(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return std::nullopt;
  int count = 0;
  for (const std::filesystem::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) return std::nullopt;
    ++count;
  }
  if (ec) return std::nullopt;
  return count;
}

}  // namespace

std::string iommu_cmdline_tokens(std::string_view cmdline) {
  std::string joined;
  while (!cmdline.empty()) {
    const auto start = cmdline.find_first_not_of(kSpace);
    if (start == std::string_view::npos) break;
    cmdline = cmdline.substr(start);
    const auto end = cmdline.find_first_of(kSpace);
    const std::string_view token = cmdline.substr(0, end);
    // "--" ends the kernel's own parameters: what follows belongs to init.
    if (token == "--") break;
    if (is_iommu_token(token)) {
      if (!joined.empty()) joined += ' ';
      joined += token;
    }
    cmdline = end == std::string_view::npos ? std::string_view() : cmdline.substr(end);
  }
  return joined;
}

std::string classify_iommu(std::string_view cmdline_tokens, std::optional<int> groups) {
  std::string_view rest = cmdline_tokens;
  while (!rest.empty()) {
    const auto space = rest.find(' ');
    const std::string_view token = rest.substr(0, space);
    // Passthrough keeps the groups (the IOMMU is on for isolation) but DMA is untranslated, which
    // is what matters for copy bandwidth; so it wins over the group count.
    if (token == "iommu=pt" || token == "iommu.passthrough=1") return "passthrough";
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  if (!groups) return "unknown";
  return *groups > 0 ? "on" : "off";
}

IommuState read_iommu(const std::filesystem::path& root) {
  IommuState state;
  if (auto cmdline = read_file_if_present(root / "proc/cmdline")) {
    state.cmdline = iommu_cmdline_tokens(*cmdline);
  }
  const auto groups = count_entries(root / "sys/kernel/iommu_groups");
  state.groups = groups.value_or(0);
  state.mode = classify_iommu(state.cmdline, groups);
  return state;
}

}  // namespace pathbench
