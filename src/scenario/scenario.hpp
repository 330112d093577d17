#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pathbench {

struct Axis {
  std::string name;
  std::vector<nlohmann::json> values;  // strings or integers, after range expansion
  std::string pointer;                 // JSON pointer of the axis in its file
};

// A case is excluded when, for every axis the rule names, the case's value is one of the listed.
struct ExcludeRule {
  std::map<std::string, std::vector<nlohmann::json>> match;
  std::string pointer;
};

struct Scenario {
  std::string file;     // path as given
  std::string pointer;  // "/scenarios/3"
  std::string name;
  std::string description;
  std::string family;
  std::vector<Axis> axes;  // in file order: this order builds the case id
  std::vector<ExcludeRule> exclude;
  int repetitions = 9;
  double min_time = 0.05;  // seconds a sample should last at least; sizes the block of operations
  // Regression thresholds for `pathbench compare`, in percent: {"threshold_pct": 5,
  // "metrics": {"round_trip_time": 10}}. Null: the compare default applies.
  nlohmann::ordered_json gate = nullptr;
};

struct ScenarioFile {
  std::string path;
  std::string sha256;
  std::vector<Scenario> scenarios;
  // Things that are allowed but probably not meant, as "FILE: POINTER: what" (an exclude rule
  // that matches no case). The scenario layer does not print them; the CLI prints each as
  // "pathbench: warning: ..." on stderr.
  std::vector<std::string> warnings;
};

// One expanded case: a point of the scenario's axes.
struct CaseSpec {
  std::string id;  // "family/axis=value/..." — stable across runs and machines of a node type
  std::string scenario;
  std::string family;
  std::string file;
  std::string pointer;            // of the scenario, for messages
  nlohmann::ordered_json params;  // axis name -> value, in axis order
  int repetitions = 9;
  double min_time = 0.05;
  nlohmann::ordered_json gate = nullptr;

  std::string str(const std::string& axis) const;
  std::int64_t integer(const std::string& axis) const;
  bool has(const std::string& axis) const { return params.contains(axis); }
};

}  // namespace pathbench
