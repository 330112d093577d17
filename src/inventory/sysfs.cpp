#include "inventory/sysfs.hpp"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "core/text.hpp"
#include "inventory/cpulist.hpp"
#include "inventory/nvidia_smi.hpp"

namespace pathbench {
namespace {

// Calls fn(key, value) for every "key: value" line (also "key\t: value" as in /proc/cpuinfo).
template <typename Fn>
void for_each_key_value(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (!fn(trim(line.substr(0, colon)), trim(line.substr(colon + 1)))) return;
  }
}

// "16318284 kB" -> bytes; "512" -> 512.
std::uint64_t parse_meminfo_value(std::string_view key, std::string_view value) {
  std::uint64_t number = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  std::string_view unit = trim(value.substr(static_cast<std::size_t>(end - value.data())));
  if (value.empty() || ec != std::errc{} || !(unit.empty() || unit == "kB")) {
    throw std::invalid_argument("meminfo: value of " + std::string(key) + " \"" +
                                std::string(value) + "\" is not \"<number> [kB]\"");
  }
  return unit == "kB" ? number * 1024 : number;
}

std::string read_trimmed(const std::filesystem::path& path) {
  auto text = read_file_if_present(path);
  return text ? std::string(trim(*text)) : std::string();
}

std::filesystem::path under(const std::filesystem::path& root, std::string_view relative) {
  return root / std::filesystem::path(relative);
}

// aarch64 /proc/cpuinfo has no model name, only implementer/part codes; these are the parts
// found in GPU servers (Grace is Neoverse-V2).
std::string arm_model(std::string_view implementer, std::string_view part) {
  if (implementer == "0x41") {
    static constexpr std::pair<std::string_view, std::string_view> kArmParts[] = {
        {"0xd0c", "Neoverse-N1"}, {"0xd40", "Neoverse-V1"}, {"0xd49", "Neoverse-N2"},
        {"0xd4f", "Neoverse-V2"}, {"0xd84", "Neoverse-V3"}, {"0xd8e", "Neoverse-N3"}};
    for (auto [code, name] : kArmParts) {
      if (part == code) return "ARM " + std::string(name);
    }
  }
  return "ARM implementer " + std::string(implementer) + " part " + std::string(part);
}

}  // namespace

MemInfo parse_meminfo(std::string_view text) {
  MemInfo info;
  for_each_key_value(text, [&](std::string_view key, std::string_view value) {
    if (key == "MemTotal") {
      info.mem_total_bytes = parse_meminfo_value(key, value);
    } else if (key == "MemAvailable") {
      info.mem_available_bytes = parse_meminfo_value(key, value);
    } else if (key == "MemFree") {
      info.mem_free_bytes = parse_meminfo_value(key, value);
    } else if (key == "Cached") {
      info.cached_bytes = parse_meminfo_value(key, value);
    } else if (key == "HugePages_Total") {
      info.hugepages_total = parse_meminfo_value(key, value);
    } else if (key == "HugePages_Free") {
      info.hugepages_free = parse_meminfo_value(key, value);
    } else if (key == "Hugepagesize") {
      info.hugepage_bytes = parse_meminfo_value(key, value);
    }
    return true;
  });
  return info;
}

std::string parse_bracketed_choice(std::string_view text) {
  auto open = text.find('[');
  if (open == std::string_view::npos) return {};
  auto close = text.find(']', open);
  if (close == std::string_view::npos) return {};
  return std::string(trim(text.substr(open + 1, close - open - 1)));
}

ProcStatus parse_proc_status(std::string_view text) {
  ProcStatus status;
  for_each_key_value(text, [&](std::string_view key, std::string_view value) {
    if (key == "Cpus_allowed_list") {
      status.cpus_allowed = parse_cpu_list(value);
    } else if (key == "Mems_allowed_list") {
      status.mems_allowed = parse_cpu_list(value);
    }
    return true;
  });
  return status;
}

std::string parse_cpu_model(std::string_view cpuinfo) {
  // First match wins in this order of preference; all CPUs of a node share the model.
  static constexpr std::string_view kKeys[] = {"model name", "cpu model", "Processor", "cpu",
                                               "Hardware"};
  std::string best;
  std::size_t best_rank = std::size(kKeys);
  std::string implementer, part;
  for_each_key_value(cpuinfo, [&](std::string_view key, std::string_view value) {
    for (std::size_t rank = 0; rank < best_rank; ++rank) {
      if (key == kKeys[rank] && !value.empty()) {
        best = std::string(value);
        best_rank = rank;
        break;
      }
    }
    if (key == "CPU implementer" && implementer.empty()) implementer = value;
    if (key == "CPU part" && part.empty()) part = value;
    return best_rank != 0;
  });
  if (!best.empty()) return best;
  if (!implementer.empty() && !part.empty()) return arm_model(implementer, part);
  return {};
}

std::optional<long long> parse_int(std::string_view text) {
  text = trim(text);
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::string> read_file_if_present(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return text;
}

MemInfo read_meminfo(const std::filesystem::path& root) {
  auto text = read_file_if_present(under(root, "proc/meminfo"));
  return text ? parse_meminfo(*text) : MemInfo{};
}

std::string read_thp_enabled(const std::filesystem::path& root) {
  auto text = read_file_if_present(under(root, "sys/kernel/mm/transparent_hugepage/enabled"));
  return text ? parse_bracketed_choice(*text) : std::string();
}

std::string read_thp_defrag(const std::filesystem::path& root) {
  auto text = read_file_if_present(under(root, "sys/kernel/mm/transparent_hugepage/defrag"));
  return text ? parse_bracketed_choice(*text) : std::string();
}

std::optional<int> read_numa_balancing(const std::filesystem::path& root) {
  auto text = read_file_if_present(under(root, "proc/sys/kernel/numa_balancing"));
  if (!text) return std::nullopt;
  auto value = parse_int(*text);
  if (!value || *value < std::numeric_limits<int>::min() ||
      *value > std::numeric_limits<int>::max()) {
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

VmSettings read_vm_settings(const std::filesystem::path& root) {
  const auto integer = [&](std::string_view relative) -> std::optional<std::int64_t> {
    auto text = read_file_if_present(under(root, relative));
    return text ? parse_int(*text) : std::nullopt;
  };
  VmSettings s;
  s.khugepaged_defrag = integer("sys/kernel/mm/transparent_hugepage/khugepaged/defrag");
  s.khugepaged_pages_to_scan =
      integer("sys/kernel/mm/transparent_hugepage/khugepaged/pages_to_scan");
  s.khugepaged_scan_sleep_millisecs =
      integer("sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs");
  s.khugepaged_max_ptes_none =
      integer("sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none");
  s.compaction_proactiveness = integer("proc/sys/vm/compaction_proactiveness");
  s.extfrag_threshold = integer("proc/sys/vm/extfrag_threshold");
  return s;
}

ProcStatus read_proc_self_status(const std::filesystem::path& root) {
  auto text = read_file_if_present(under(root, "proc/self/status"));
  return text ? parse_proc_status(*text) : ProcStatus{};
}

std::string read_cpu_model(const std::filesystem::path& root) {
  auto text = read_file_if_present(under(root, "proc/cpuinfo"));
  return text ? parse_cpu_model(*text) : std::string();
}

DmiBios read_dmi_bios(const std::filesystem::path& root) {
  return DmiBios{read_trimmed(under(root, "sys/class/dmi/id/bios_vendor")),
                 read_trimmed(under(root, "sys/class/dmi/id/bios_version")),
                 read_trimmed(under(root, "sys/class/dmi/id/bios_date"))};
}

std::vector<int> read_online_cpus(const std::filesystem::path& root) {
  auto text = read_file_if_present(under(root, "sys/devices/system/cpu/online"));
  if (!text) return {};
  try {
    return parse_cpu_list(*text);
  } catch (const std::invalid_argument&) {
    return {};
  }
}

std::vector<SysfsNumaNode> read_sysfs_numa_nodes(const std::filesystem::path& root) {
  std::vector<SysfsNumaNode> nodes;
  const auto dir = under(root, "sys/devices/system/node");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) != 0) continue;
    auto id = parse_int(std::string_view(name).substr(4));
    if (!id || *id < 0 || *id > INT_MAX) continue;
    SysfsNumaNode node;
    node.id = static_cast<int>(*id);
    try {
      node.cpus = parse_cpu_list(read_trimmed(entry.path() / "cpulist"));
    } catch (const std::invalid_argument&) {
      node.cpus.clear();
    }
    if (auto meminfo = read_file_if_present(entry.path() / "meminfo")) {
      // Lines read "Node 0 MemTotal:       131072 kB".
      for_each_key_value(*meminfo, [&](std::string_view key, std::string_view value) {
        if (key.size() >= 8 && key.substr(key.size() - 8) == "MemTotal") {
          try {
            node.memory_bytes = parse_meminfo_value(key, value);
          } catch (const std::invalid_argument&) {
            node.memory_bytes = 0;
          }
          return false;
        }
        return true;
      });
    }
    nodes.push_back(std::move(node));
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const SysfsNumaNode& a, const SysfsNumaNode& b) { return a.id < b.id; });
  return nodes;
}

std::optional<int> read_pci_numa_node(std::string_view bus_id, const std::filesystem::path& root) {
  std::string canonical;
  try {
    canonical = normalize_pci_bus_id(bus_id);  // also keeps the path inside sys/bus/pci
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  auto text = read_file_if_present(under(root, "sys/bus/pci/devices") / canonical / "numa_node");
  if (!text) return std::nullopt;
  auto value = parse_int(*text);
  if (!value || *value < 0 || *value > INT_MAX) return std::nullopt;
  return static_cast<int>(*value);
}

std::vector<int> read_pci_local_cpus(std::string_view bus_id, const std::filesystem::path& root) {
  std::string canonical;
  try {
    canonical = normalize_pci_bus_id(bus_id);
  } catch (const std::invalid_argument&) {
    return {};
  }
  const auto dir = under(root, "sys/bus/pci/devices") / canonical;
  try {
    if (auto list = read_file_if_present(dir / "local_cpulist")) return parse_cpu_list(*list);
    if (auto mask = read_file_if_present(dir / "local_cpus")) return parse_cpu_mask(*mask);
  } catch (const std::invalid_argument&) {
  }
  return {};
}

std::string kernel_description() {
  utsname names{};
  if (::uname(&names) != 0) return {};
  return std::string(names.sysname) + " " + names.release + " " + names.machine;
}

std::string host_name() {
  char buffer[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buffer, sizeof buffer - 1) == 0) return buffer;
  utsname names{};
  if (::uname(&names) == 0) return names.nodename;
  return {};
}

std::uint64_t memlock_limit_bytes() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_MEMLOCK, &limit) != 0) return 0;
  if (limit.rlim_cur == RLIM_INFINITY) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(limit.rlim_cur);
}

}  // namespace pathbench
