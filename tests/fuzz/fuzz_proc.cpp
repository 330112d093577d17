// The /proc and sysfs text the inventory and the environment samples read: /proc/stat,
// /proc/loadavg, aer_dev_* counters, /proc/meminfo, /proc/self/status, /proc/cpuinfo,
// /proc/buddyinfo, /proc/vmstat, one-integer files, sysfs selectors ("always [madvise] never")
// and the IOMMU tokens of /proc/cmdline. Every input goes to each parser. The environment and
// IOMMU parsers document that they never throw; parse_meminfo, parse_proc_status, parse_buddyinfo
// and parse_vmstat throw std::invalid_argument for a value they cannot read.

#include <cstdint>
#include <optional>
#include <stdexcept>

#include "inventory/buddyinfo.hpp"
#include "inventory/environment.hpp"
#include "inventory/iommu.hpp"
#include "inventory/sysfs.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace pathbench;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::expect_no_throw("environment parsers", [&] {
    const auto cpu = parse_proc_stat_cpu(text);
    if (cpu) {
      (void)cpu_share(*cpu, *cpu);
      (void)cpu_share(CpuTimes{}, *cpu);
      (void)cpu_share(*cpu, CpuTimes{});
    }
    (void)parse_loadavg(text);
    for (const char* key : {"TOTAL_ERR_COR", "TOTAL_ERR_NONFATAL", "TOTAL_ERR_FATAL"}) {
      (void)parse_aer_total(text, key);
    }
  });
  fuzz::expect_no_throw("sysfs parsers", [&] {
    (void)parse_bracketed_choice(text);
    (void)parse_cpu_model(text);
    (void)parse_int(text);
  });
  fuzz::expect_only<std::invalid_argument>("parse_meminfo", [&] { (void)parse_meminfo(text); });
  fuzz::expect_only<std::invalid_argument>("parse_proc_status",
                                           [&] { (void)parse_proc_status(text); });
  fuzz::expect_only<std::invalid_argument>("parse_buddyinfo", [&] {
    (void)parse_buddyinfo(text, 4096, 9);
    (void)parse_buddyinfo(text, std::uint64_t{1} << 62, 0);  // orders that overflow a byte count
  });
  fuzz::expect_only<std::invalid_argument>("parse_vmstat", [&] {
    const VmCounters counters = parse_vmstat(text);
    (void)vm_counter_difference(counters, VmCounters{});
    (void)vm_counter_difference(VmCounters{}, counters);
  });
  fuzz::expect_no_throw("iommu", [&] {
    const std::string tokens = iommu_cmdline_tokens(text);
    for (const auto groups : {std::optional<int>{}, std::optional<int>{0}, std::optional<int>{7}}) {
      (void)classify_iommu(tokens, groups);
    }
  });
  return 0;
}
