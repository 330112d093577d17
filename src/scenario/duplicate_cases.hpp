#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"

namespace pathbench {

// Case ids are unique within a run. Within one file a repeated id is a mistake. Across files it
// is how the shipped folder is built (default.json is a quick subset of the sweeps in copy.json
// and host_memory.json), so `run scenarios/` runs each such case once, as the first file defines
// it, and says so once per pair of files.
class DuplicateCases {
 public:
  // True when `spec`, from the `file_index`-th file of the run (files in run order), is new and
  // should run; false when an earlier file already produced its id (the copy is dropped and
  // counted for notes()). Throws InputError naming the file and the scenario when the same file
  // produced the id before.
  bool admit(std::size_t file_index, const CaseSpec& spec);

  // One line per pair of files that overlapped, in the order the overlaps were met, e.g. "12
  // cases of scenarios/copy.json are also in scenarios/default.json; each runs once, as defined
  // there; 3 of them differ in repetitions/gate: the first file's settings are used".
  std::vector<std::string> notes() const;

 private:
  struct FirstDefinition {
    std::size_t file_index = 0;
    std::string file;
    int repetitions = 0;
    double min_time = 0;
    nlohmann::ordered_json gate;
    std::size_t last_file_index = 0;  // the latest file that produced the id
  };
  struct Overlap {
    std::string later_file;
    std::string first_file;
    std::size_t cases = 0;
    std::size_t differing = 0;
    bool repetitions = false, min_time = false, gate = false;
  };

  std::unordered_map<std::string, FirstDefinition> seen_;
  std::vector<Overlap> overlaps_;
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> overlap_of_;  // (later, first) files
};

}  // namespace pathbench
