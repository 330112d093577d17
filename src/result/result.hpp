#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_reader.hpp"
#include "result/vocabulary.hpp"
#include "stats/operation_distribution.hpp"
#include "stats/summary.hpp"

namespace pathbench {

inline constexpr const char* kResultSchema = "pathbench.result/v1";

enum class CaseStatus { kOk, kSkipped, kFailed };

// How the reason of a failed case a stop signal cut short begins ("interrupted by SIGINT ..."):
// it measured nothing trustworthy, runs again when the run is resumed, and compare counts it as
// missing, not as a failure of the node.
inline constexpr std::string_view kInterruptedReason = "interrupted by";
std::string_view to_string(CaseStatus s);  // "ok", "skipped", "failed"

// Inverses of to_string (here and in result/vocabulary.hpp); nothing for an unknown name.
std::optional<CaseStatus> parse_case_status(std::string_view s);
std::optional<Better> parse_better(std::string_view s);
std::optional<TimingMethod> parse_timing_method(std::string_view s);

struct MetricResult {
  std::string name;
  std::string unit;
  Better better = Better::kHigher;
  std::vector<double> samples;
  Summary stats;
  // A per-operation metric's distribution; its samples are the repetitions' medians.
  std::optional<OperationDistribution> distribution;
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
  // False while the run measures, and for good when it was interrupted (a signal, a full disk)
  // or killed: the cases present are finished ones, but not every planned case is there.
  bool complete = true;
  // Why the run stopped early ("interrupted by SIGINT"); empty for a complete run.
  std::string incomplete_reason;
  std::vector<CaseResult> cases;
};

// context = r.context's fields, then scenario_files, start_time, end_time. An empty
// timing_method is written as null. Metrics are an object keyed by name, in metric order.
nlohmann::ordered_json to_json(const Result& r);
// The context as the file writes it: r.context's fields, then scenario_files, start and end time.
nlohmann::ordered_json context_json(const Result& r);
nlohmann::ordered_json to_json(const CaseResult& c);
// One case as the file holds it under /cases/N; `at` is that pointer, for error messages.
CaseResult case_result_from_json(const nlohmann::ordered_json& j, const std::string& file,
                                 const std::string& at);
// Throws InputError naming `file` and the JSON pointer when the document is not a valid result.
// Stats are taken as stored (stats.n must equal the number of samples). The ordered_json overload
// keeps the key order of context and params, so to_json(result_from_json(to_json(r))) ==
// to_json(r); the nlohmann::json overload sees those keys sorted.
Result result_from_json(const nlohmann::ordered_json& j, const std::string& file);
Result result_from_json(const nlohmann::json& j, const std::string& file);
// The file parsed as JSON (key order kept); unreadable or malformed → InputError naming it.
nlohmann::ordered_json load_json_document(const std::filesystem::path& path);
// Unreadable file, malformed JSON and invalid content all throw InputError. The file is read case
// by case (read_result_file): never held whole, as text or as a document.
Result load_result(const std::filesystem::path& path);
// Reads a result file case by case, never holding the file or its whole document: each case is
// converted and checked as load_result does (ids unique, samples in an "ok" case) as soon as it is
// read, and handed to on_case with its index. Returns the rest of the result (cases empty). A
// document that is not a result is an InputError, unless `other` is given: then the whole document
// goes there and nothing is returned (load_baseline takes baselines and results so).
// `tap` (pathbench export --json-lines, which writes the document as the reader accepted it): a
// size cap, each case of the file as its JSON once the reader accepted it (just before on_case
// gets it converted; the cases a journal adds have none), and the rest of a result's document as
// read, its "cases" empty.
struct ResultFileTap {
  std::uint64_t max_bytes = JsonReadOptions{}.max_bytes;
  std::function<void(const nlohmann::ordered_json& element, std::size_t index)> on_case_json;
  nlohmann::ordered_json* header = nullptr;
};
std::optional<Result> read_result_file(
    const std::filesystem::path& path,
    const std::function<void(CaseResult&& c, std::size_t index)>& on_case,
    nlohmann::ordered_json* other = nullptr, const ResultFileTap& tap = {});
void save_result(const std::filesystem::path& path, const Result& r);  // atomic

}  // namespace pathbench
