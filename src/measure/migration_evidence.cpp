#include "measure/migration_evidence.hpp"

#include <algorithm>

#include "core/units.hpp"
#include "stats/robust.hpp"

namespace pathbench {

namespace {

std::uint64_t counted_bytes(const MigrationExpectation& e, const UnifiedMemoryCounts& c) {
  if (e.between_gpus) return c.bytes_d2d;
  return e.to_host ? c.bytes_d2h : c.bytes_h2d;
}

// Where the expected bytes go, for sentences: "to the GPU".
const char* destination(const MigrationExpectation& e) {
  if (e.between_gpus) return "from one GPU to the other";
  return e.to_host ? "back to the host" : "to the GPU";
}

}  // namespace

std::vector<std::string> migration_gaps(const MigrationExpectation& e,
                                        const UnifiedMemoryCounts& counts) {
  std::vector<std::string> gaps;
  if (counts.lost_records > 0) {
    gaps.push_back("CUPTI reported " + std::to_string(counts.lost_records) +
                   " record(s) lost or without timestamps");
  }
  const std::uint64_t bytes = counted_bytes(e, counts);
  const std::string moved = "CUPTI counted " + format_bytes(bytes) + " migrated " + destination(e);
  if (e.must_migrate && bytes < e.least_bytes) {
    gaps.push_back(moved + ", less than the " + format_bytes(e.least_bytes) + " of " +
                   e.least_what);
  }
  const std::uint64_t faults = e.to_host ? counts.cpu_faults : counts.gpu_fault_groups;
  if (e.by_faults && bytes > 0 && faults == 0) {
    gaps.push_back(moved + " by work that only faults, but no " +
                   (e.to_host ? "CPU page fault" : "GPU page-fault group"));
  }
  return gaps;
}

std::uint64_t migrated_bytes(const MigrationExpectation& e, const UnifiedMemoryCounts& counts) {
  return std::max(counted_bytes(e, counts), e.least_bytes);
}

Check unified_memory_counter_check(const MigrationExpectation& e,
                                   const std::vector<CountedSample>& samples,
                                   const std::string& unavailable) {
  const std::string bound =
      "the lower bound " + format_bytes(e.least_bytes) + " (" + e.least_what + ")";
  nlohmann::ordered_json v = nlohmann::ordered_json::object();
  for (const char* key : {"gpu_fault_groups", "bytes_h2d", "bytes_d2h", "cpu_page_faults",
                          "time_per_fault_group_s"}) {
    v[key] = nlohmann::ordered_json::array();
  }
  // Counted only for work between GPUs: elsewhere an always-empty series would read as none moved.
  if (e.between_gpus) v["bytes_d2d"] = nlohmann::ordered_json::array();
  std::vector<double> per_group;
  std::size_t counted = 0, short_bytes = 0, with_gaps = 0;
  std::string first_gaps;
  for (const auto& s : samples) {
    if (!s.counts) continue;
    const UnifiedMemoryCounts& c = *s.counts;
    ++counted;
    v["gpu_fault_groups"].push_back(c.gpu_fault_groups);
    v["bytes_h2d"].push_back(c.bytes_h2d);
    v["bytes_d2h"].push_back(c.bytes_d2h);
    v["cpu_page_faults"].push_back(c.cpu_faults);
    if (e.between_gpus) v["bytes_d2d"].push_back(c.bytes_d2d);
    const auto gaps = migration_gaps(e, c);
    // A time per fault group needs every group counted.
    if (c.gpu_fault_groups > 0 && gaps.empty()) {
      per_group.push_back(s.seconds / static_cast<double>(c.gpu_fault_groups));
      v["time_per_fault_group_s"].push_back(per_group.back());
    } else {
      v["time_per_fault_group_s"].push_back(nullptr);
    }
    if (counted_bytes(e, c) < e.least_bytes) ++short_bytes;
    for (std::size_t i = 0; with_gaps == 0 && i < gaps.size(); ++i) {
      first_gaps += (i ? "; " : "") + gaps[i];
    }
    if (!gaps.empty()) ++with_gaps;
  }
  if (counted == 0) {
    return {"um_counters", true,
            "CUPTI unavailable: " + (unavailable.empty() ? "no sample was measured" : unavailable) +
                "; fault counts not measured; the metrics use " + bound,
            nullptr};
  }
  std::string detail = "CUPTI unified-memory counters per sample: GPU page-fault groups " +
                       v["gpu_fault_groups"].dump() + ", bytes H2D " + v["bytes_h2d"].dump() +
                       ", bytes D2H " + v["bytes_d2h"].dump() +
                       (e.between_gpus ? ", bytes D2D " + v["bytes_d2d"].dump() : "") +
                       ", CPU page faults " + v["cpu_page_faults"].dump();
  if (!per_group.empty()) {
    detail += "; median time per fault group " + format_seconds(median_of(per_group));
  }
  if (short_bytes > 0) {
    detail += "; " + std::to_string(short_bytes) +
              " sample(s) counted fewer bytes than the work must migrate (through a mapping, or "
              "records lost): their metrics use " +
              bound;
  }
  if (counted < samples.size()) {
    detail += "; " + std::to_string(samples.size() - counted) +
              " sample(s) without counters: " + unavailable;
  }
  if (with_gaps > 0) {
    detail += "; INCOMPLETE in " + std::to_string(with_gaps) + " of " + std::to_string(counted) +
              " samples, CUPTI lost records: " + first_gaps +
              " (first such sample); the counts are lower bounds";
  }
  v["complete"] = with_gaps == 0;
  return {"um_counters", true, detail, v};
}

}  // namespace pathbench
