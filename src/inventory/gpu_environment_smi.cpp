#include "inventory/gpu_environment_smi.hpp"
#include "core/text.hpp"

#include <charconv>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "inventory/nvidia_smi.hpp"

namespace pathbench {
namespace {

// A located line: what to quote when rejecting one of its fields.
struct Line {
  std::string_view what;  // "nvidia-smi --query-gpu", for messages
  std::size_t number = 0;
  std::string_view text;

  [[noreturn]] void reject(const std::string& why) const {
    throw std::invalid_argument(std::string(what) + " output line " + std::to_string(number) +
                                ": " + why + " in \"" + std::string(text) + "\"");
  }
};

// Calls fn(line, fields) for every non-blank line, fields split at commas and trimmed.
template <typename Fn>
void for_each_row(std::string_view text, std::string_view what, Fn&& fn) {
  std::size_t number = 0;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view raw = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++number;
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    std::vector<std::string_view> fields;
    std::string_view rest = line;
    while (true) {
      const auto comma = rest.find(',');
      fields.push_back(trim(rest.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    fn(Line{what, number, line}, fields);
  }
}

template <typename T>
std::optional<T> number(const Line& line, std::string_view name, std::string_view field,
                        int base = 10) {
  if (nvidia_smi_value_missing(field)) return std::nullopt;
  T value{};
  std::from_chars_result parsed{};
  if constexpr (std::is_floating_point_v<T>) {
    parsed = std::from_chars(field.data(), field.data() + field.size(), value);
  } else {
    parsed = std::from_chars(field.data(), field.data() + field.size(), value, base);
  }
  if (parsed.ec != std::errc{} || parsed.ptr != field.data() + field.size()) {
    line.reject(std::string(name) + " \"" + std::string(field) + "\" is not a number");
  }
  return value;
}

std::string bus_id(const Line& line, std::string_view field) {
  if (nvidia_smi_value_missing(field)) return {};
  try {
    return normalize_pci_bus_id(field);
  } catch (const std::invalid_argument& e) {
    line.reject(e.what());
  }
}

void expect_fields(const Line& line, const std::vector<std::string_view>& fields,
                   std::size_t expected) {
  if (fields.size() != expected) {
    line.reject("expected " + std::to_string(expected) + " comma-separated fields, got " +
                std::to_string(fields.size()));
  }
}

}  // namespace

const std::vector<std::string>& nvidia_smi_state_argv(bool legacy) {
  static const std::string kCommon =
      "--query-gpu=index,pci.bus_id,clocks.sm,clocks.mem,temperature.gpu,power.draw,"
      "enforced.power.limit,";
  static const std::vector<std::string> current = {
      "nvidia-smi", kCommon + "clocks_event_reasons.active", "--format=csv,noheader,nounits"};
  static const std::vector<std::string> old = {
      "nvidia-smi", kCommon + "clocks_throttle_reasons.active", "--format=csv,noheader,nounits"};
  return legacy ? old : current;
}

const std::vector<std::string>& nvidia_smi_compute_apps_argv() {
  static const std::vector<std::string> argv = {
      "nvidia-smi", "--query-compute-apps=gpu_bus_id,pid,process_name,used_memory",
      "--format=csv,noheader,nounits"};
  return argv;
}

std::vector<SmiGpuState> parse_nvidia_smi_state(std::string_view text) {
  std::vector<SmiGpuState> rows;
  for_each_row(text, "nvidia-smi --query-gpu", [&](const Line& line, const auto& fields) {
    expect_fields(line, fields, 8);
    SmiGpuState row;
    const auto index = number<int>(line, "index", fields[0]);
    if (!index) line.reject("index is missing");
    row.index = *index;
    row.pci_bus_id = bus_id(line, fields[1]);
    row.clock_sm_mhz = number<int>(line, "clocks.sm", fields[2]);
    row.clock_mem_mhz = number<int>(line, "clocks.mem", fields[3]);
    row.temperature_c = number<int>(line, "temperature.gpu", fields[4]);
    row.power_w = number<double>(line, "power.draw", fields[5]);
    row.power_limit_w = number<double>(line, "enforced.power.limit", fields[6]);
    // A bit mask printed as "0x0000000000000001".
    std::string_view mask = fields[7];
    if (!nvidia_smi_value_missing(mask)) {
      if (mask.substr(0, 2) != "0x" && mask.substr(0, 2) != "0X") {
        line.reject("clocks_event_reasons.active \"" + std::string(mask) +
                    "\" is not a hexadecimal mask");
      }
      row.clock_event_reasons_mask =
          number<std::uint64_t>(line, "clocks_event_reasons.active", mask.substr(2), 16);
    }
    rows.push_back(std::move(row));
  });
  return rows;
}

std::vector<SmiComputeApp> parse_nvidia_smi_compute_apps(std::string_view text) {
  std::vector<SmiComputeApp> apps;
  for_each_row(text, "nvidia-smi --query-compute-apps", [&](const Line& line, const auto& fields) {
    if (fields.size() < 4) {
      line.reject("expected 4 comma-separated fields, got " + std::to_string(fields.size()));
    }
    SmiComputeApp app;
    app.pci_bus_id = bus_id(line, fields[0]);
    const auto pid = number<unsigned>(line, "pid", fields[1]);
    if (!pid) line.reject("pid is missing");
    app.pid = *pid;
    // The name is the raw text between the second and the last comma, commas and all.
    const std::string_view raw = line.text;
    const auto after_pid = raw.find(',', raw.find(',') + 1) + 1;
    const auto last_comma = raw.rfind(',');
    const std::string_view name = trim(raw.substr(after_pid, last_comma - after_pid));
    app.name = nvidia_smi_value_missing(name) ? std::string() : std::string(name);
    if (auto mib = number<std::uint64_t>(line, "used_memory", fields.back())) {
      app.used_memory_bytes = *mib * (std::uint64_t{1} << 20);
    }
    apps.push_back(std::move(app));
  });
  return apps;
}

}  // namespace pathbench
