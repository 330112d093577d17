#include "measure/benchmark_output.hpp"

#include <fstream>
#include <memory>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"

namespace pathbench {

void write_benchmark_output(const std::string& path, const std::string& format,
                            const std::vector<benchmark::BenchmarkReporter::Run>& runs) {
  std::unique_ptr<benchmark::BenchmarkReporter> reporter;
  if (format == "json") {
    reporter = std::make_unique<benchmark::JSONReporter>();
  } else if (format == "console") {
    reporter = std::make_unique<benchmark::ConsoleReporter>(benchmark::ConsoleReporter::OO_None);
  } else if (format == "csv") {
    // Google Benchmark 1.8 deprecates its CSV reporter but still ships it; `--benchmark_out_format
    // csv` stays what the library's own flag offers until the library drops it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    reporter = std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
  } else {
    throw InputError::option("--benchmark_out_format",
                             "\"" + format + "\" is not one of: json, console, csv");
  }
  std::ostringstream out, err;
  reporter->SetOutputStream(&out);
  reporter->SetErrorStream(&err);
  reporter->ReportContext(benchmark::BenchmarkReporter::Context());
  if (!runs.empty()) reporter->ReportRuns(runs);
  reporter->Finalize();
  write_output_file(path, out.str(), "Google Benchmark output");
}

}  // namespace pathbench
