#pragma once

// Where a GPU sits on the PCIe tree, from sysfs: the bridges from its root port down to it, the
// NICs and NVMe drives that share its switch or root port (GPUDirect RDMA and Storage move data
// between them without the CPU only below a common switch), and the ACS settings of the bridges
// on the path (P2P request/completion redirect sends peer traffic up to the root complex).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pathbench {

// A device's canonical sysfs path below /sys/devices: its root complex ("pci0000:00") and the
// functions from the root port down to the device itself ("0000:00:01.0", …, the device).
struct PcieDevicePath {
  std::string root_complex;
  std::vector<std::string> chain;
};
// From the text after "/sys/devices/" ("pci0000:00/0000:00:01.0/0000:01:00.0"); nothing for a
// path that is not a PCI device's.
std::optional<PcieDevicePath> parse_pcie_device_path(std::string_view below_devices);
// Resolves <root>/sys/bus/pci/devices/<bdf>.
std::optional<PcieDevicePath> read_pcie_device_path(std::string_view bdf,
                                                    const std::filesystem::path& root = "/");

// "same PCIe switch" (a common bridge below the root port), "same root port", "same host bridge"
// (the same root complex only), or nothing (another root complex).
std::optional<std::string> pcie_relation(const PcieDevicePath& a, const PcieDevicePath& b);

// Every NIC (PCI class 0x02) and NVMe controller (0x010802) in the same root complex as `gpu`:
// "nic 0000:04:00.0: same PCIe switch", sorted by relation (closest first), then address.
std::vector<std::string> pcie_neighbors(const PcieDevicePath& gpu,
                                        const std::filesystem::path& root = "/");

// ACS control of a bridge from its configuration space (`config`, the sysfs file's bytes):
// "ACS control 0x001d: P2P requests and completions redirected (RR CR)", "ACS control 0x0000: P2P
// not redirected", "no ACS capability", or why it cannot be read (the kernel shows the extended
// configuration space to root only).
std::string describe_acs(std::string_view config);
// describe_acs for every bridge of the path (not the device itself): "0000:02:08.0: …".
std::vector<std::string> pcie_acs_states(const PcieDevicePath& path,
                                         const std::filesystem::path& root = "/");

}  // namespace pathbench
