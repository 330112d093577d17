#pragma once

#include "stress/stress_plan.hpp"

namespace pathbench::cli {

// `pathbench stress`: background load to rehearse the gate under contention. Runs until
// --duration or SIGINT/SIGTERM, then frees everything and returns 0; bad options exit 3 before
// anything is allocated.
int stress_command(const StressOptions& options);

}  // namespace pathbench::cli
