#include "inventory/nvidia_smi.hpp"
#include "core/text.hpp"

#include <array>
#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace pathbench {
namespace {

// Field order of the query; kept next to the argv so the two cannot drift apart unnoticed.
constexpr std::array<std::string_view, 18> kFields = {"index",
                                                      "name",
                                                      "uuid",
                                                      "pci.bus_id",
                                                      "pcie.link.gen.current",
                                                      "pcie.link.gen.max",
                                                      "pcie.link.width.current",
                                                      "pcie.link.width.max",
                                                      "clocks.sm",
                                                      "clocks.mem",
                                                      "clocks.max.sm",
                                                      "clocks.max.mem",
                                                      "memory.total",
                                                      "driver_version",
                                                      "vbios_version",
                                                      "ecc.mode.current",
                                                      "persistence_mode",
                                                      "mig.mode.current"};

std::string query_fields() {
  std::string joined;
  for (auto field : kFields) {
    if (!joined.empty()) joined += ',';
    joined += field;
  }
  return joined;
}

bool not_available(std::string_view field) { return nvidia_smi_value_missing(field); }

[[noreturn]] void reject_line(std::size_t line_number, std::string_view line,
                              const std::string& why) {
  reject_nvidia_smi_line("nvidia-smi", line_number, line, why);
}

template <typename T>
std::optional<T> parse_number(std::string_view field, std::size_t field_index,
                              std::size_t line_number, std::string_view line) {
  if (not_available(field)) return std::nullopt;
  T value{};
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc{} || end != field.data() + field.size()) {
    reject_line(
        line_number, line,
        std::string(kFields[field_index]) + " \"" + std::string(field) + "\" is not a number");
  }
  return value;
}

std::string text_field(std::string_view field) {
  return not_available(field) ? std::string() : std::string(field);
}

// "Enabled"/"Disabled" -> "enabled"/"disabled"; anything else (a not-available marker, a value a
// later driver may add) is no value rather than a guess.
std::optional<std::string> mode_field(std::string_view field) {
  if (field == "Enabled") return "enabled";
  if (field == "Disabled") return "disabled";
  return std::nullopt;
}

std::string canonical_bus_id(const std::string& raw) {
  if (raw.empty()) return {};
  try {
    return normalize_pci_bus_id(raw);
  } catch (const std::invalid_argument&) {
    return {};  // an unparsable id can match nothing; better empty than wrong
  }
}

void apply_smi_row(GpuInventory& gpu, const NvidiaSmiGpu& row, std::string_view source) {
  if (gpu.name.empty()) gpu.name = row.name;
  if (gpu.pci_bus_id.empty()) gpu.pci_bus_id = row.pci_bus_id;
  // CUDA's total memory wins when present: it is what every node with a usable GPU reports, so
  // the fingerprint does not depend on whether nvidia-smi happened to be installed.
  if (gpu.memory_bytes == 0 && row.memory_bytes) gpu.memory_bytes = *row.memory_bytes;
  gpu.uuid = row.uuid;
  gpu.pcie_gen_current = row.pcie_gen_current;
  gpu.pcie_gen_max = row.pcie_gen_max;
  gpu.pcie_width_current = row.pcie_width_current;
  gpu.pcie_width_max = row.pcie_width_max;
  gpu.clock_sm_mhz = row.clock_sm_mhz;
  gpu.clock_mem_mhz = row.clock_mem_mhz;
  gpu.clock_sm_max_mhz = row.clock_sm_max_mhz;
  gpu.clock_mem_max_mhz = row.clock_mem_max_mhz;
  gpu.vbios = row.vbios;
  gpu.ecc_mode = row.ecc_mode;
  gpu.persistence_mode = row.persistence_mode;
  gpu.mig_mode = row.mig_mode;
  gpu.inventory_source = std::string(source);
}

}  // namespace

void reject_nvidia_smi_line(std::string_view command, std::size_t line_number,
                            std::string_view line, const std::string& why) {
  throw std::invalid_argument(std::string(command) + " output line " + std::to_string(line_number) +
                              ": " + why + " in \"" + std::string(line) + "\"");
}

bool nvidia_smi_value_missing(std::string_view field) {
  // nvidia-smi's spellings vary by version and by field ("[N/A]", "N/A", "[Not Supported]",
  // "[Unknown Error]"); any bracketed marker means "no value".
  return field.empty() || field == "N/A" ||
         (field.size() >= 2 && field.front() == '[' && field.back() == ']');
}

const std::vector<std::string>& nvidia_smi_query_argv() {
  static const std::vector<std::string> argv = {"nvidia-smi", "--query-gpu=" + query_fields(),
                                                "--format=csv,noheader,nounits"};
  return argv;
}

std::vector<NvidiaSmiGpu> parse_nvidia_smi_query(std::string_view text) {
  std::vector<NvidiaSmiGpu> rows;
  std::size_t line_number = 0;
  while (!text.empty()) {
    auto newline = text.find('\n');
    std::string_view raw = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++line_number;
    std::string_view line = trim(raw);
    if (line.empty()) continue;

    // No quoting in this format; GPU names contain spaces but not commas, so a field count
    // other than kFields.size() means the output is not what we asked for.
    std::vector<std::string_view> fields;
    std::string_view rest = line;
    while (true) {
      auto comma = rest.find(',');
      fields.push_back(trim(rest.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    if (fields.size() != kFields.size()) {
      reject_line(line_number, line,
                  "expected " + std::to_string(kFields.size()) + " comma-separated fields, got " +
                      std::to_string(fields.size()));
    }

    NvidiaSmiGpu gpu;
    auto index = parse_number<int>(fields[0], 0, line_number, line);
    if (!index) reject_line(line_number, line, "index is missing");
    gpu.index = *index;
    gpu.name = text_field(fields[1]);
    gpu.uuid = text_field(fields[2]);
    if (!not_available(fields[3])) {
      try {
        gpu.pci_bus_id = normalize_pci_bus_id(fields[3]);
      } catch (const std::invalid_argument& e) {
        reject_line(line_number, line, e.what());
      }
    }
    gpu.pcie_gen_current = parse_number<int>(fields[4], 4, line_number, line);
    gpu.pcie_gen_max = parse_number<int>(fields[5], 5, line_number, line);
    gpu.pcie_width_current = parse_number<int>(fields[6], 6, line_number, line);
    gpu.pcie_width_max = parse_number<int>(fields[7], 7, line_number, line);
    gpu.clock_sm_mhz = parse_number<int>(fields[8], 8, line_number, line);
    gpu.clock_mem_mhz = parse_number<int>(fields[9], 9, line_number, line);
    gpu.clock_sm_max_mhz = parse_number<int>(fields[10], 10, line_number, line);
    gpu.clock_mem_max_mhz = parse_number<int>(fields[11], 11, line_number, line);
    if (auto mib = parse_number<std::uint64_t>(fields[12], 12, line_number, line)) {
      gpu.memory_bytes = *mib * (std::uint64_t{1} << 20);
    }
    gpu.driver_version = text_field(fields[13]);
    gpu.vbios = text_field(fields[14]);
    gpu.ecc_mode = mode_field(fields[15]);
    gpu.persistence_mode = mode_field(fields[16]);
    gpu.mig_mode = mode_field(fields[17]);
    rows.push_back(std::move(gpu));
  }
  return rows;
}

std::string normalize_pci_bus_id(std::string_view text) {
  const std::string_view whole = text;
  text = trim(text);
  auto fail = [&](const char* why) -> std::invalid_argument {
    return std::invalid_argument("invalid PCI bus id \"" + std::string(whole) + "\": " + why);
  };
  auto hex = [&](std::string_view digits, std::size_t max_digits, const char* what) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
    if (digits.empty() || digits.size() > max_digits || ec != std::errc{} ||
        end != digits.data() + digits.size()) {
      throw fail(what);
    }
    return value;
  };

  auto dot = text.rfind('.');
  if (dot == std::string_view::npos) throw fail("no '.' before the function number");
  unsigned function = hex(text.substr(dot + 1), 1, "function must be one hex digit");
  if (function > 7) throw fail("function must be 0-7");
  std::string_view head = text.substr(0, dot);
  auto last_colon = head.rfind(':');
  if (last_colon == std::string_view::npos) throw fail("expected [domain:]bus:device.function");
  unsigned device = hex(head.substr(last_colon + 1), 2, "device must be 1-2 hex digits");
  if (device > 0x1f) throw fail("device must be 00-1f");
  head = head.substr(0, last_colon);
  unsigned domain = 0;
  unsigned bus = 0;
  if (auto colon = head.rfind(':'); colon != std::string_view::npos) {
    bus = hex(head.substr(colon + 1), 2, "bus must be 1-2 hex digits");
    domain = hex(head.substr(0, colon), 8, "domain must be 1-8 hex digits");
  } else {
    bus = hex(head, 2, "bus must be 1-2 hex digits");
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buffer;
}

std::vector<GpuInventory> merge_gpu_sources(const std::vector<CudaDeviceInfo>& cuda_devices,
                                            const std::vector<NvidiaSmiGpu>& rows,
                                            std::vector<std::string>& warnings,
                                            std::string_view source) {
  std::vector<GpuInventory> gpus;
  for (const auto& device : cuda_devices) {
    GpuInventory gpu;
    gpu.index = device.index;
    gpu.name = device.name;
    gpu.pci_bus_id = canonical_bus_id(device.pci_bus_id);
    gpu.memory_bytes = device.memory_bytes;
    gpu.inventory_source = "none";
    if (device.compute_major > 0) {
      gpu.compute_capability =
          std::to_string(device.compute_major) + "." + std::to_string(device.compute_minor);
    }
    gpus.push_back(std::move(gpu));
  }
  if (gpus.empty()) {
    // CUDA is unusable (or absent from this build) but the driver sees GPUs: record them, so
    // the context still says what hardware the node has.
    for (const auto& row : rows) {
      GpuInventory gpu;
      gpu.index = row.index;
      apply_smi_row(gpu, row, source);
      gpus.push_back(std::move(gpu));
    }
    return gpus;
  }
  std::vector<bool> used(rows.size(), false);
  for (auto& gpu : gpus) {
    // The bus id is the only reliable key: CUDA indexes follow CUDA_DEVICE_ORDER and
    // CUDA_VISIBLE_DEVICES, nvidia-smi's follow PCI order. The index is a last resort for rows
    // without a bus id.
    std::optional<std::size_t> match;
    for (std::size_t i = 0; i < rows.size() && !match; ++i) {
      if (!used[i] && !gpu.pci_bus_id.empty() && rows[i].pci_bus_id == gpu.pci_bus_id) match = i;
    }
    for (std::size_t i = 0; i < rows.size() && !match; ++i) {
      if (!used[i] && (gpu.pci_bus_id.empty() || rows[i].pci_bus_id.empty()) &&
          rows[i].index == gpu.index) {
        match = i;
      }
    }
    if (match) {
      used[*match] = true;
      apply_smi_row(gpu, rows[*match], source);
    } else if (!rows.empty()) {
      warnings.push_back("the driver (" + std::string(source) + ") has no row for CUDA device " +
                         std::to_string(gpu.index) + " (" + gpu.pci_bus_id +
                         "); its PCIe link, clocks and VBIOS are unknown");
    }
  }
  return gpus;
}

std::size_t apply_nvlink_status(std::vector<GpuInventory>& gpus,
                                const std::vector<NvlinkGpuStatus>& blocks,
                                const std::vector<NvidiaSmiGpu>& rows) {
  std::size_t matched = 0;
  for (const auto& block : blocks) {
    GpuInventory* target = nullptr;
    if (!block.uuid.empty()) {
      for (auto& gpu : gpus) {
        if (gpu.uuid == block.uuid) target = &gpu;
      }
    }
    if (target == nullptr) {
      // nvidia-smi indexes are its own (PCI order); the query rows carry the bus id CUDA's
      // indexes are matched by.
      for (const auto& row : rows) {
        if (row.index != block.index || row.pci_bus_id.empty()) continue;
        if (!block.uuid.empty() && !row.uuid.empty() && row.uuid != block.uuid) continue;
        for (auto& gpu : gpus) {
          if (gpu.pci_bus_id == row.pci_bus_id) target = &gpu;
        }
      }
    }
    if (target == nullptr || target->nvlink) continue;
    GpuNvlink nvlink;
    nvlink.active_links = block.active_links;
    nvlink.link_gb_per_s = block.link_gb_per_s;
    target->nvlink = std::move(nvlink);
    ++matched;
  }
  return matched;
}

}  // namespace pathbench
