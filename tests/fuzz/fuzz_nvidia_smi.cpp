// The nvidia-smi text the inventory reads when it builds a result's context: the GPU query
// (csv,noheader,nounits), `nvidia-smi topo -m` and `nvidia-smi nvlink -s`. Every input goes to all
// three parsers (each rejects the others' text quickly), and what parses is carried on as
// inventory/inventory.cpp carries it: rows merged with two CUDA devices, the topology turned into
// the link map, the NVLink blocks applied to the GPUs. The parsers document std::invalid_argument
// for text they do not understand.

#include <cstdint>
#include <stdexcept>

#include "inventory/fingerprint.hpp"
#include "inventory/nvidia_smi.hpp"
#include "inventory/nvlink.hpp"
#include "inventory/topology.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace pathbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  static const std::vector<CudaDeviceInfo> cuda = [] {
    std::vector<CudaDeviceInfo> devices(2);
    devices[0] = {0, "NVIDIA H200", "00000000:18:00.0", 141ull << 30, 3, 9, 0};
    devices[1] = {1, "NVIDIA H200", "0000:9A:00.0", 141ull << 30, 3, 9, 0};
    return devices;
  }();

  std::vector<NvidiaSmiGpu> rows;
  fuzz::expect_only<std::invalid_argument>("parse_nvidia_smi_query",
                                           [&] { rows = parse_nvidia_smi_query(text); });
  Inventory inventory;
  fuzz::expect_no_throw("merge_gpu_sources", [&] {
    std::vector<std::string> warnings;
    (void)merge_gpu_sources({}, rows, warnings);
    inventory.gpus = merge_gpu_sources(cuda, rows, warnings);
  });

  fuzz::expect_only<std::invalid_argument>("parse_nvidia_smi_nvlink", [&] {
    const auto blocks = parse_nvidia_smi_nvlink(text);
    (void)apply_nvlink_status(inventory.gpus, blocks, rows);
  });

  fuzz::expect_only<std::invalid_argument>("parse_nvidia_smi_topo", [&] {
    const TopoMatrix topo = parse_nvidia_smi_topo(text);
    P2PMatrix peers;
    for (int from = 0; from < 2; ++from) {
      for (int to = 0; to < 2; ++to) {
        if (from != to) peers.push_back({from, to, true, 0, true});
      }
    }
    inventory.links = build_link_map(topo, peers);
  });
  fuzz::expect_no_throw("topology_canonical_text",
                        [&] { (void)topology_canonical_text(inventory); });

  // Single values as nvidia-smi prints them, one per line.
  for (std::size_t start = 0; start < text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    fuzz::expect_only<std::invalid_argument>("normalize_pci_bus_id", [&] {
      const std::string canonical = normalize_pci_bus_id(line);
      fuzz::check(normalize_pci_bus_id(canonical) == canonical,
                  "normalize_pci_bus_id is not idempotent on \"" + canonical + "\"");
    });
    fuzz::expect_no_throw("link_type_from_cell", [&] {
      int nvlinks = 0;
      (void)link_type_name(link_type_from_cell(line, &nvlinks));
      (void)nvlink_generation(line);
      (void)nvlink_count(line);
    });
  }
  return 0;
}
