#include "inventory/nvlink.hpp"
#include "core/text.hpp"
#include "inventory/nvidia_smi.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace pathbench {
namespace {

[[noreturn]] void reject_status_line(std::size_t line_number, std::string_view line,
                                     const std::string& why) {
  reject_nvidia_smi_line("nvidia-smi nvlink -s", line_number, line, why);
}

template <typename T>
std::optional<T> parse_whole(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "GPU 3: NVIDIA H200 (UUID: GPU-...)" -> the status block's header fields.
std::optional<NvlinkGpuStatus> parse_header(std::string_view line) {
  constexpr std::string_view kPrefix = "GPU ";
  if (line.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  const std::string_view rest = line.substr(kPrefix.size());
  const auto colon = rest.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto index = parse_whole<int>(trim(rest.substr(0, colon)));
  if (!index || *index < 0) return std::nullopt;
  NvlinkGpuStatus gpu;
  gpu.index = *index;
  std::string_view name = trim(rest.substr(colon + 1));
  constexpr std::string_view kUuid = "(UUID:";
  if (const auto open = name.rfind(kUuid); open != std::string_view::npos && name.back() == ')') {
    gpu.uuid =
        std::string(trim(name.substr(open + kUuid.size(), name.size() - 1 - open - kUuid.size())));
    name = trim(name.substr(0, open));
  }
  gpu.name = std::string(name);
  return gpu;
}

}  // namespace

std::vector<std::string> nvidia_smi_nvlink_argv() { return {"nvidia-smi", "nvlink", "-s"}; }

std::vector<NvlinkGpuStatus> parse_nvidia_smi_nvlink(std::string_view text) {
  std::vector<NvlinkGpuStatus> gpus;
  std::vector<int> seen_links;  // link numbers of the current GPU
  std::size_t line_number = 0;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view raw = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++line_number;
    const std::string_view line = trim(raw);
    if (line.empty()) continue;

    if (auto header = parse_header(line)) {
      gpus.push_back(std::move(*header));
      seen_links.clear();
      continue;
    }
    if (gpus.empty()) reject_status_line(line_number, line, "expected a \"GPU <n>: ...\" header");
    NvlinkGpuStatus& gpu = gpus.back();

    constexpr std::string_view kLink = "Link ";
    const auto colon = line.find(':');
    const auto number =
        line.substr(0, kLink.size()) == kLink && colon != std::string_view::npos
            ? parse_whole<int>(trim(line.substr(kLink.size(), colon - kLink.size())))
            : std::nullopt;
    if (!number) {
      // Not a link line: a message the driver printed for this GPU instead of its links.
      if (!gpu.note.empty()) gpu.note += "; ";
      gpu.note += std::string(line);
      continue;
    }
    if (std::find(seen_links.begin(), seen_links.end(), *number) != seen_links.end()) {
      reject_status_line(line_number, line, "link " + std::to_string(*number) + " is listed twice");
    }
    seen_links.push_back(*number);
    ++gpu.links;
    const std::string_view value = trim(line.substr(colon + 1));
    if (value.size() >= 2 && value.front() == '<' && value.back() == '>') continue;  // <inactive>
    constexpr std::string_view kUnit = "GB/s";
    const auto rate =
        value.size() > kUnit.size() && value.substr(value.size() - kUnit.size()) == kUnit
            ? parse_whole<double>(trim(value.substr(0, value.size() - kUnit.size())))
            : std::nullopt;
    if (!rate || !(*rate > 0)) {
      reject_status_line(line_number, line, "expected \"<rate> GB/s\" or a state like <inactive>");
    }
    ++gpu.active_links;
    gpu.link_gb_per_s = gpu.link_gb_per_s ? std::min(*gpu.link_gb_per_s, *rate) : *rate;
  }
  return gpus;
}

std::optional<NvlinkGeneration> nvlink_generation(int major, int minor) {
  // Per link and per direction. Line rates are what nvidia-smi prints (see nvlink.hpp).
  if (major == 7 && minor == 0) return NvlinkGeneration{2, 25.0, 25.78125};
  if (major == 8 && minor == 0) return NvlinkGeneration{3, 25.0, 25.78125};
  if (major == 9 && minor == 0) return NvlinkGeneration{4, 25.0, 26.5625};
  if (major == 10) return NvlinkGeneration{5, 50.0, 53.125};
  return std::nullopt;
}

std::optional<NvlinkGeneration> nvlink_generation(std::string_view compute_capability) {
  const auto dot = compute_capability.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = parse_whole<int>(compute_capability.substr(0, dot));
  const auto minor = parse_whole<int>(compute_capability.substr(dot + 1));
  if (!major || !minor) return std::nullopt;
  return nvlink_generation(*major, *minor);
}

std::optional<NvlinkGeneration> nvlink_generation_of_version(int version) {
  for (const auto& [major, minor] :
       {std::pair{7, 0}, std::pair{8, 0}, std::pair{9, 0}, std::pair{10, 0}}) {
    const auto generation = nvlink_generation(major, minor);
    if (generation && generation->version == version) return generation;
  }
  return std::nullopt;
}

std::optional<NvlinkRate> nvlink_link_rate(std::optional<double> driver_gb_per_s,
                                           std::string_view compute_capability,
                                           std::optional<int> nvlink_version) {
  auto fixed = [](double v, int decimals) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return std::string(buf);
  };
  auto generation = nvlink_generation(compute_capability);
  std::string cc = compute_capability.empty() ? "unknown" : std::string(compute_capability);
  if (!generation && nvlink_version) {
    generation = nvlink_generation_of_version(*nvlink_version);
    if (generation) cc += ", NVLink" + std::to_string(generation->version) + " per NVML";
  }
  if (driver_gb_per_s && *driver_gb_per_s > 0) {
    const std::string printed =
        "nvidia-smi nvlink -s: " + fixed(*driver_gb_per_s, 3) + " GB/s per link (line rate)";
    if (generation) {
      const double data = *driver_gb_per_s * generation->data_gb_per_s / generation->line_gb_per_s;
      return NvlinkRate{data, printed + " = " + fixed(data, 2) + " GB/s of data per link and " +
                                  "direction on NVLink" + std::to_string(generation->version) +
                                  " (compute capability " + cc + ")"};
    }
    return NvlinkRate{*driver_gb_per_s,
                      printed + ", taken as the data rate: compute capability " + cc +
                          " has no NVLink generation in pathbench's table, so the line coding "
                          "(3-6 %) is not taken off and the floor is that much stricter"};
  }
  if (generation) {
    return NvlinkRate{
        generation->data_gb_per_s,
        "no per-link rate from the driver; NVLink" + std::to_string(generation->version) +
            " table rate for compute "
            "capability " +
            cc + ": " + fixed(generation->data_gb_per_s, 0) + " GB/s per link and direction"};
  }
  return std::nullopt;
}

std::optional<int> nvlink_version_major(unsigned int nvml_version) {
  switch (nvml_version) {
    case 1:
      return 1;
    case 2:
    case 3:
      return 2;
    case 4:
    case 5:
      return 3;
    case 6:
      return 4;
    case 7:
      return 5;
    default:
      return std::nullopt;
  }
}

std::optional<int> nvlink_count(std::string_view link_param) {
  constexpr std::string_view kPrefix = "nvlink";
  if (link_param.size() <= kPrefix.size() || link_param.substr(0, kPrefix.size()) != kPrefix) {
    return std::nullopt;
  }
  const std::string_view digits = link_param.substr(kPrefix.size());
  if (!std::all_of(digits.begin(), digits.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return std::nullopt;
  }
  const auto n = parse_whole<int>(digits);
  if (!n || *n <= 0) return std::nullopt;
  return n;
}

}  // namespace pathbench
