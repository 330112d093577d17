// Scenario files: parsing, validation with JSON pointers, range expansion, exclusion, case ids.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "bench/families.hpp"
#include "core/errors.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"
#include "tests/unit/source_paths.hpp"

namespace pathbench::test_scenario {
namespace {

// A family with every kind of axis, so expansion is tested apart from the real families.
class ToyFamily final : public Family {
 public:
  std::string_view name() const override { return "toy"; }
  std::string_view description() const override { return "test family"; }
  const std::vector<AxisSchema>& axes() const override {
    static const std::vector<AxisSchema> kAxes = {
        {"mode", AxisSchema::Kind::kString, {"a", "b", "c"}, 0, 0, ""},
        {"bytes", AxisSchema::Kind::kInteger, {}, 1, std::int64_t{1} << 40, ""},
        {"node", AxisSchema::Kind::kInteger, {}, 0, 1023, ""},
        // Wide axes, so a product beyond 2^64 can be written.
        {"x", AxisSchema::Kind::kInteger, {}, 0, INT64_MAX, ""},
        {"y", AxisSchema::Kind::kInteger, {}, 0, INT64_MAX, ""},
        {"z", AxisSchema::Kind::kInteger, {}, 0, INT64_MAX, ""},
    };
    return kAxes;
  }
  std::vector<std::string> required_axes() const override { return {"mode"}; }
  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    if (spec.has("bytes") && spec.str("mode") == "c" && spec.integer("bytes") == 8) {
      return "mode c cannot move 8 bytes";
    }
    return std::nullopt;
  }
  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    return {spec.has("bytes") ? static_cast<std::uint64_t>(spec.integer("bytes")) : 0, 0};
  }
  Requirements requirements(const CaseSpec&) const override { return {}; }
  std::unique_ptr<CaseBench> prepare(const CaseSpec&, const Machine&, int) const override {
    return nullptr;
  }
  // Mode b cases also record "latency"; one per-GPU metric with a placeholder.
  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override {
    std::vector<std::string> names = {"speed", "speed_gpu<N>"};
    if (spec.str("mode") == "b") names.push_back("latency");
    return names;
  }
};

FamilyRegistry toy_registry() {
  FamilyRegistry r;
  r.add(std::make_unique<ToyFamily>());
  return r;
}

ScenarioFile parse(const std::string& text, std::vector<int> nodes = {0}) {
  static const FamilyRegistry registry = toy_registry();
  return parse_scenario_file("s.json", text, registry, nodes);
}

std::string wrap(const std::string& scenario) {
  return R"({"schema": "pathbench.scenario/v1", "scenarios": [)" + scenario + "]}";
}

// The error's pointer, or "no error".
std::string error_pointer(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "s.json");
    EXPECT_NE(std::string(e.what()).find("s.json: " + e.pointer()), std::string::npos) << e.what();
    return e.pointer();
  }
  return "no error";
}

TEST(ScenarioFile, ParsesFieldsAndKeepsAxisOrderOfTheFile) {
  const auto file = parse(wrap(R"({"name": "n", "description": "d", "family": "toy",
      "repetitions": 4, "min_time": 0.5,
      "axes": {"mode": ["b", "a"], "bytes": [4096, "1KiB"]}})"));
  ASSERT_EQ(file.scenarios.size(), 1u);
  const Scenario& s = file.scenarios[0];
  EXPECT_EQ(s.name, "n");
  EXPECT_EQ(s.description, "d");
  EXPECT_EQ(s.repetitions, 4);
  EXPECT_DOUBLE_EQ(s.min_time, 0.5);
  EXPECT_EQ(s.pointer, "/scenarios/0");
  ASSERT_EQ(s.axes.size(), 2u);
  EXPECT_EQ(s.axes[0].name, "mode");  // file order, not alphabetical
  EXPECT_EQ(s.axes[1].name, "bytes");
  EXPECT_EQ(s.axes[1].values[1], 1024);
  EXPECT_EQ(s.axes[1].pointer, "/scenarios/0/axes/bytes");
  EXPECT_EQ(file.sha256.size(), 64u);
}

TEST(ScenarioFile, DefaultsApplyWhenRepetitionsAndMinTimeAreAbsent) {
  const auto s =
      parse(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a"}})")).scenarios[0];
  EXPECT_EQ(s.repetitions, 9);
  EXPECT_DOUBLE_EQ(s.min_time, 0.05);
  ASSERT_EQ(s.axes[0].values.size(), 1u);
}

TEST(ScenarioFile, Pow2AndLinearRangesExpand) {
  const auto s = parse(wrap(R"({"name": "n", "family": "toy",
      "axes": {"mode": "a", "bytes": [{"pow2": [10, 30, 2]}, 3], "node": {"range": [2, 6, 2]}}})"))
                     .scenarios[0];
  std::vector<std::int64_t> bytes;
  for (const auto& v : s.axes[1].values) bytes.push_back(v.get<std::int64_t>());
  const std::vector<std::int64_t> expected = {1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20,
                                              1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30, 3};
  EXPECT_EQ(bytes, expected);
  EXPECT_EQ(s.axes[2].values, (std::vector<nlohmann::json>{2, 4, 6}));
}

// Ranges at the edges of int64: counted and stepped without signed overflow (UBSan flagged
// last - first and x += step here), and a range object's kind read without a dangling key.
TEST(ScenarioFile, RangesAtTheEdgesOfInt64DoNotOverflow) {
  const auto t = parse(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a",
      "bytes": {"range": [4096, 9223372036854775807, 9223372036854775807]}}})"))
                     .scenarios[0];
  EXPECT_EQ(t.axes[1].values, (std::vector<nlohmann::json>{4096}));
  // Counted across the whole int64 range: too many values, said before anything is expanded.
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a",
      "node": {"range": [-9223372036854775807, 9223372036854775807]}}})")),
            "/scenarios/0/axes/node/range");
  // Three values from one end to the other: the first is out of the axis's bounds.
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a",
      "node": {"range": [-9223372036854775807, 9223372036854775807, 9223372036854775807]}}})")),
            "/scenarios/0/axes/node/range");
}

TEST(ScenarioFile, NumberBeyondDoubleIsBadInputNotAFailure) {
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "toy", "repetitions": 1e999,
      "axes": {"mode": "a"}})")),
            "");
}

TEST(ScenarioFile, NumaNodesAllExpandsToTheMachinesNodes) {
  const auto s = parse(wrap(R"({"name": "n", "family": "toy",
      "axes": {"mode": "a", "node": {"numa_nodes": "all"}}})"),
                       {0, 1, 3})
                     .scenarios[0];
  EXPECT_EQ(s.axes[1].values, (std::vector<nlohmann::json>{0, 1, 3}));
}

TEST(ParseSize, AcceptsIntegersAndBinaryUnits) {
  EXPECT_EQ(parse_size("4096"), 4096);
  EXPECT_EQ(parse_size("4KiB"), 4096);
  EXPECT_EQ(parse_size("256 MiB"), 256ll << 20);
  EXPECT_EQ(parse_size("1GiB"), 1ll << 30);
  EXPECT_EQ(parse_size("2TiB"), 2ll << 40);
  EXPECT_EQ(parse_size("12B"), 12);
  EXPECT_THROW(parse_size("4KB"), std::invalid_argument);  // decimal units are ambiguous: refused
  EXPECT_THROW(parse_size("lots"), std::invalid_argument);
  EXPECT_THROW(parse_size(""), std::invalid_argument);
  EXPECT_THROW(parse_size("99999999999999999999"), std::invalid_argument);
}

TEST(ScenarioFile, EveryErrorNamesTheFieldsPointer) {
  EXPECT_EQ(error_pointer("{nope"), "");
  EXPECT_EQ(error_pointer(R"({"schema": "v0", "scenarios": []})"), "/schema");
  EXPECT_EQ(error_pointer(R"({"schema": "pathbench.scenario/v1"})"), "/scenarios");
  EXPECT_EQ(error_pointer(R"({"schema": "pathbench.scenario/v1", "scenarios": []})"), "/scenarios");
  EXPECT_EQ(error_pointer(R"({"schema": "pathbench.scenario/v1", "scenarios": [], "x": 1})"), "/x");
  EXPECT_EQ(
      error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a"}, "color": 1})")),
      "/scenarios/0/color");
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "nope", "axes": {}})")),
            "/scenarios/0/family");
  EXPECT_EQ(error_pointer(wrap(R"({"family": "toy", "axes": {"mode": "a"}})")),
            "/scenarios/0/name");
  EXPECT_EQ(error_pointer(
                wrap(R"({"name": "n", "family": "toy", "repetitions": 0, "axes": {"mode": "a"}})")),
            "/scenarios/0/repetitions");
  EXPECT_EQ(error_pointer(
                wrap(R"({"name": "n", "family": "toy", "min_time": "1", "axes": {"mode": "a"}})")),
            "/scenarios/0/min_time");
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "toy"})")), "/scenarios/0/axes");
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"bytes": 1}})")),
            "/scenarios/0/axes/mode");
  EXPECT_EQ(
      error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a", "speed": [1]}})")),
      "/scenarios/0/axes/speed");
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": []}})")),
            "/scenarios/0/axes/mode");
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": ["a", "z"]}})")),
            "/scenarios/0/axes/mode/1");
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": ["a", 3]}})")),
            "/scenarios/0/axes/mode/1");
  EXPECT_EQ(
      error_pointer(wrap(
          R"({"name": "n", "family": "toy", "axes": {"mode": "a", "bytes": [1, "1 parsec"]}})")),
      "/scenarios/0/axes/bytes/1");
  EXPECT_EQ(
      error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a", "bytes": [0]}})")),
      "/scenarios/0/axes/bytes/0");
  EXPECT_EQ(
      error_pointer(wrap(
          R"({"name": "n", "family": "toy", "axes": {"mode": "a", "bytes": {"pow2": [30, 10]}}})")),
      "/scenarios/0/axes/bytes/pow2/1");
  EXPECT_EQ(
      error_pointer(wrap(
          R"({"name": "n", "family": "toy", "axes": {"mode": "a", "bytes": {"pow3": [1, 2]}}})")),
      "/scenarios/0/axes/bytes/pow3");
  EXPECT_EQ(
      error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": {"pow2": [1, 2]}}})")),
      "/scenarios/0/axes/mode/pow2");
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": ["a", "a"]}})")),
            "/scenarios/0/axes/mode/1");
  // After a range, value positions no longer map to elements: the axis is named.
  EXPECT_EQ(
      error_pointer(wrap(
          R"({"name": "n", "family": "toy", "axes": {"mode": "a", "bytes": [{"pow2": [2, 3]}, 4]}})")),
      "/scenarios/0/axes/bytes");
  EXPECT_EQ(
      error_pointer(wrap(
          R"({"name": "n", "family": "toy", "axes": {"mode": "a"}, "exclude": [{"bytes": 1}]})")),
      "/scenarios/0/exclude/0/bytes");
  EXPECT_EQ(error_pointer(
                wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a"}, "exclude": [{}]})")),
            "/scenarios/0/exclude/0");
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a"}},
                                  {"name": "n", "family": "toy", "axes": {"mode": "b"}})")),
            "/scenarios/1/name");
}

TEST(Expansion, CartesianProductMinusExclusionsInFileOrder) {
  const auto s = parse(wrap(R"({"name": "n", "family": "toy",
      "axes": {"mode": ["a", "b", "c"], "bytes": [8, 16]},
      "exclude": [{"mode": "b", "bytes": 16}, {"mode": ["c"]}]})"))
                     .scenarios[0];
  const auto cases = expand(s);
  std::vector<std::string> ids;
  for (const auto& c : cases) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"toy/mode=a/bytes=8", "toy/mode=a/bytes=16",
                                           "toy/mode=b/bytes=8"}));
  EXPECT_EQ(cases[0].scenario, "n");
  EXPECT_EQ(cases[0].family, "toy");
  EXPECT_EQ(cases[0].file, "s.json");
  EXPECT_EQ(cases[0].str("mode"), "a");
  EXPECT_EQ(cases[0].integer("bytes"), 8);
  EXPECT_EQ(cases[0].repetitions, 9);
}

TEST(Expansion, CaseIdsAreStableAcrossParses) {
  const std::string text = wrap(R"({"name": "n", "family": "toy",
      "axes": {"bytes": {"pow2": [2, 6, 2]}, "mode": ["c", "a"]}})");
  const auto first = expand(parse(text).scenarios[0]);
  const auto second = expand(parse(text).scenarios[0]);
  ASSERT_EQ(first.size(), 6u);
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].id, second[i].id);
  EXPECT_EQ(first[0].id, "toy/bytes=4/mode=c");
  EXPECT_EQ(case_id("copy", nlohmann::ordered_json{{"direction", "h2d"}, {"bytes", 4}}),
            "copy/direction=h2d/bytes=4");
}

TEST(Validation, RejectsInvalidCombinationsOversizedCasesAndEmptyExpansions) {
  const ToyFamily family;
  Machine machine;
  machine.mem_available_bytes = 1 << 20;
  const auto combo =
      parse(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "c", "bytes": 8}})"))
          .scenarios[0];
  try {
    validate_cases(combo, expand(combo), family, machine, 0);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/scenarios/0/axes");
    EXPECT_NE(std::string(e.what()).find("mode c cannot move 8 bytes"), std::string::npos);
  }
  const auto big =
      parse(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a", "bytes": "2MiB"}})"))
          .scenarios[0];
  try {
    validate_cases(big, expand(big), family, machine, 0);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/scenarios/0/axes/bytes");
    EXPECT_NE(std::string(e.what()).find("host memory"), std::string::npos) << e.what();
  }
  const auto none =
      parse(
          wrap(
              R"({"name": "n", "family": "toy", "axes": {"mode": "a"}, "exclude": [{"mode": "a"}]})"))
          .scenarios[0];
  EXPECT_TRUE(expand(none).empty());
  EXPECT_THROW(validate_cases(none, expand(none), family, machine, 0), InputError);
  const auto fits =
      parse(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a", "bytes": "1KiB"}})"))
          .scenarios[0];
  EXPECT_NO_THROW(validate_cases(fits, expand(fits), family, machine, 0));
}

TEST(ShippedScenarios, EveryFileInScenariosParsesWithTheRealFamilies) {
  const FamilyRegistry families = builtin_families();
  const auto paths = collect_scenario_paths({std::string(PATHBENCH_SOURCE_DIR) + "/scenarios"});
  ASSERT_GE(paths.size(), 3u);
  for (const auto& p : paths) {
    const auto file = load_scenario_file(p, families, {0, 1});
    for (const auto& s : file.scenarios) {
      EXPECT_FALSE(expand(s).empty()) << p << " " << s.name;
      for (const auto& c : expand(s)) {
        EXPECT_FALSE(families.find(s.family)->invalid_combination(c).has_value()) << c.id;
      }
    }
  }
}

}  // namespace
}  // namespace pathbench::test_scenario

namespace pathbench::test_scenario {
namespace {

TEST(ScenarioFile, PointersEscapeKeysAndNameTheDuplicateElement) {
  EXPECT_EQ(
      error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a", "a/b~c": [1]}})")),
      "/scenarios/0/axes/a~1b~0c");
  EXPECT_EQ(
      error_pointer(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": ["a", "b", "a"]}})")),
      "/scenarios/0/axes/mode/2");
}

TEST(ScenarioFile, RefusesHostileNestingAndHugeExpansions) {
  const std::string deep = R"({"schema": "pathbench.scenario/v1", "scenarios": )" +
                           std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_EQ(error_pointer(deep), "");
  EXPECT_EQ(error_pointer(wrap(R"({"name": "n", "family": "toy",
      "axes": {"mode": "a", "node": {"range": [0, 1000]}, "bytes": {"range": [1, 4000]}}})")),
            "/scenarios/0/axes");
}

}  // namespace
}  // namespace pathbench::test_scenario

namespace pathbench::test_scenario {
namespace {

std::string error_message(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `count` copies of `item`, comma-separated.
std::string repeated(const std::string& item, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += (i ? ", " : "") + item;
  return out;
}

long max_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// The audit's file: 6,000 range objects of 4,096 values each in one axis took 2.3 GB and 22 s
// before the case cap refused it. Now the axis is counted, not expanded.
TEST(ScenarioBounds, ManyRangeObjectsAreCountedNotExpanded) {
  const std::string text = wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a",
      "bytes": [)" + repeated(R"({"range": [1, 4096]})", 6000) +
                                "]}}");
  const long rss_before = max_rss_kib();
  const auto start = std::chrono::steady_clock::now();
  const std::string what = error_message(text);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(contains(what,
                       "s.json: /scenarios/0/axes/bytes: the axis expands to more than "
                       "20000 values"))
      << what;
  // Not a timing or memory assertion (sanitizer builds are slow): a record of what it took.
  RecordProperty("seconds", std::to_string(seconds));
  RecordProperty("max_rss_growth_kib", std::to_string(max_rss_kib() - rss_before));
  // The same with the ranges spread over the value list of an exclude rule.
  const std::string rule = wrap(R"({"name": "n", "family": "toy",
      "axes": {"mode": "a", "bytes": [1, 2]}, "exclude": [{"bytes": [)" +
                                repeated(R"({"range": [1, 4096]})", 6000) + "]}]}");
  EXPECT_TRUE(contains(error_message(rule),
                       "s.json: /scenarios/0/exclude/0/bytes: the exclude rules list more than "
                       "20000 values in all"))
      << error_message(rule);
}

TEST(ScenarioBounds, TheProductOfTheAxesIsCheckedWithoutOverflow) {
  // 3 x 4000 x 20000^4 > 2^64: said as such, not wrapped to a small number that passes. (A range
  // object holds at most 4096 values: 20000 take five.)
  const std::string wide = "[" + repeated(R"({"range": [0, 3999]})", 5) + "]";
  const std::string text =
      wrap(R"({"name": "n", "family": "toy", "axes": {"mode": ["a", "b", "c"],
      "bytes": {"range": [1, 4000]}, "node": )" +
           wide + R"(, "x": )" + wide + R"(, "y": )" + wide + R"(, "z": )" + wide + "}}");
  // Each wide axis alone is within the cap; their product is not.
  const std::string what = error_message(text);
  EXPECT_TRUE(contains(what,
                       "s.json: /scenarios/0/axes: the axes expand to more than "
                       "18446744073709551615 cases"))
      << what;
  // Just within the cap: 4 x 5000 = 20000 cases.
  const std::string y5000 = R"([{"range": [1, 2500]}, {"range": [2501, 5000]}])";
  const auto s = parse(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a",
      "x": {"range": [1, 4]}, "y": )" +
                            y5000 + "}}"))
                     .scenarios[0];
  EXPECT_EQ(expand(s).size(), 20000u);
  EXPECT_TRUE(contains(error_message(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": "a",
      "x": {"range": [1, 4]}, "y": [{"range": [1, 2500]}, {"range": [2501, 5000]}, 5001]}})")),
                       "/scenarios/0/axes: the axes expand to 20004 cases; a scenario may have at "
                       "most 20000"));
}

TEST(ScenarioBounds, ExpandRefusesAScenarioBeyondTheCapsBuiltOtherwise) {
  Scenario s;
  s.file = "built.json";
  s.pointer = "/scenarios/0";
  s.family = "toy";
  Axis a{"x", {}, "/scenarios/0/axes/x"};
  for (int i = 0; i < 200; ++i) a.values.push_back(i);
  for (const char* name : {"x", "y"}) {
    a.name = name;
    s.axes.push_back(a);
  }
  EXPECT_THROW(expand(s), InputError) << "200 x 200 is 40000 cases, beyond 20000";
  s.axes.pop_back();
  EXPECT_EQ(expand(s).size(), 200u);
  for (std::size_t i = 0; i <= kMaxExcludeRules; ++i) {
    s.exclude.push_back({{{"x", {static_cast<int>(i % 200)}}}, "/scenarios/0/exclude/0"});
  }
  EXPECT_THROW(expand(s), InputError) << "257 exclude rules";
}

TEST(ScenarioBounds, ExcludeRulesAreCappedInNumberAndValues) {
  const std::string rules = repeated(R"({"bytes": 1})", kMaxExcludeRules);
  EXPECT_NO_THROW(parse(wrap(R"({"name": "n", "family": "toy",
      "axes": {"mode": "a", "bytes": [1, 2]}, "exclude": [)" +
                             rules + "]}")));
  const std::string too_many = error_message(wrap(R"({"name": "n", "family": "toy",
      "axes": {"mode": "a", "bytes": [1, 2]}, "exclude": [)" +
                                                  rules + R"(, {"bytes": 1}]})"));
  EXPECT_TRUE(contains(too_many,
                       "s.json: /scenarios/0/exclude: 257 rules; a scenario may have at "
                       "most 256 exclude rules"))
      << too_many;
  // Values in all, over every rule: 200 rules of 100 values fit, one more value does not.
  const std::string hundred = R"({"bytes": {"range": [1, 100]}})";
  EXPECT_NO_THROW(parse(wrap(R"({"name": "n", "family": "toy",
      "axes": {"mode": "a", "bytes": [1, 2]}, "exclude": [)" +
                             repeated(hundred, 200) + "]}")));
  const std::string over = error_message(wrap(R"({"name": "n", "family": "toy",
      "axes": {"mode": "a", "bytes": [1, 2]}, "exclude": [)" +
                                              repeated(hundred, 200) + R"(, {"bytes": 1}]})"));
  EXPECT_TRUE(contains(over,
                       "s.json: /scenarios/0/exclude/200/bytes: the exclude rules list more "
                       "than 20000 values"))
      << over;
}

TEST(ScenarioBounds, AFileIsCappedInCasesAndExcludeValuesOverItsScenarios) {
  // `n` scenarios of 4 x `y` cases each, with `extra` fields.
  const auto scenarios = [](std::size_t n, int y, const std::string& extra) {
    std::string list;
    for (std::size_t i = 0; i < n; ++i) {
      list += (i ? ", " : "") + std::string(R"({"name": "n)") + std::to_string(i) +
              R"(", "family": "toy", "axes": {"mode": "a", "x": {"range": [1, 4]}, "y": [)" +
              R"({"range": [1, )" + std::to_string(y / 2) + R"(]}, {"range": [)" +
              std::to_string(y / 2 + 1) + ", " + std::to_string(y) + "]}]}" + extra + "}";
    }
    return R"({"schema": "pathbench.scenario/v1", "scenarios": [)" + list + "]}";
  };
  // Each scenario at the per-scenario cap: five fit in a file (100000 cases), a sixth does not.
  EXPECT_EQ(parse(scenarios(5, 5000, "")).scenarios.size(), 5u);
  std::string what = error_message(scenarios(6, 5000, ""));
  EXPECT_TRUE(contains(what,
                       "s.json: /scenarios/5/axes: the file's scenarios expand to 120000 "
                       "cases up to this one; a file may have at most 100000"))
      << what;
  // Exclude values: 20000 per scenario fit, and 100000 per file; one more value does not.
  const std::string rule =
      R"(, "exclude": [{"y": [)" + repeated(R"({"range": [1, 4000]})", 5) + "]}]";
  EXPECT_EQ(parse(scenarios(5, 4, rule)).scenarios.size(), 5u);
  const std::string six = scenarios(6, 4, rule);
  what = error_message(six);
  EXPECT_TRUE(contains(what,
                       "s.json: /scenarios/5/exclude/0/y: the file's exclude rules list "
                       "more than 100000 values"))
      << what;
}

TEST(ScenarioBounds, ExclusionWorkStaysBoundedAtTheCaps) {
  // 20000 cases x 256 rules of two axes: one lookup per case, rule and axis.
  std::string rules;
  for (std::size_t i = 0; i < kMaxExcludeRules; ++i) {
    rules += (i ? ", " : "") + std::string(R"({"x": [)") + std::to_string(i) +
             R"(], "y": {"range": [0, 39]}})";
  }
  const auto s = parse(wrap(R"({"name": "n", "family": "toy",
      "axes": {"mode": "a", "x": {"range": [0, 499]}, "y": {"range": [0, 39]}}, "exclude": [)" +
                            rules + "]}"))
                     .scenarios[0];
  EXPECT_EQ(expand(s).size(), (500u - kMaxExcludeRules) * 40u);
}

TEST(ScenarioWarnings, AnExcludeRuleThatMatchesNoCaseIsAWarningNotAnError) {
  const auto file = parse(wrap(R"({"name": "n", "family": "toy",
      "axes": {"mode": ["a", "b"], "bytes": [8, 16]},
      "exclude": [{"mode": "a", "bytes": 8}, {"mode": "c"}, {"mode": ["a", "b"], "bytes": [32, 64]},
                  {"bytes": ["8B", 4096]}]})"));
  ASSERT_EQ(file.warnings.size(), 2u);
  EXPECT_EQ(file.warnings[0].rfind("s.json: /scenarios/0/exclude/1: matches no case", 0), 0u)
      << file.warnings[0];
  EXPECT_TRUE(contains(file.warnings[0], "\"mode\"")) << file.warnings[0];
  EXPECT_EQ(file.warnings[1].rfind("s.json: /scenarios/0/exclude/2: matches no case", 0), 0u)
      << file.warnings[1];
  EXPECT_TRUE(contains(file.warnings[1], "\"bytes\"")) << file.warnings[1];
  // "8B" is 8: rule 3 matches (and removes) the bytes=8 cases.
  EXPECT_EQ(expand(file.scenarios[0]).size(), 2u);
  EXPECT_TRUE(parse(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": ["a", "b"]},
      "exclude": [{"mode": "a"}]})"))
                  .warnings.empty());
}

TEST(ScenarioBounds, IntegersBeyondInt64AreRefusedNotWrapped) {
  const auto base = [](const std::string& fields, const std::string& axes) {
    return wrap(R"({"name": "n", "family": "toy", )" + fields + R"("axes": {"mode": "a")" + axes +
                "}}");
  };
  // 2^64 - 1 parses as an unsigned integer; as int64 it would be -1.
  std::string what = error_message(base("", R"(, "x": [18446744073709551615])"));
  EXPECT_TRUE(contains(what,
                       "/scenarios/0/axes/x/0: 18446744073709551615 is outside [0, "
                       "9223372036854775807]"))
      << what;
  what = error_message(base("", R"(, "x": [9223372036854775808])"));
  EXPECT_TRUE(contains(what, "/scenarios/0/axes/x/0: 9223372036854775808 is outside")) << what;
  // Beyond uint64 it is a floating-point number: not an integer.
  what = error_message(base("", R"(, "x": [18446744073709551616])"));
  EXPECT_TRUE(contains(what, "/scenarios/0/axes/x/0: expected an integer")) << what;
  what = error_message(base("", R"(, "x": {"range": [0, 18446744073709551615]})"));
  EXPECT_TRUE(contains(what,
                       "/scenarios/0/axes/x/range/1: 18446744073709551615 is beyond the "
                       "64-bit signed integer range"))
      << what;
  what = error_message(base("", R"(, "x": {"pow2": [9223372036854775808, 1]})"));
  EXPECT_TRUE(contains(what, "/scenarios/0/axes/x/pow2/0: ")) << what;
  what = error_message(base("", R"(, "x": {"range": [0, 10, 18446744073709551615]})"));
  EXPECT_TRUE(contains(what, "/scenarios/0/axes/x/range/2: ")) << what;
  what = error_message(base("", R"(, "x": ["99999999999999999999 KiB"])"));
  EXPECT_TRUE(contains(what, "/scenarios/0/axes/x/0: ")) << what;
  what = error_message(base("", R"(, "x": ["8388608 TiB"])"));  // 2^63: beyond int64
  EXPECT_TRUE(contains(what, "/scenarios/0/axes/x/0: \"8388608 TiB\" is too large")) << what;
  for (const char* n : {"18446744073709551615", "9223372036854775808", "4294967297", "-1", "2.5",
                        "100001", "1.0"}) {
    what = error_message(base(std::string(R"("repetitions": )") + n + ", ", ""));
    EXPECT_TRUE(contains(what, std::string("/scenarios/0/repetitions: expected an integer in [1, "
                                           "100000], found ") +
                                   n))
        << what;
  }
  for (const char* t : {"60.000001", "1e300", "18446744073709551615", "-0.0"}) {
    what = error_message(base(std::string(R"("min_time": )") + t + ", ", ""));
    EXPECT_TRUE(contains(what, "/scenarios/0/min_time: expected seconds in (0, 60], found"))
        << what;
  }
  EXPECT_EQ(parse(base(R"("repetitions": 100000, "min_time": 60, )", "")).scenarios[0].repetitions,
            100000);
  // Negative and fractional sizes and counts.
  what = error_message(base("", R"(, "bytes": [-4096])"));
  EXPECT_TRUE(contains(what, "/scenarios/0/axes/bytes/0: -4096 is outside")) << what;
  what = error_message(base("", R"(, "bytes": ["-4KiB"])"));
  EXPECT_TRUE(contains(what, "/scenarios/0/axes/bytes/0: \"-4KiB\" is not a size")) << what;
  what = error_message(base("", R"(, "node": [2.5])"));
  EXPECT_TRUE(contains(what, "/scenarios/0/axes/node/0: expected an integer, found 2.5")) << what;
  what = error_message(base("", R"(, "node": [2.0])"));
  EXPECT_TRUE(contains(what, "/scenarios/0/axes/node/0: expected an integer")) << what;
  what = error_message(base("", R"(, "node": {"range": [0, 4.5]})"));
  EXPECT_TRUE(contains(what, "/scenarios/0/axes/node/range: expected [first, last]")) << what;
}

TEST(GateMetrics, UnknownMetricNamesAreBadInputNamingThePointer) {
  const ToyFamily family;
  const Machine machine;
  const auto scenario_with = [](const std::string& modes, const std::string& gate) {
    return parse(wrap(R"({"name": "n", "family": "toy", "axes": {"mode": )" + modes +
                      R"(}, "gate": )" + gate + "}"))
        .scenarios[0];
  };
  const auto ok = scenario_with(R"(["a", "b"])",
                                R"({"metrics": {"speed": 5, "latency": 10, "speed_gpu3": 7}})");
  EXPECT_NO_THROW(validate_cases(ok, expand(ok), family, machine, 0));
  // "latency" is a metric of mode b only: a scenario without b cases gates nothing with it.
  const auto only_a =
      scenario_with(R"(["a"])", R"({"threshold_pct": 5, "metrics": {"latency": 10}})");
  try {
    validate_cases(only_a, expand(only_a), family, machine, 0);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "s.json");
    EXPECT_EQ(e.pointer(), "/scenarios/0/gate/metrics/latency");
    EXPECT_TRUE(contains(e.what(), "unknown metric \"latency\"")) << e.what();
    EXPECT_TRUE(contains(e.what(), "speed, speed_gpu<N>")) << e.what();
  }
  for (const std::string bad : {"sped", "speed_gpu", "speed_gpu1/x", "Speed", "speed_gpu_1"}) {
    const auto s = scenario_with(R"(["a", "b"])", R"({"metrics": {")" + bad + R"(": 5}})");
    EXPECT_THROW(validate_cases(s, expand(s), family, machine, 0), InputError) << bad;
  }
  // A family that does not declare its metrics is not checked.
  EXPECT_TRUE(metric_name_matches("bandwidth_gpu<N>", "bandwidth_gpu12"));
  EXPECT_TRUE(metric_name_matches("time_per_page_<page>", "time_per_page_2m"));
  EXPECT_FALSE(metric_name_matches("time_per_page_<page>", "time_per_page_"));
  EXPECT_FALSE(metric_name_matches("bandwidth", "bandwidth_fwd"));
  EXPECT_TRUE(metric_name_matches("bandwidth", "bandwidth"));
}

TEST(GateMetrics, EveryBuiltinFamilyDeclaresTheMetricsOfTheShippedCases) {
  const FamilyRegistry families = builtin_families();
  Machine machine;  // no GPUs, no memory figures: only names and combinations matter here
  for (const auto& p : collect_scenario_paths({std::string(PATHBENCH_SOURCE_DIR) + "/scenarios"})) {
    const auto file = load_scenario_file(p, families, {0, 1});
    EXPECT_TRUE(file.warnings.empty())
        << p << ": " << (file.warnings.empty() ? "" : file.warnings[0]);
    for (const auto& s : file.scenarios) {
      const Family& family = *families.find(s.family);
      const auto cases = expand(s);
      for (const auto& c : cases) {
        const auto names = family.metric_names(c);
        ASSERT_TRUE(names.has_value()) << c.id;
        EXPECT_FALSE(names->empty()) << c.id;
      }
      EXPECT_NO_THROW(validate_cases(s, cases, family, machine, 0)) << p << " " << s.name;
    }
  }
}

TEST(CollectScenarioPaths, ASymlinkLoopIsNamedAsUnreadableNotMissing) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("pathbench_loop_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink(dir / "b.json", dir / "a.json");
  std::filesystem::create_symlink(dir / "a.json", dir / "b.json");
  try {
    collect_scenario_paths({(dir / "a.json").string()});
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), (dir / "a.json").string());
    EXPECT_TRUE(contains(e.what(), "cannot read")) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pathbench::test_scenario
