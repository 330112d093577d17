#include "scenario/scenario_file.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <unordered_set>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/json_reader.hpp"
#include "core/json_text.hpp"
#include "core/sha256.hpp"
#include "inventory/gpu_selection.hpp"
#include "result/gate_block.hpp"

namespace pathbench {

namespace {

using json = nlohmann::json;

std::string shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// An integer JSON value that fits in int64 (JSON integers up to 2^64 - 1 parse as unsigned).
std::optional<std::int64_t> as_int64(const json& j) {
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return {};
    return static_cast<std::int64_t>(u);
  }
  if (j.is_number_integer()) return j.get<std::int64_t>();
  return {};
}

// A range object decoded and checked, not expanded: {"pow2": [10, 30, 2]}, {"range": [...]},
// {"numa_nodes": "all"}, {"gpu_pairs": "all"}.
struct RangeSpec {
  std::string kind;
  std::string pointer;  // of the kind's value, e.g. ".../bytes/0/pow2"
  std::int64_t first = 0, last = 0, step = 1;
  std::uint64_t count = 0;  // values it expands to
};

// What the scenarios of one file have asked for so far, against the per-file caps.
struct FileTotals {
  std::uint64_t cases = 0;           // axes products, summed over the scenarios
  std::uint64_t exclude_values = 0;  // values the exclude rules list, summed over the scenarios
};

// Reads one scenario file while tracking where in it we are, so every error names the field.
class FileReader {
 public:
  FileReader(std::string path, const FamilyCatalog& families, const std::vector<int>& numa_nodes,
             const std::vector<int>& gpus)
      : path_(std::move(path)), families_(families), numa_nodes_(numa_nodes), gpus_(gpus) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const {
    throw InputError(path_, pointer, what);
  }

  void require_object(const json& j, const std::string& ptr) const {
    if (!j.is_object()) fail(ptr, "expected an object, found " + json_kind(j));
  }

  void reject_unknown(const json& obj, const std::string& ptr,
                      std::initializer_list<std::string_view> known) const {
    for (const auto& [key, value] : obj.items()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string list;
        for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        fail(ptr + "/" + pointer_token(key), "unknown field (known fields: " + list + ")");
      }
    }
  }

  std::string string_field(const json& obj, const std::string& ptr, const char* key,
                           bool required) const {
    if (!obj.contains(key)) {
      if (required) fail(ptr + "/" + key, "missing required field");
      return {};
    }
    const auto& v = obj.at(key);
    if (!v.is_string()) fail(ptr + "/" + key, "expected a string, found " + json_kind(v));
    if (required && v.get_ref<const std::string&>().empty()) fail(ptr + "/" + key, "is empty");
    return v.get<std::string>();
  }

  Scenario scenario(const json& j, const std::string& ptr, FileTotals& totals,
                    std::vector<std::string>& warnings) const {
    require_object(j, ptr);
    reject_unknown(
        j, ptr,
        {"name", "description", "family", "axes", "exclude", "repetitions", "min_time", "gate"});
    Scenario s;
    s.file = path_;
    s.pointer = ptr;
    s.name = string_field(j, ptr, "name", true);
    // The name is printed on progress lines and in JUnit and text reports, one per line.
    if (std::any_of(s.name.begin(), s.name.end(),
                    [](unsigned char ch) { return ch < 0x20 || ch == 0x7f; })) {
      fail(ptr + "/name",
           "contains a control character (a newline or tab, say): " + json(s.name).dump());
    }
    s.description = string_field(j, ptr, "description", false);
    s.family = string_field(j, ptr, "family", true);
    const FamilySchema* family = families_.find_schema(s.family);
    if (family == nullptr) {
      std::string list;
      for (const auto& n : families_.names()) list += (list.empty() ? "" : ", ") + n;
      fail(ptr + "/family", "unknown family \"" + s.family + "\" (families: " + list + ")");
    }
    if (j.contains("repetitions")) {
      const auto& r = j.at("repetitions");
      const auto n = as_int64(r);
      if (!n || *n < 1 || *n > kMaxRepetitions) {
        fail(ptr + "/repetitions", "expected an integer in [1, " + std::to_string(kMaxRepetitions) +
                                       "], found " + r.dump());
      }
      s.repetitions = static_cast<int>(*n);
    }
    if (j.contains("min_time")) {
      const auto& m = j.at("min_time");
      if (!m.is_number() || !(m.get<double>() > 0) || m.get<double>() > kMaxMinTimeSeconds) {
        fail(ptr + "/min_time",
             "expected seconds in (0, " + shortest(kMaxMinTimeSeconds) + "], found " + m.dump());
      }
      s.min_time = m.get<double>();
    }
    if (j.contains("gate"))
      s.gate = gate(ordered_doc_.at(json::json_pointer(ptr + "/gate")), ptr + "/gate");
    if (!j.contains("axes")) fail(ptr + "/axes", "missing required field");
    const auto& axes = j.at("axes");
    require_object(axes, ptr + "/axes");
    // nlohmann::json sorts object keys; the file's order is what users read, so keep it.
    const std::vector<std::string> axis_names = ordered_keys(ptr + "/axes");
    // A small file must not be able to ask for millions of cases: every axis is counted (ranges
    // unexpanded) and the product checked before any value list is built.
    std::uint64_t product = 1;
    bool overflow = false;
    for (const auto& name : axis_names) {
      const std::string p = ptr + "/axes/" + pointer_token(name);
      const std::uint64_t count =
          count_values(schema_of(*family, name, p), axes.at(name), p, kMaxCasesPerScenario);
      if (count > kMaxCasesPerScenario) {
        fail(p, "the axis expands to more than " + std::to_string(kMaxCasesPerScenario) +
                    " values; a scenario may have at most " + std::to_string(kMaxCasesPerScenario) +
                    " cases");
      }
      overflow = overflow || __builtin_mul_overflow(product, count, &product);
    }
    if (overflow || product > kMaxCasesPerScenario) {
      fail(ptr + "/axes",
           "the axes expand to " +
               (overflow ? "more than " + std::to_string(UINT64_MAX) : std::to_string(product)) +
               " cases; a scenario may have at most " + std::to_string(kMaxCasesPerScenario));
    }
    totals.cases += product;
    if (totals.cases > kMaxCasesPerFile) {
      fail(ptr + "/axes", "the file's scenarios expand to " + std::to_string(totals.cases) +
                              " cases up to this one; a file may have at most " +
                              std::to_string(kMaxCasesPerFile));
    }
    for (const auto& name : axis_names) {
      s.axes.push_back(axis(*family, name, axes.at(name), ptr + "/axes/" + pointer_token(name)));
    }
    for (const auto& required : family->required_axes()) {
      const bool present = std::any_of(s.axes.begin(), s.axes.end(),
                                       [&](const Axis& a) { return a.name == required; });
      if (!present) fail(ptr + "/axes/" + required, "missing required axis of family " + s.family);
    }
    if (j.contains("exclude")) {
      const auto& ex = j.at("exclude");
      if (!ex.is_array()) fail(ptr + "/exclude", "expected an array, found " + json_kind(ex));
      if (ex.size() > kMaxExcludeRules) {
        fail(ptr + "/exclude", std::to_string(ex.size()) + " rules; a scenario may have at most " +
                                   std::to_string(kMaxExcludeRules) + " exclude rules");
      }
      std::uint64_t listed = 0;  // values this scenario's rules list so far
      for (std::size_t i = 0; i < ex.size(); ++i) {
        s.exclude.push_back(
            exclude_rule(*family, s, ex[i], ptr + "/exclude/" + std::to_string(i), listed, totals));
        if (auto why = matches_nothing(s, s.exclude.back())) {
          warnings.push_back(path_ + ": " + s.exclude.back().pointer + ": matches no case (" +
                             *why + ")");
        }
      }
    }
    return s;
  }

  // Why an exclude rule matches no case of the axes' product (a value it lists for some axis is
  // never that axis's value), else nothing.
  static std::optional<std::string> matches_nothing(const Scenario& s, const ExcludeRule& rule) {
    for (const auto& [name, listed] : rule.match) {
      const auto axis = std::find_if(s.axes.begin(), s.axes.end(),
                                     [&name = name](const Axis& a) { return a.name == name; });
      if (axis == s.axes.end()) continue;  // cannot happen: exclude_rule checked the name
      std::unordered_set<std::string> on_axis;
      for (const auto& v : axis->values) on_axis.insert(v.dump());
      const bool any = std::any_of(listed.begin(), listed.end(),
                                   [&](const json& v) { return on_axis.count(v.dump()) > 0; });
      if (!any) {
        return "no value it lists for \"" + name + "\" is a value of that axis";
      }
    }
    return std::nullopt;
  }

  // {"threshold_pct": 5, "metrics": {"name": 10}}: percentages a median may move the bad way,
  // checked by the one rule results and baselines use too (result/gate_block.hpp).
  nlohmann::ordered_json gate(const nlohmann::ordered_json& g, const std::string& ptr) const {
    check_gate_block(g, path_, ptr);
    return g;
  }

  // Key order of an object at `ptr` as it appears in the file text.
  std::vector<std::string> ordered_keys(const std::string& ptr) const {
    const auto& node = ordered_doc_.at(nlohmann::ordered_json::json_pointer(ptr));
    std::vector<std::string> keys;
    for (const auto& [k, v] : node.items()) keys.push_back(k);
    return keys;
  }

  const AxisSchema& schema_of(const FamilySchema& family, const std::string& name,
                              const std::string& ptr) const {
    for (const auto& a : family.axes()) {
      if (a.name == name) return a;
    }
    std::string list;
    for (const auto& a : family.axes()) list += (list.empty() ? "" : ", ") + a.name;
    fail(ptr, "unknown axis \"" + name + "\" for family " + std::string(family.name()) +
                  " (axes: " + list + ")");
  }

  // How many values a value list holds (scalars count one, range objects what they expand to),
  // found without building any of them; range objects are checked on the way. Stops counting as
  // soon as the count passes `limit` (the caller says what that means).
  std::uint64_t count_values(const AxisSchema& schema, const json& j, const std::string& ptr,
                             std::uint64_t limit) const {
    if (j.is_object()) return range_spec(schema, j, ptr).count;
    if (!j.is_array()) return 1;
    std::uint64_t count = 0;
    for (std::size_t i = 0; i < j.size() && count <= limit; ++i) {
      // Each term is at most max(kMaxValuesPerRange, GPU pairs, NUMA nodes): no overflow.
      count += j[i].is_object() ? range_spec(schema, j[i], ptr + "/" + std::to_string(i)).count : 1;
    }
    return count;
  }

  // A value list: scalars and range objects, or a single range object. Callers count it first
  // (count_values), so what is built here is bounded.
  std::vector<json> values(const AxisSchema& schema, const json& j, const std::string& ptr) const {
    std::vector<json> out;
    if (j.is_object()) {
      expand_range(schema, j, ptr, out);
    } else if (j.is_array()) {
      for (std::size_t i = 0; i < j.size(); ++i) {
        const std::string p = ptr + "/" + std::to_string(i);
        if (j[i].is_object()) {
          expand_range(schema, j[i], p, out);
        } else {
          out.push_back(scalar(schema, j[i], p));
        }
      }
    } else {
      out.push_back(scalar(schema, j, ptr));
    }
    if (out.empty()) fail(ptr, "axis has no values");
    return out;
  }

  json scalar(const AxisSchema& schema, const json& v, const std::string& ptr) const {
    json value = v;
    if (schema.kind == AxisSchema::Kind::kInteger && v.is_string()) {
      try {
        value = parse_size(v.get_ref<const std::string&>());
      } catch (const std::invalid_argument& e) {
        fail(ptr, e.what());
      }
    }
    if (auto problem = check_axis_value(schema, value)) fail(ptr, *problem);
    return value;
  }

  // Decodes and checks a range object; counts its values without expanding it.
  RangeSpec range_spec(const AxisSchema& schema, const json& r, const std::string& ptr) const {
    if (r.size() != 1) {
      fail(ptr, "a range object has exactly one of: pow2, range, numa_nodes, gpu_pairs");
    }
    RangeSpec range;
    // Copies, not a structured binding: items() hands out a temporary proxy whose key would
    // dangle (AddressSanitizer: stack-use-after-scope).
    range.kind = r.begin().key();
    const json& spec = r.front();  // the value of that one key
    const std::string& kind = range.kind;
    const std::string p = ptr + "/" + pointer_token(kind);
    range.pointer = p;
    if (kind == "gpu_pairs") {
      // Every ordered pair "S-D" of the selected GPUs. With fewer than two the axis still has one
      // value, "none", so the scenario's cases exist and are skipped with the reason.
      if (schema.kind != AxisSchema::Kind::kString) fail(p, "gpu_pairs applies to string axes");
      if (spec != "all") fail(p, "expected \"all\", found " + spec.dump());
      const std::uint64_t n = gpus_.size();
      range.count = n < 2 ? 1 : n * (n - 1);
      return range;
    }
    if (schema.kind != AxisSchema::Kind::kInteger) {
      fail(p, "pow2, range and numa_nodes ranges apply to integer axes only");
    }
    if (kind == "numa_nodes") {
      if (spec != "all") fail(p, "expected \"all\", found " + spec.dump());
      range.count = numa_nodes_.size();
      return range;
    }
    if (kind != "pow2" && kind != "range") {
      fail(p, "unknown range kind (expected pow2, range, numa_nodes or gpu_pairs)");
    }
    if (!spec.is_array() || spec.size() < 2 || spec.size() > 3 ||
        !std::all_of(spec.begin(), spec.end(), [](const json& x) { return x.is_number_integer(); }))
      fail(p, "expected [first, last] or [first, last, step] integers, found " + spec.dump());
    std::int64_t bounds[3] = {0, 0, 1};
    for (std::size_t i = 0; i < spec.size(); ++i) {
      const auto v = as_int64(spec[i]);
      if (!v) {
        fail(p + "/" + std::to_string(i),
             spec[i].dump() + " is beyond the 64-bit signed integer range");
      }
      bounds[i] = *v;
    }
    range.first = bounds[0];
    range.last = bounds[1];
    range.step = bounds[2];
    if (range.step <= 0) fail(p + "/2", "step must be positive");
    if (range.last < range.first) fail(p + "/1", "last is smaller than first");
    if (kind == "pow2" && (range.first < 0 || range.last > 62)) {
      fail(p, "exponents must be in [0, 62]");
    }
    // In unsigned arithmetic: last - first and first + i * step can exceed int64 (signed
    // overflow is undefined), but never uint64 once last >= first and i * step <= last - first.
    const std::uint64_t span =
        static_cast<std::uint64_t>(range.last) - static_cast<std::uint64_t>(range.first);
    const std::uint64_t steps = span / static_cast<std::uint64_t>(range.step);
    if (steps >= kMaxValuesPerRange) {
      fail(p, "range expands to more than " + std::to_string(kMaxValuesPerRange) + " values");
    }
    range.count = steps + 1;
    return range;
  }

  void expand_range(const AxisSchema& schema, const json& r, const std::string& ptr,
                    std::vector<json>& out) const {
    const RangeSpec range = range_spec(schema, r, ptr);
    const std::string& p = range.pointer;
    if (range.kind == "gpu_pairs") {
      const auto pairs = gpu_pair_values(gpus_);
      if (pairs.empty()) out.push_back(scalar(schema, kNoGpuPair, p));
      for (const auto& pair : pairs) out.push_back(scalar(schema, pair, p));
      return;
    }
    if (range.kind == "numa_nodes") {
      for (int n : numa_nodes_) out.push_back(scalar(schema, n, p));
      return;
    }
    for (std::uint64_t i = 0; i < range.count; ++i) {
      const auto x = static_cast<std::int64_t>(static_cast<std::uint64_t>(range.first) +
                                               i * static_cast<std::uint64_t>(range.step));
      out.push_back(scalar(schema, range.kind == "pow2" ? (std::int64_t{1} << x) : x, p));
    }
  }

  Axis axis(const FamilySchema& family, const std::string& name, const json& j,
            const std::string& ptr) const {
    const AxisSchema& schema = schema_of(family, name, ptr);
    Axis a{name, values(schema, j, ptr), ptr};
    // A plain list maps value i to element i, so the duplicate itself can be named.
    const bool plain_list = j.is_array() && std::none_of(j.begin(), j.end(), [](const json& x) {
                              return x.is_object();
                            });
    std::set<std::string> seen;
    for (std::size_t i = 0; i < a.values.size(); ++i) {
      if (!seen.insert(a.values[i].dump()).second) {
        fail(plain_list ? ptr + "/" + std::to_string(i) : ptr,
             "value " + a.values[i].dump() + " appears twice");
      }
    }
    return a;
  }

  // `listed`: values the scenario's earlier rules list; this rule's are added to it (and to the
  // file's totals) and checked against kMaxExcludeValues (kMaxExcludeValuesPerFile) before any
  // list is built.
  ExcludeRule exclude_rule(const FamilySchema& family, const Scenario& s, const json& j,
                           const std::string& ptr, std::uint64_t& listed,
                           FileTotals& totals) const {
    require_object(j, ptr);
    if (j.empty()) fail(ptr, "an empty rule would exclude every case");
    ExcludeRule rule;
    rule.pointer = ptr;
    for (const auto& [name, value] : j.items()) {
      const std::string p = ptr + "/" + pointer_token(name);
      const bool on_axis = std::any_of(s.axes.begin(), s.axes.end(),
                                       [&name = name](const Axis& a) { return a.name == name; });
      if (!on_axis) fail(p, "\"" + name + "\" is not an axis of this scenario");
      const AxisSchema& schema = schema_of(family, name, p);
      const std::uint64_t count = count_values(schema, value, p, kMaxExcludeValues - listed);
      listed += count;
      totals.exclude_values += count;
      if (listed > kMaxExcludeValues) {
        fail(p, "the exclude rules list more than " + std::to_string(kMaxExcludeValues) +
                    " values in all; a scenario's rules may list at most " +
                    std::to_string(kMaxExcludeValues));
      }
      if (totals.exclude_values > kMaxExcludeValuesPerFile) {
        fail(p, "the file's exclude rules list more than " +
                    std::to_string(kMaxExcludeValuesPerFile) +
                    " values in all; a file's rules may list at most " +
                    std::to_string(kMaxExcludeValuesPerFile));
      }
      rule.match[name] = values(schema, value, p);
    }
    return rule;
  }

  ScenarioFile parse(std::string_view text) {
    if (json_nesting_depth(text) > kMaxJsonDepth) {
      fail("", "nesting deeper than " + std::to_string(kMaxJsonDepth) +
                   " levels; a scenario file is never that deep");
    }
    try {
      ordered_doc_ = parse_json_text(text, path_);  // strict: a repeated key is refused
    } catch (const json::parse_error& e) {
      fail("", std::string("not valid JSON: ") + e.what());
    } catch (const json::exception& e) {
      // Also malformed: a number beyond double's range ("1e999") is out_of_range, not a parse
      // error, and must not escape as a failure of the run (exit 1).
      fail("", std::string("not valid JSON: ") + e.what());
    }
    const json doc = json(ordered_doc_);
    require_object(doc, "");
    reject_unknown(doc, "", {"schema", "description", "scenarios"});
    const std::string schema = string_field(doc, "", "schema", true);
    if (schema != kScenarioSchema) {
      fail("/schema",
           "expected \"" + std::string(kScenarioSchema) + "\", found \"" + schema + "\"");
    }
    string_field(doc, "", "description", false);
    if (!doc.contains("scenarios")) fail("/scenarios", "missing required field");
    const auto& list = doc.at("scenarios");
    if (!list.is_array()) fail("/scenarios", "expected an array, found " + json_kind(list));
    if (list.empty()) fail("/scenarios", "no scenarios");
    ScenarioFile file;
    file.path = path_;
    file.sha256 = sha256_hex(text);
    std::set<std::string> names;
    FileTotals totals;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string ptr = "/scenarios/" + std::to_string(i);
      file.scenarios.push_back(scenario(list[i], ptr, totals, file.warnings));
      if (!names.insert(file.scenarios.back().name).second) {
        fail(ptr + "/name", "scenario name \"" + file.scenarios.back().name + "\" appears twice");
      }
    }
    return file;
  }

 private:
  std::string path_;
  const FamilyCatalog& families_;
  const std::vector<int>& numa_nodes_;
  const std::vector<int>& gpus_;
  nlohmann::ordered_json ordered_doc_;
};

}  // namespace

std::int64_t parse_size(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  const std::size_t digits_start = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == digits_start) {
    throw std::invalid_argument("\"" + std::string(text) +
                                "\" is not a size (e.g. 4096, \"64KiB\")");
  }
  const std::string digits(text.substr(digits_start, i - digits_start));
  if (digits.size() > 15) throw std::invalid_argument("\"" + std::string(text) + "\" is too large");
  std::int64_t value = std::stoll(digits);
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::string unit(text.substr(i));
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  static const std::pair<const char*, int> kUnits[] = {{"", 0},     {"B", 0},    {"KiB", 10},
                                                       {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};
  for (const auto& [name, shift] : kUnits) {
    if (unit == name) {
      if (value > (std::int64_t{1} << (62 - shift))) {
        throw std::invalid_argument("\"" + std::string(text) + "\" is too large");
      }
      return value << shift;
    }
  }
  throw std::invalid_argument("\"" + std::string(text) +
                              "\" has an unknown unit (use B, KiB, MiB, GiB or TiB)");
}

ScenarioFile parse_scenario_file(const std::string& path, std::string_view text,
                                 const FamilyCatalog& families, const std::vector<int>& numa_nodes,
                                 const std::vector<int>& gpus) {
  FileReader reader(path, families, numa_nodes, gpus);
  return reader.parse(text);
}

ScenarioFile load_scenario_file(const std::filesystem::path& path, const FamilyCatalog& families,
                                const std::vector<int>& numa_nodes, const std::vector<int>& gpus) {
  std::string text;
  try {
    text = read_text_file(path, kMaxScenarioFileBytes);
  } catch (const std::exception& e) {
    throw InputError(path.string(), "", std::string("cannot read: ") + e.what());
  }
  return parse_scenario_file(path.string(), text, families, numa_nodes, gpus);
}

namespace {

std::string describe_file_type(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::fifo:
      return "a FIFO";
    case std::filesystem::file_type::character:
      return "a character device";
    case std::filesystem::file_type::block:
      return "a block device";
    case std::filesystem::file_type::socket:
      return "a socket";
    case std::filesystem::file_type::directory:
      return "a directory";
    default:
      return "not a regular file";
  }
}

}  // namespace

std::vector<std::filesystem::path> collect_scenario_paths(
    const std::vector<std::string>& files_or_dirs) {
  std::vector<std::filesystem::path> out;
  for (const auto& arg : files_or_dirs) {
    const std::filesystem::path p(arg);
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::filesystem::path> in_dir;
      std::filesystem::directory_iterator it(p, ec);
      if (ec) throw InputError(arg, "", "cannot list the directory: " + ec.message());
      for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
        if (ec) throw InputError(arg, "", "cannot list the directory: " + ec.message());
        if (it->path().extension() != ".json") continue;
        std::error_code entry_error;  // a symlink loop, a dangling link: bad input, named
        const auto status = it->status(entry_error);
        if (entry_error) {
          throw InputError(it->path().string(), "", "cannot read: " + entry_error.message());
        }
        // A folder named *.json is no scenario file and not one the user named: left out. Anything
        // else that is not a regular file (a FIFO, a device, a socket, also behind a link) is bad
        // input, as it is when named directly: the loader refuses it, naming it, before anything
        // runs (read_text_file never opens such a file for reading in a way that blocks).
        if (status.type() == std::filesystem::file_type::directory) continue;
        if (status.type() != std::filesystem::file_type::regular) {
          throw InputError(it->path().string(), "",
                           "cannot read: " + describe_file_type(status.type()) +
                               ", not a regular file; a scenario directory's *.json files must be "
                               "regular files");
        }
        in_dir.push_back(it->path());
      }
      std::sort(in_dir.begin(), in_dir.end());
      if (in_dir.empty()) throw InputError(arg, "", "directory holds no *.json scenario files");
      out.insert(out.end(), in_dir.begin(), in_dir.end());
    } else if (std::filesystem::exists(p, ec)) {
      out.push_back(p);
    } else if (ec) {
      // Not a missing file: a symlink loop, a directory on the way that may not be searched.
      throw InputError(arg, "", "cannot read: " + ec.message());
    } else {
      throw InputError(arg, "", "no such file or directory");
    }
  }
  return out;
}

}  // namespace pathbench
