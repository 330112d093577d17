// Scenario files: parsing, validation with JSON pointers, range expansion, exclusion, case ids.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "scenario/expansion.hpp"
#include "scenario/scenario_file.hpp"

namespace pathbench {
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
  std::optional<std::string> skip_reason(const CaseSpec&, const Machine&, int) const override {
    return std::nullopt;
  }
  std::unique_ptr<CaseBench> prepare(const CaseSpec&, const Machine&, int) const override {
    return nullptr;
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
}  // namespace pathbench

namespace pathbench {
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
}  // namespace pathbench
