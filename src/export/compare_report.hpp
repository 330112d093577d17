#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "compare/compare.hpp"

// The reporters of a comparison, apart from the verdicts they report (compare/compare.hpp):
// the readable table, pathbench.compare/v1 JSON and JUnit XML.

namespace pathbench {

inline constexpr const char* kCompareSchema = "pathbench.compare/v1";

nlohmann::ordered_json to_json(const Comparison& c);
// to_json(c).dump(2) + "\n", written case by case: a comparison of a million cases is never one
// JSON document in memory, only its text (compare --json).
std::string to_json_text(const Comparison& c);
std::string junit_xml(const Comparison& c);
// The readable table; colours only when `color` (stdout is a terminal).
void print_comparison(const Comparison& c, std::FILE* out, bool color);

}  // namespace pathbench
