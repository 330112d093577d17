#pragma once

#include <string>
#include <vector>

#include <benchmark/benchmark.h>

namespace pathbench {

// Writes Google Benchmark's native output (the format google/benchmark's tools/compare.py reads)
// for the runs pathbench collected. `format` is "json", "console" or "csv", as the library's own
// --benchmark_out_format. Throws InputError for an unknown format or an unwritable file.
void write_benchmark_output(const std::string& path, const std::string& format,
                            const std::vector<benchmark::BenchmarkReporter::Run>& runs);

}  // namespace pathbench
