#include "inventory/pcie_paths.hpp"

#include <algorithm>
#include <cstdint>
#include <regex>
#include <system_error>
#include <tuple>

#include "inventory/sysfs.hpp"

namespace pathbench {

namespace {

namespace fs = std::filesystem;

bool is_function_address(std::string_view part) {
  // "0000:01:00.0": domain:bus:device.function, lower-case hex.
  static const std::regex bdf("^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]$");
  return std::regex_match(part.begin(), part.end(), bdf);
}

std::uint32_t le32(std::string_view bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  return v;
}

std::string hex4(unsigned v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x0000";
  for (int i = 0; i < 4; ++i) s[5 - i] = digits[(v >> (4 * i)) & 0xf];
  return s;
}

// "0x020000\n": the class file's text.
std::optional<long> parse_pci_class(const std::string& text) {
  try {
    std::size_t used = 0;
    const long v = std::stol(text, &used, 16);
    if (text.substr(used).find_first_not_of(" \n") != std::string::npos) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

int closeness(const std::string& relation) {
  if (relation == "same PCIe switch") return 0;
  if (relation == "same root port") return 1;
  return 2;
}

}  // namespace

std::optional<PcieDevicePath> parse_pcie_device_path(std::string_view below_devices) {
  PcieDevicePath path;
  std::size_t start = 0;
  bool first = true;
  while (start < below_devices.size()) {
    const std::size_t end = std::min(below_devices.find('/', start), below_devices.size());
    const std::string_view part = below_devices.substr(start, end - start);
    if (first) {
      if (!part.starts_with("pci")) return std::nullopt;
      path.root_complex = std::string(part);
      first = false;
    } else if (is_function_address(part)) {
      path.chain.emplace_back(part);
    } else {
      break;  // a child that is not a PCI function (a driver's object): the device ends here
    }
    start = end + 1;
  }
  if (path.chain.empty()) return std::nullopt;
  return path;
}

std::optional<PcieDevicePath> read_pcie_device_path(std::string_view bdf, const fs::path& root) {
  std::error_code ec;
  const fs::path link = root / "sys/bus/pci/devices" / std::string(bdf);
  const fs::path resolved = fs::canonical(link, ec);
  if (ec) return std::nullopt;
  const fs::path devices = fs::weakly_canonical(root / "sys/devices", ec);
  if (ec) return std::nullopt;
  const std::string full = resolved.string();
  const std::string prefix = devices.string() + "/";
  if (!full.starts_with(prefix)) return std::nullopt;
  return parse_pcie_device_path(std::string_view(full).substr(prefix.size()));
}

std::optional<std::string> pcie_relation(const PcieDevicePath& a, const PcieDevicePath& b) {
  if (a.root_complex != b.root_complex) return std::nullopt;
  std::size_t common = 0;
  // The last element of each chain is the device itself, never a shared bridge.
  while (common + 1 < a.chain.size() && common + 1 < b.chain.size() &&
         a.chain[common] == b.chain[common]) {
    ++common;
  }
  if (common >= 2) return "same PCIe switch";
  if (common == 1) return "same root port";
  return "same host bridge";
}

std::vector<std::string> pcie_neighbors(const PcieDevicePath& gpu, const fs::path& root) {
  std::vector<std::tuple<int, std::string, std::string>> found;  // closeness, address, text
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root / "sys/bus/pci/devices", ec)) {
    const std::string bdf = entry.path().filename().string();
    if (!gpu.chain.empty() && bdf == gpu.chain.back()) continue;
    const auto cls = read_file_if_present(entry.path() / "class");
    if (!cls) continue;
    const auto value = parse_pci_class(*cls);
    if (!value) continue;
    const char* kind = nullptr;
    if ((*value >> 16) == 0x02) kind = "nic";
    if (*value == 0x010802) kind = "nvme";
    if (kind == nullptr) continue;
    const auto path = read_pcie_device_path(bdf, root);
    if (!path) continue;
    const auto relation = pcie_relation(gpu, *path);
    if (!relation) continue;
    found.emplace_back(closeness(*relation), bdf, std::string(kind) + " " + bdf + ": " + *relation);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [c, bdf, text] : found) out.push_back(std::move(text));
  return out;
}

std::string describe_acs(std::string_view config) {
  if (config.size() <= 256) {
    return "not readable: the kernel shows the extended configuration space (ACS) to root only";
  }
  constexpr std::uint16_t kAcs = 0x000d;
  std::size_t at = 0x100;
  for (int hops = 0; hops < 64 && at >= 0x100 && at + 8 <= config.size(); ++hops) {
    const std::uint32_t header = le32(config, at);
    if (header == 0 || header == 0xffffffffu) break;
    if ((header & 0xffff) == kAcs) {
      const unsigned control = le32(config, at + 4) >> 16;
      const bool rr = (control & 0x4) != 0, cr = (control & 0x8) != 0;
      std::string text = "ACS control " + hex4(control) + ": ";
      if (rr || cr) {
        text += std::string("P2P ") +
                (rr && cr ? "requests and completions"
                 : rr     ? "requests"
                          : "completions") +
                " redirected to the root complex (" + (rr ? "RR" : "") + (rr && cr ? " " : "") +
                (cr ? "CR" : "") + ")";
      } else {
        text += "P2P not redirected";
      }
      return text;
    }
    at = header >> 20;
  }
  return "no ACS capability";
}

std::vector<std::string> pcie_acs_states(const PcieDevicePath& path, const fs::path& root) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 1 < path.chain.size(); ++i) {
    const auto config = read_file_if_present(root / "sys/bus/pci/devices" / path.chain[i] / "config");
    out.push_back(path.chain[i] + ": " +
                  (config ? describe_acs(*config) : std::string("no configuration space file")));
  }
  return out;
}

}  // namespace pathbench
