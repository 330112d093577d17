#include "inventory/nvml_nvlink.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "inventory/nvidia_smi.hpp"

namespace pathbench {
namespace {

// NVML_NVLINK_MAX_LINKS is the header's idea of the most links a GPU has; a newer driver may
// report more through NVML_FI_DEV_NVLINK_LINK_COUNT, so that count wins, within reason.
constexpr unsigned kMaxLinks = 64;

std::optional<double> field_number(const nvmlFieldValue_t& v) {
  if (v.nvmlReturn != NVML_SUCCESS) return std::nullopt;
  switch (v.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      return v.value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return v.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(v.value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(v.value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(v.value.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
      return v.value.siVal;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return v.value.usVal;
    default:
      return std::nullopt;
  }
}

// One field per scope id (link); each entry's value is empty unless that field succeeded.
std::vector<std::optional<double>> field_per_link(const NvmlApi& nvml, nvmlDevice_t device,
                                                  unsigned int field, unsigned links) {
  std::vector<std::optional<double>> out(links);
  if (nvml.field_values == nullptr || links == 0) return out;
  std::vector<nvmlFieldValue_t> values(links);
  for (unsigned i = 0; i < links; ++i) {
    values[i] = nvmlFieldValue_t{};
    values[i].fieldId = field;
    values[i].scopeId = i;
  }
  if (nvml.field_values(device, static_cast<int>(links), values.data()) != NVML_SUCCESS) {
    return out;
  }
  for (unsigned i = 0; i < links; ++i) out[i] = field_number(values[i]);
  return out;
}

}  // namespace

std::string canonical_nvml_bus_id(const char* bus_id) {
  try {
    return normalize_pci_bus_id(bus_id);
  } catch (const std::invalid_argument&) {
    return {};
  }
}

namespace {

std::string remote_type_name(nvmlIntNvLinkDeviceType_t type) {
  switch (type) {
    case NVML_NVLINK_DEVICE_TYPE_GPU:
      return "gpu";
    case NVML_NVLINK_DEVICE_TYPE_SWITCH:
      return "switch";
    case NVML_NVLINK_DEVICE_TYPE_IBMNPU:
      return "ibmnpu";
    default:
      return "unknown";
  }
}

}  // namespace

std::optional<GpuNvlink> read_nvml_nvlink(const NvmlApi& nvml, nvmlDevice_t device) {
  if (nvml.nvlink_state == nullptr) return std::nullopt;
  unsigned links = NVML_NVLINK_MAX_LINKS;
  if (const auto count = field_per_link(nvml, device, NVML_FI_DEV_NVLINK_LINK_COUNT, 1)[0]) {
    links = static_cast<unsigned>(std::clamp(*count, 0.0, static_cast<double>(kMaxLinks)));
  }
  const auto speeds = field_per_link(nvml, device, NVML_FI_DEV_NVLINK_GET_SPEED, links);
  // Drivers before the per-link field (field 164) report one speed for all active links.
  const auto common = field_per_link(nvml, device, NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON, 1)[0];

  GpuNvlink out;
  for (unsigned link = 0; link < links; ++link) {
    nvmlEnableState_t active = NVML_FEATURE_DISABLED;
    const nvmlReturn_t rc = nvml.nvlink_state(device, link, &active);
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) break;  // no more
    if (rc != NVML_SUCCESS) continue;
    NvlinkLinkState state;
    state.link = static_cast<int>(link);
    state.active = active == NVML_FEATURE_ENABLED;
    if (state.active) {
      unsigned int version = 0;
      if (nvml.nvlink_version != nullptr &&
          nvml.nvlink_version(device, link, &version) == NVML_SUCCESS) {
        state.version = nvlink_version_major(version);
      }
      // MBps (1e6 bytes/s) per direction: 26562 on an H100, which nvidia-smi prints as
      // 26.562 GB/s, the line rate (inventory/nvlink.hpp).
      const auto mbps = speeds[link] && *speeds[link] > 0 ? speeds[link] : common;
      if (mbps && *mbps > 0) state.gb_per_s = *mbps / 1000.0;
      nvmlPciInfo_t remote{};
      if (nvml.nvlink_remote_pci_info != nullptr &&
          nvml.nvlink_remote_pci_info(device, link, &remote) == NVML_SUCCESS) {
        remote.busId[sizeof remote.busId - 1] = '\0';
        state.remote_pci_bus_id = canonical_nvml_bus_id(remote.busId);
      }
      nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
      if (nvml.nvlink_remote_device_type != nullptr &&
          nvml.nvlink_remote_device_type(device, link, &type) == NVML_SUCCESS) {
        state.remote_type = remote_type_name(type);
      }
      ++out.active_links;
      if (state.gb_per_s) {
        out.link_gb_per_s =
            out.link_gb_per_s ? std::min(*out.link_gb_per_s, *state.gb_per_s) : *state.gb_per_s;
      }
      if (state.version)
        out.version = out.version ? std::min(*out.version, *state.version) : *state.version;
    }
    out.links.push_back(std::move(state));
  }
  return out;
}

}  // namespace pathbench
