#pragma once

#include <cstdio>

#include "result/result.hpp"

namespace pathbench::cli {

// A short table of a run: status, case, headline metric (median, p10-p90, cv, n).
void print_summary_table(const Result& result, std::FILE* out);

}  // namespace pathbench::cli
