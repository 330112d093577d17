#pragma once

// Google Benchmark as the repetition driver of a case: registered with manual time, one
// iteration per repetition, each repetition one sample. The runner owns the sample loop's
// logic; this adapter only hands it to the library, so the library's own output
// (--benchmark_out) records every repetition.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace pathbench {

// Runs `repetitions` repetitions of `repetition` under Google Benchmark as case `id`. Each call
// gets the repetition's index and returns its seconds (the manual time), or throws; the first
// throw ends the case (later repetitions are skipped with an error) and is rethrown here.
// Returns how many repetitions the library ran; the library's runs are appended to `runs`.
std::size_t run_repetitions(const std::string& id, int repetitions,
                            const std::function<double(std::size_t)>& repetition,
                            std::vector<benchmark::BenchmarkReporter::Run>& runs);

}  // namespace pathbench
