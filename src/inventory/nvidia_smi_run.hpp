#pragma once

// One nvidia-smi invocation, for the inventory's fallback and the environment samples.

#include <optional>
#include <string>
#include <vector>

namespace pathbench {

struct SmiRun {
  std::optional<std::string> text;  // standard output, when it exited 0
  std::string error;                // why there is no text
  bool ran = false;  // the program started and exited (so a retry with other fields may work)
};

// Runs `argv` (10 s timeout). `what` names a subcommand in messages ("topo -m"); empty for the
// queries. A failure says nvidia-smi's own first line of explanation when it printed one.
SmiRun run_nvidia_smi(const std::vector<std::string>& argv, const std::string& what = "");

}  // namespace pathbench
