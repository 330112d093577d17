#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "inventory/machine.hpp"
#include "scenario/family_schema.hpp"
#include "scenario/scenario.hpp"

namespace pathbench {

inline constexpr const char* kScenarioSchema = "pathbench.scenario/v1";
// A scenario file larger than this is refused before it is read (the shipped ones are < 16 KiB).
inline constexpr std::uint64_t kMaxScenarioFileBytes = 16u << 20;

// Bounds on what one scenario may ask for, checked on counts before any value list is built, so a
// small file cannot make pathbench allocate or loop without end (the shipped scenarios stay far
// below: at most a few hundred cases and a handful of exclude rules).
// - The product of the axes' value counts (before exclusions), counted with ranges unexpanded;
//   and that product summed over the scenarios of one file.
inline constexpr std::uint64_t kMaxCasesPerScenario = 20000;
inline constexpr std::uint64_t kMaxCasesPerFile = 100000;
// - One range object ({"range": ...}, {"pow2": ...}) expands to at most this many values.
inline constexpr std::uint64_t kMaxValuesPerRange = 4096;
// - Exclude rules: at most this many per scenario, listing at most kMaxExcludeValues values in all
//   (ranges counted expanded; kMaxExcludeValuesPerFile over a file's scenarios). Matching costs at
//   most cases x rules x axes lookups.
inline constexpr std::size_t kMaxExcludeRules = 256;
inline constexpr std::uint64_t kMaxExcludeValues = 20000;
inline constexpr std::uint64_t kMaxExcludeValuesPerFile = 100000;
// - Samples and their length: repetitions in [1, kMaxRepetitions], min_time in (0, kMaxMinTime].
inline constexpr std::int64_t kMaxRepetitions = 100000;
inline constexpr double kMaxMinTimeSeconds = 60;

// Parses and validates a scenario file against the families' axis schemas. `numa_nodes` expands
// {"numa_nodes": "all"} (integer axes); `gpus` (the machine's selected GPUs) expands
// {"gpu_pairs": "all"} (string axes) to every ordered pair "S-D", or to the single value "none"
// when there are fewer than two. Throws InputError naming the file and the JSON pointer of the
// field. Callers that expand no GPU pairs may leave `gpus` out (then gpu_pairs gives "none").
ScenarioFile parse_scenario_file(const std::string& path, std::string_view text,
                                 const FamilyCatalog& families, const std::vector<int>& numa_nodes,
                                 const std::vector<int>& gpus = {});
ScenarioFile load_scenario_file(const std::filesystem::path& path, const FamilyCatalog& families,
                                const std::vector<int>& numa_nodes,
                                const std::vector<int>& gpus = {});

// Files given on the command line: a directory contributes its *.json files in name order.
std::vector<std::filesystem::path> collect_scenario_paths(
    const std::vector<std::string>& files_or_dirs);

// Parses an integer axis value: 4096, or a string with a binary unit ("4KiB", "256 MiB", "1GiB").
// Throws std::invalid_argument.
std::int64_t parse_size(std::string_view text);

}  // namespace pathbench
