#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/family.hpp"
#include "stats/summary.hpp"

namespace pathbench {

inline constexpr const char* kResultSchema = "pathbench.result/v1";

enum class CaseStatus { kOk, kSkipped, kFailed };
std::string_view to_string(CaseStatus s);  // "ok", "skipped", "failed"

// Inverses of to_string (here and in measure/family.hpp); nothing for an unknown name.
std::optional<CaseStatus> parse_case_status(std::string_view s);
std::optional<Better> parse_better(std::string_view s);
std::optional<TimingMethod> parse_timing_method(std::string_view s);

struct MetricResult {
  std::string name;
  std::string unit;
  Better better = Better::kHigher;
  std::vector<double> samples;
  Summary stats;
};

struct CaseResult {
  std::string id;
  std::string scenario;
  std::string family;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  std::string timing_method;  // empty when the case did not run
  std::uint64_t operations_per_sample = 0;
  std::uint64_t bytes_per_sample = 0;
  std::vector<MetricResult> metrics;
  std::vector<Check> checks;
  CaseStatus status = CaseStatus::kOk;
  std::string reason;
  double elapsed_seconds = 0;  // wall time of the whole case, set-up included
  // The scenario's gate block, copied so a result can be compared without its scenario file:
  // {"threshold_pct": 5, "metrics": {"round_trip_time": 10}}; null when the scenario has none.
  nlohmann::ordered_json gate = nullptr;
  // Chrome trace of one sample (run --timeline, or a family that measures on a timeline).
  std::string timeline_file;
};

struct ScenarioFileRef {
  std::string path;
  std::string sha256;
};

struct Result {
  std::string schema = kResultSchema;
  nlohmann::ordered_json context = nlohmann::ordered_json::object();  // see inventory/to_json
  std::vector<ScenarioFileRef> scenario_files;
  std::string start_time, end_time;  // ISO 8601 UTC
  std::vector<CaseResult> cases;
};

// context = r.context's fields, then scenario_files, start_time, end_time. An empty
// timing_method is written as null. Metrics are an object keyed by name, in metric order.
nlohmann::ordered_json to_json(const Result& r);
// The context as the file writes it: r.context's fields, then scenario_files, start and end time.
nlohmann::ordered_json context_json(const Result& r);
nlohmann::ordered_json to_json(const CaseResult& c);
// Throws InputError naming `file` and the JSON pointer when the document is not a valid result.
// Stats are taken as stored (stats.n must equal the number of samples). The ordered_json overload
// keeps the key order of context and params, so to_json(result_from_json(to_json(r))) ==
// to_json(r); the nlohmann::json overload sees those keys sorted.
Result result_from_json(const nlohmann::ordered_json& j, const std::string& file);
Result result_from_json(const nlohmann::json& j, const std::string& file);
// The file parsed as JSON (key order kept); unreadable or malformed → InputError naming it.
nlohmann::ordered_json load_json_document(const std::filesystem::path& path);
// Unreadable file, malformed JSON and invalid content all throw InputError.
Result load_result(const std::filesystem::path& path);
void save_result(const std::filesystem::path& path, const Result& r);  // atomic

}  // namespace pathbench
