#include "measure/thp_fault_conditions.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/json_text.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "inventory/buddyinfo.hpp"

namespace pathbench {
namespace {

// The free memory in THP-sized blocks on `node`, or on every node; empty when unreadable.
std::optional<std::uint64_t> free_thp_block_bytes(std::optional<int> node,
                                                  const std::filesystem::path& root) {
  std::vector<NodeFreeMemory> nodes;
  try {
    nodes = read_free_memory(root);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // a record, not a reason to lose the sample
  }
  std::optional<std::uint64_t> sum;
  for (const auto& n : nodes) {
    if (!node || n.node == *node) sum = sum.value_or(0) + n.free_thp_block_bytes;
  }
  return sum;
}

std::optional<VmCounters> vmstat_now(const std::filesystem::path& root) {
  try {
    return read_vmstat(root);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

template <typename T>
nlohmann::ordered_json each(const std::vector<T>& samples, std::optional<std::uint64_t> T::*field) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& s : samples) out.push_back(optional_json(s.*field));
  return out;
}

}  // namespace

ThpFaultConditions::ThpFaultConditions(std::optional<int> node, std::uint64_t huge_pages_per_sample,
                                       std::filesystem::path root)
    : node_(node), huge_pages_per_sample_(huge_pages_per_sample), root_(std::move(root)) {}

ThpFaultConditions::Start ThpFaultConditions::before_sample() const {
  Start start;
  start.compaction = compact_memory(root_);
  start.free_thp_block_bytes = free_thp_block_bytes(node_, root_);
  // Last: the counters bracket the faults and nothing else of this process.
  start.vmstat = vmstat_now(root_);
  return start;
}

void ThpFaultConditions::after_sample(const Start& start) {
  SampleRecord sample{start.compaction, start.free_thp_block_bytes, std::nullopt, std::nullopt};
  if (const auto end = vmstat_now(root_); start.vmstat && end) {
    const VmCounters faults = vm_counter_difference(*start.vmstat, *end);
    sample.fallbacks = faults.thp_fault_fallback;
    sample.huge_faults = faults.thp_fault_alloc;
  }
  samples_.push_back(std::move(sample));
}

std::vector<Check> ThpFaultConditions::checks() const {
  if (samples_.empty()) return {};
  return {compaction_check(), fallback_check()};
}

Check ThpFaultConditions::compaction_check() const {
  const std::size_t n = samples_.size();
  const auto compacted = static_cast<std::size_t>(
      std::count_if(samples_.begin(), samples_.end(),
                    [](const SampleRecord& s) { return s.compaction.compacted; }));
  std::string why_not;
  for (const auto& s : samples_) {
    if (!s.compaction.compacted) why_not = s.compaction.why_not;
  }
  std::string detail;
  if (compacted == n) {
    detail = concat("memory compacted before each of the ", std::to_string(n),
                    " samples (/proc/sys/vm/compact_memory, outside the timed region)");
  } else if (compacted == 0) {
    detail = concat("memory not compacted before the samples: ", why_not);
  } else {
    detail = concat("memory compacted before ", std::to_string(compacted), " of ",
                    std::to_string(n), " samples, not before the others: ", why_not);
  }

  std::optional<std::uint64_t> low, high;
  for (const auto& s : samples_) {
    if (!s.free_thp_block_bytes) continue;
    low = std::min(low.value_or(*s.free_thp_block_bytes), *s.free_thp_block_bytes);
    high = std::max(high.value_or(0), *s.free_thp_block_bytes);
  }
  const std::string where = node_ ? concat("on node ", std::to_string(*node_)) : "on all nodes";
  if (low) {
    detail +=
        concat("; free in THP-sized blocks ", where, " before the samples: ", format_bytes(*low),
               *low == *high ? "" : concat(" to ", format_bytes(*high)));
  } else {
    detail +=
        concat("; free memory in THP-sized blocks ", where, " unknown (/proc/buddyinfo is hidden)");
  }

  nlohmann::ordered_json value;
  value["samples"] = n;
  value["compacted_samples"] = compacted;
  value["why_not"] = why_not;
  value["node"] = optional_json(node_);
  value["free_thp_block_bytes"] = each(samples_, &SampleRecord::free_thp_block_bytes);
  return {"memory_compaction", true, std::move(detail), std::move(value)};
}

Check ThpFaultConditions::fallback_check() const {
  const std::size_t n = samples_.size();
  std::size_t counted = 0, fell_back = 0;
  std::uint64_t total = 0, most = 0;
  for (const auto& s : samples_) {
    if (!s.fallbacks) continue;
    ++counted;
    if (*s.fallbacks > 0) ++fell_back;
    total += *s.fallbacks;
    most = std::max(most, *s.fallbacks);
  }
  const std::string per_sample = concat(std::to_string(huge_pages_per_sample_),
                                        " huge pages per sample; /proc/vmstat thp_fault_fallback, "
                                        "system-wide: other processes' faults count too");
  std::string detail;
  if (counted == 0) {
    detail = "THP fault fallbacks not counted: /proc/vmstat is hidden or lacks thp_fault_fallback";
  } else if (fell_back == 0) {
    detail = concat("no THP fault fell back to 4 KiB pages in ", std::to_string(counted),
                    " counted samples (", per_sample, ")");
  } else {
    detail = concat("THP faults fell back to 4 KiB pages in ", std::to_string(fell_back), " of ",
                    std::to_string(counted), " counted samples: ", std::to_string(total),
                    " in all, at most ", std::to_string(most), " in one (", per_sample,
                    "); those samples still count");
  }
  if (counted != 0 && counted < n) {
    detail += concat("; ", std::to_string(n - counted), " samples not counted");
  }

  nlohmann::ordered_json value;
  value["huge_pages_per_sample"] = huge_pages_per_sample_;
  value["fallbacks"] = each(samples_, &SampleRecord::fallbacks);
  value["huge_faults"] = each(samples_, &SampleRecord::huge_faults);
  return {"thp_fault_fallback", true, std::move(detail), std::move(value)};
}

}  // namespace pathbench
