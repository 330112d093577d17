// The nvidia-smi fallback of the environment samples (used when NVML cannot be loaded): the GPU
// state query and the compute-apps query, csv,noheader,nounits. Both parsers document
// std::invalid_argument for text they do not understand. The reasons mask that parses is decoded
// as the sample decodes it.

#include <cstdint>
#include <stdexcept>

#include "inventory/environment.hpp"
#include "inventory/gpu_environment_smi.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace pathbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::expect_only<std::invalid_argument>("parse_nvidia_smi_state", [&] {
    for (const auto& row : parse_nvidia_smi_state(text)) {
      if (row.clock_event_reasons_mask) {
        (void)decode_clock_event_reasons(*row.clock_event_reasons_mask);
      }
    }
  });
  fuzz::expect_only<std::invalid_argument>("parse_nvidia_smi_compute_apps",
                                           [&] { (void)parse_nvidia_smi_compute_apps(text); });
  return 0;
}
