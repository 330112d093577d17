#include "result/result.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/json_reader.hpp"
#include "core/json_text.hpp"
#include "result/gate_block.hpp"
#include "result/run_record.hpp"

namespace pathbench {

// ---------------------------------------------------------------------------------------------
// Names of the enums (result/vocabulary.hpp): part of the result format.

std::string_view to_string(Better b) {
  switch (b) {
    case Better::kHigher:
      return "higher";
    case Better::kLower:
      return "lower";
  }
  throw std::invalid_argument("to_string: invalid Better value");
}

std::string_view to_string(TimingMethod m) {
  switch (m) {
    case TimingMethod::kCudaEventsLatched:
      return "cuda_events_latched";
    case TimingMethod::kHostSteadyClock:
      return "host_steady_clock";
  }
  throw std::invalid_argument("to_string: invalid TimingMethod value");
}

std::string_view to_string(CaseStatus s) {
  switch (s) {
    case CaseStatus::kOk:
      return "ok";
    case CaseStatus::kSkipped:
      return "skipped";
    case CaseStatus::kFailed:
      return "failed";
  }
  throw std::invalid_argument("to_string: invalid CaseStatus value");
}

std::optional<CaseStatus> parse_case_status(std::string_view s) {
  for (auto v : {CaseStatus::kOk, CaseStatus::kSkipped, CaseStatus::kFailed}) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

std::optional<Better> parse_better(std::string_view s) {
  for (auto v : {Better::kHigher, Better::kLower}) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

std::optional<TimingMethod> parse_timing_method(std::string_view s) {
  for (auto v : {TimingMethod::kCudaEventsLatched, TimingMethod::kHostSteadyClock}) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Writing.

namespace {

using ojson = nlohmann::ordered_json;
using Pointer = ojson::json_pointer;

// Keys of `context` that the Result holds as struct fields.
constexpr std::array<const char*, 3> kLiftedContextKeys = {"scenario_files", "start_time",
                                                           "end_time"};

ojson to_json(const MetricResult& m) {
  ojson j = ojson::object();
  j["unit"] = m.unit;
  j["better"] = to_string(m.better);
  j["samples"] = m.samples;
  j["stats"] = m.stats;
  if (m.distribution) j["distribution"] = to_json(*m.distribution);
  return j;
}

ojson to_json(const Check& c) {
  ojson j = ojson::object();
  j["name"] = c.name;
  j["passed"] = c.passed;
  j["detail"] = c.detail;
  j["value"] = c.value;
  return j;
}

}  // namespace

ojson to_json(const CaseResult& c) {
  ojson j = ojson::object();
  j["id"] = c.id;
  j["scenario"] = c.scenario;
  j["family"] = c.family;
  j["params"] = c.params.is_null() ? ojson::object() : c.params;
  j["status"] = to_string(c.status);
  j["reason"] = c.reason;
  // A case that never ran was timed by nothing: null says so more plainly than "".
  j["timing_method"] = c.timing_method.empty() ? ojson(nullptr) : ojson(c.timing_method);
  j["operations_per_sample"] = c.operations_per_sample;
  j["bytes_per_sample"] = c.bytes_per_sample;
  j["elapsed_seconds"] = c.elapsed_seconds;
  if (!c.gate.is_null()) j["gate"] = c.gate;
  if (!c.timeline_file.empty()) j["timeline"] = c.timeline_file;
  ojson metrics = ojson::object();
  for (const auto& m : c.metrics) {
    // Metrics are keyed by name: a second one of the same name would silently replace the first.
    if (metrics.contains(m.name)) {
      throw std::logic_error("case " + c.id + ": metric \"" + m.name + "\" appears twice");
    }
    metrics[m.name] = to_json(m);
  }
  j["metrics"] = std::move(metrics);
  ojson checks = ojson::array();
  for (const auto& chk : c.checks) checks.push_back(to_json(chk));
  j["checks"] = std::move(checks);
  return j;
}

ojson context_json(const Result& r) {
  ojson context = r.context.is_null() ? ojson::object() : r.context;
  if (!context.is_object()) {
    throw std::invalid_argument("Result.context must be a JSON object, not " +
                                std::string(context.type_name()));
  }
  // The lifted fields always come last, whatever the inventory put in context.
  for (const char* key : kLiftedContextKeys) context.erase(key);
  ojson files = ojson::array();
  for (const auto& f : r.scenario_files) {
    ojson entry = ojson::object();
    entry["path"] = f.path;
    entry["sha256"] = f.sha256;
    files.push_back(std::move(entry));
  }
  context["scenario_files"] = std::move(files);
  context["start_time"] = r.start_time;
  context["end_time"] = r.end_time;
  return context;
}

ojson to_json(const Result& r) {
  ojson j = ojson::object();
  j["schema"] = r.schema;
  j["complete"] = r.complete;
  if (!r.complete && !r.incomplete_reason.empty()) j["incomplete_reason"] = r.incomplete_reason;
  j["context"] = context_json(r);
  ojson cases = ojson::array();
  for (const auto& c : r.cases) cases.push_back(to_json(c));
  j["cases"] = std::move(cases);
  return j;
}

// ---------------------------------------------------------------------------------------------
// Reading.

namespace {

std::string json_quoted(std::string_view s) { return ojson(s).dump(); }

// The ids of a result's cases so far. Comparison and the exports key cases by id: two cases with
// one id cannot be told apart, so the second is refused. The ids are copied into blocks that never
// move, so the index holds views of them: a million ids cost their bytes and a hash entry each.
class CaseIds {
 public:
  explicit CaseIds(std::string file) : file_(std::move(file)) {}

  bool contains(std::string_view id) const { return index_.find(id) != index_.end(); }
  std::size_t size() const { return index_.size(); }

  void add(const std::string& id, std::size_t index) {
    const auto [it, inserted] = index_.emplace(store(id), index);
    if (!inserted) {
      throw InputError(file_, "/cases/" + std::to_string(index) + "/id",
                       "duplicate case id " + json_quoted(id) + " (also /cases/" +
                           std::to_string(it->second) + "/id)");
    }
  }

 private:
  std::string_view store(std::string_view id) {
    if (id.size() > kBlock / 4) return blocks_.emplace_back(id);  // its own block
    if (blocks_.empty() || blocks_.back().capacity() - blocks_.back().size() < id.size()) {
      blocks_.emplace_back().reserve(kBlock);
    }
    std::string& block = blocks_.back();
    const std::size_t at = block.size();
    block.append(id);  // within the reserved capacity: the block's bytes stay where they are
    return std::string_view(block).substr(at, id.size());
  }

  static constexpr std::size_t kBlock = std::size_t{1} << 20;
  std::string file_;
  std::deque<std::string> blocks_;  // a deque: adding a block moves no other
  std::unordered_map<std::string_view, std::size_t> index_;
};

// Reads a result document while tracking where in it we are, so every error names the field.
class ResultReader {
 public:
  explicit ResultReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const Pointer& at, const std::string& what) const {
    throw InputError(file_, at.to_string(), what);
  }

  const ojson& object(const ojson& v, const Pointer& at) const {
    if (!v.is_object()) fail(at, "expected an object, found " + json_kind(v));
    return v;
  }

  const ojson& array(const ojson& v, const Pointer& at) const {
    if (!v.is_array()) fail(at, "expected an array, found " + json_kind(v));
    return v;
  }

  const ojson& field(const ojson& obj, const Pointer& at, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(at / key, "missing required field");
    return *it;
  }

  std::string string(const ojson& v, const Pointer& at) const {
    if (!v.is_string()) fail(at, "expected a string, found " + json_kind(v));
    return v.get<std::string>();
  }

  double number(const ojson& v, const Pointer& at) const {
    if (!v.is_number()) fail(at, "expected a number, found " + json_kind(v));
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(at, "expected a finite number, found " + v.dump());
    return d;
  }

  std::uint64_t count(const ojson& v, const Pointer& at) const {
    if (!v.is_number_unsigned()) {
      fail(at,
           "expected a non-negative integer, found " + (v.is_number() ? v.dump() : json_kind(v)));
    }
    return v.get<std::uint64_t>();
  }

  bool boolean(const ojson& v, const Pointer& at) const {
    if (!v.is_boolean()) fail(at, "expected true or false, found " + json_kind(v));
    return v.get<bool>();
  }

  std::string string_field(const ojson& obj, const Pointer& at, const char* key) const {
    return string(field(obj, at, key), at / key);
  }

  // Everything but the cases: schema, context, complete; "cases" must be there and an array
  // (its elements are read by result() or, for a file read case by case, one at a time).
  // `whole` false: the document read so far, up to its first case: the fields there are checked
  // (so that errors come in the file's order), a context still to come is not missing yet.
  Result header(const ojson& doc, bool whole = true) const {
    const Pointer root;
    object(doc, root);
    const ojson& schema = field(doc, root, "schema");
    if (!schema.is_string() || schema.get_ref<const std::string&>() != kResultSchema) {
      fail(root / "schema", "expected " + json_quoted(kResultSchema) + ", found " +
                                (schema.is_string() ? schema.dump() : json_kind(schema)));
    }
    Result r;
    r.schema = kResultSchema;
    if (whole || doc.contains("context")) context(field(doc, root, "context"), root / "context", r);
    // Files written before the field existed: a run that finished has an end time.
    r.complete = !r.end_time.empty();
    if (const auto it = doc.find("complete"); it != doc.end()) {
      r.complete = boolean(*it, root / "complete");
    }
    if (const auto it = doc.find("incomplete_reason"); it != doc.end()) {
      r.incomplete_reason = string(*it, root / "incomplete_reason");
    }
    array(field(doc, root, "cases"), root / "cases");
    return r;
  }

  Result result(const ojson& doc) const {
    Result r = header(doc);
    const ojson& cases = doc.at("cases");
    CaseIds ids(file_);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      r.cases.push_back(case_result(cases[i], Pointer() / "cases" / i));
      ids.add(r.cases.back().id, i);
    }
    return r;
  }

  CaseResult case_result(const ojson& v, const Pointer& at) const {
    CaseResult c = case_fields(v, at);
    // A case that measured has samples: zero would pass every comparison without evidence.
    if (c.status == CaseStatus::kOk) {
      for (const auto& m : c.metrics) {
        if (m.samples.empty()) {
          fail(at / "metrics" / m.name / "samples",
               "an \"ok\" case with no samples: nothing was measured (a case that did not "
               "measure says so with status \"failed\" or \"skipped\")");
        }
      }
    }
    return c;
  }

 private:
  void context(const ojson& v, const Pointer& at, Result& r) const {
    object(v, at);
    const Pointer files_at = at / "scenario_files";
    const ojson& files = array(field(v, at, "scenario_files"), files_at);
    for (std::size_t i = 0; i < files.size(); ++i) {
      const Pointer file_at = files_at / i;
      object(files[i], file_at);
      r.scenario_files.push_back(
          {string_field(files[i], file_at, "path"), string_field(files[i], file_at, "sha256")});
    }
    r.start_time = string_field(v, at, "start_time");
    r.end_time = string_field(v, at, "end_time");
    // The identity of the run: compare, baselines and exports key on these, so a number where a
    // name belongs must be refused here rather than read as "" (another node type) downstream.
    for (const char* key : {"tool_version", "git_sha", "hostname", "node_type",
                            "topology_fingerprint", "cpu_model"}) {
      if (const auto it = v.find(key); it != v.end()) string(*it, at / key);
    }
    r.context = v;
    for (const char* key : kLiftedContextKeys) r.context.erase(key);
  }

  CaseResult case_fields(const ojson& v, const Pointer& at) const {
    object(v, at);
    CaseResult c;
    c.id = string_field(v, at, "id");
    c.scenario = string_field(v, at, "scenario");
    c.family = string_field(v, at, "family");
    c.params = object(field(v, at, "params"), at / "params");

    const std::string status = string_field(v, at, "status");
    const auto parsed_status = parse_case_status(status);
    if (!parsed_status) {
      fail(at / "status",
           "expected one of \"ok\", \"skipped\", \"failed\", found " + json_quoted(status));
    }
    c.status = *parsed_status;
    c.reason = string_field(v, at, "reason");

    const ojson& timing = field(v, at, "timing_method");
    if (!timing.is_null()) {
      const std::string method = string(timing, at / "timing_method");
      if (!parse_timing_method(method)) {
        fail(at / "timing_method",
             "expected \"cuda_events_latched\", \"host_steady_clock\" or null, found " +
                 json_quoted(method));
      }
      c.timing_method = method;
    }

    c.operations_per_sample =
        count(field(v, at, "operations_per_sample"), at / "operations_per_sample");
    c.bytes_per_sample = count(field(v, at, "bytes_per_sample"), at / "bytes_per_sample");
    c.elapsed_seconds = number(field(v, at, "elapsed_seconds"), at / "elapsed_seconds");
    if (const auto it = v.find("timeline"); it != v.end()) {
      if (!it->is_string()) fail(at / "timeline", "expected a string, found " + it->dump());
      c.timeline_file = it->get<std::string>();
    }
    if (const auto it = v.find("gate"); it != v.end() && !it->is_null()) {
      // The same rules as a scenario's gate block (one checker): the compare must not read a
      // typo or a negative threshold as "no gate" or "always noise".
      check_gate_block(*it, file_, (at / "gate").to_string());
      c.gate = *it;
    }

    const Pointer metrics_at = at / "metrics";
    const ojson& metrics = object(field(v, at, "metrics"), metrics_at);
    for (const auto& [name, metric] : metrics.items()) {
      c.metrics.push_back(metric_result(name, metric, metrics_at / name));
    }

    const Pointer checks_at = at / "checks";
    const ojson& checks = array(field(v, at, "checks"), checks_at);
    for (std::size_t i = 0; i < checks.size(); ++i) {
      c.checks.push_back(check(checks[i], checks_at / i));
    }
    return c;
  }

  MetricResult metric_result(const std::string& name, const ojson& v, const Pointer& at) const {
    object(v, at);
    MetricResult m;
    m.name = name;
    m.unit = string_field(v, at, "unit");
    const std::string better = string_field(v, at, "better");
    const auto parsed_better = parse_better(better);
    if (!parsed_better) {
      fail(at / "better", "expected \"higher\" or \"lower\", found " + json_quoted(better));
    }
    m.better = *parsed_better;

    const Pointer samples_at = at / "samples";
    const ojson& samples = array(field(v, at, "samples"), samples_at);
    m.samples.reserve(samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
      m.samples.push_back(number(samples[i], samples_at / i));
    }
    m.stats = stats(field(v, at, "stats"), at / "stats");
    if (m.stats.n != m.samples.size()) {
      fail(at / "stats" / "n", "is " + std::to_string(m.stats.n) + " but the metric has " +
                                   std::to_string(m.samples.size()) + " samples");
    }
    if (const auto it = v.find("distribution"); it != v.end()) {
      const Pointer dist_at = at / "distribution";
      try {
        m.distribution = distribution_from_json(*it, "");
      } catch (const std::invalid_argument& e) {
        // The message starts with the pointer below the distribution object.
        const std::string what = e.what();
        const auto colon = what.find(": ");
        fail(Pointer(dist_at.to_string() + what.substr(0, colon)),
             colon == std::string::npos ? what : what.substr(colon + 2));
      }
      if (m.distribution->repetitions() != m.samples.size()) {
        fail(dist_at / "per_repetition", "holds " + std::to_string(m.distribution->repetitions()) +
                                             " repetitions but the metric has " +
                                             std::to_string(m.samples.size()) + " samples");
      }
    }
    return m;
  }

  Summary stats(const ojson& v, const Pointer& at) const {
    object(v, at);
    Summary s;
    s.n = count(field(v, at, "n"), at / "n");
    const std::pair<const char*, double*> numbers[] = {
        {"median", &s.median}, {"min", &s.min}, {"max", &s.max},       {"mean", &s.mean},
        {"p10", &s.p10},       {"p90", &s.p90}, {"stddev", &s.stddev}, {"cv", &s.cv}};
    for (const auto& [key, out] : numbers) *out = number(field(v, at, key), at / key);
    return s;
  }

  Check check(const ojson& v, const Pointer& at) const {
    object(v, at);
    Check c;
    c.name = string_field(v, at, "name");
    c.passed = boolean(field(v, at, "passed"), at / "passed");
    c.detail = string_field(v, at, "detail");
    // Not every check measures a quantity; the writer puts null there, older files may omit it.
    if (const auto it = v.find("value"); it != v.end()) c.value = *it;
    return c;
  }

  std::string file_;
};

// What a document's "schema" says it is, as far as it has been read.
enum class DocumentKind { kUnknown, kResult, kOther };
DocumentKind kind_of(const ojson& doc) {
  if (!doc.is_object()) return DocumentKind::kOther;
  const auto it = doc.find("schema");
  if (it == doc.end()) return DocumentKind::kUnknown;
  return it->is_string() && it->get_ref<const std::string&>() == kResultSchema
             ? DocumentKind::kResult
             : DocumentKind::kOther;
}

}  // namespace

CaseResult case_result_from_json(const nlohmann::ordered_json& j, const std::string& file,
                                 const std::string& at) {
  return ResultReader(file).case_result(j, Pointer(at));
}

Result result_from_json(const nlohmann::ordered_json& j, const std::string& file) {
  return ResultReader(file).result(j);
}

Result result_from_json(const nlohmann::json& j, const std::string& file) {
  return ResultReader(file).result(nlohmann::ordered_json(j));
}

nlohmann::ordered_json load_json_document(const std::filesystem::path& path) {
  // Strict (a repeated key, a document nested too deep, a number beyond double's range are all
  // refused, naming the file and pointer), read in chunks; ordered_json keeps the key order.
  return read_json_file(path);
}

std::optional<Result> read_result_file(
    const std::filesystem::path& path,
    const std::function<void(CaseResult&& c, std::size_t index)>& on_case, ojson* other,
    const ResultFileTap& tap) {
  const std::string file = path.string();
  const ResultReader reader(file);
  CaseIds ids(file);
  const auto convert = [&](const ojson& element, std::size_t index) {
    CaseResult c = reader.case_result(element, Pointer() / "cases" / index);
    ids.add(c.id, index);
    if (tap.on_case_json) tap.on_case_json(element, index);
    on_case(std::move(c), index);
  };
  DocumentKind kind = DocumentKind::kUnknown;
  // Cases read before the document said it is a result (a "schema" after "cases": never so in a
  // file pathbench wrote), or the cases of another kind of document that `other` receives.
  std::vector<ojson> held;
  JsonReadOptions options;
  options.max_bytes = tap.max_bytes;
  options.stream_array = "/cases";
  options.on_element = [&](ojson&& element, std::size_t index, const ojson& document) {
    if (kind == DocumentKind::kUnknown) {
      kind = kind_of(document);
      // The fields before the cases are checked before the first case, so that errors come in
      // the file's order, as when the document was read whole. Fields after the cases (a
      // "context" there is valid JSON and a valid result) are checked at the end, with the whole
      // document: the cases go on streaming meanwhile, nothing is held for them.
      if (kind == DocumentKind::kResult || (kind == DocumentKind::kOther && other == nullptr)) {
        reader.header(document, /*whole=*/false);
      }
    }
    if (kind == DocumentKind::kResult) {
      convert(element, index);
    } else {
      held.push_back(std::move(element));
    }
  };
  ojson doc = read_json_file(path, options);
  if (kind_of(doc) != DocumentKind::kResult && other != nullptr) {
    if (!held.empty()) {
      // Put the cases back where they were read from.
      ojson& cases = doc.at("cases");
      for (auto& c : held) cases.push_back(std::move(c));
    }
    *other = std::move(doc);
    return std::nullopt;
  }
  Result r = reader.header(doc);  // the whole document now: fields after the cases too
  for (std::size_t i = 0; i < held.size(); ++i) convert(held[i], i);
  if (tap.header != nullptr) *tap.header = std::move(doc);
  // A run killed since its last save left the cases it finished after it in its journal.
  std::size_t next = ids.size();
  for_each_journal_case(r, path, [&](CaseResult&& c) {
    if (ids.contains(c.id)) return;
    ids.add(c.id, next);
    on_case(std::move(c), next++);
  });
  return r;
}

Result load_result(const std::filesystem::path& path) {
  std::vector<CaseResult> cases;
  Result r =
      *read_result_file(path, [&](CaseResult&& c, std::size_t) { cases.push_back(std::move(c)); });
  r.cases = std::move(cases);
  return r;
}

void save_result(const std::filesystem::path& path, const Result& r) {
  // Invalid UTF-8 (say, from a tool's output in context) is replaced rather than thrown on:
  // losing a whole run's results over one odd byte would be worse.
  const std::string text =
      to_json(r).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  write_file_atomically(path, text);
}

}  // namespace pathbench
