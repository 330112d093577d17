#include "cli/export_command.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "export/prometheus.hpp"
#include "result/result.hpp"
#include "result/run_context.hpp"

namespace pathbench::cli {

int export_command(const std::string& result_path, const std::string& prometheus_out) {
  // Case by case: a large result is never held whole, only its series (InputError names the
  // file and field).
  PrometheusExposition exposition;
  std::size_t cases = 0;
  const Result result = *read_result_file(result_path, [&](CaseResult&& c, std::size_t) {
    exposition.add(c);
    ++cases;
  });
  const std::string text =
      exposition.render(result, RunContext::from_json(result.context, result_path));
  if (!result.complete) {
    std::fprintf(stderr,
                 "pathbench: note: %s is incomplete (%s): exporting its %zu finished cases with "
                 "pathbench_result_complete 0\n",
                 result_path.c_str(),
                 result.incomplete_reason.empty()
                     ? "the run did not finish"
                     : printable_text(shortened_text(result.incomplete_reason)).c_str(),
                 cases);
  }
  if (prometheus_out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  // The temporary file is ".<name>.tmp-..." beside the target: not *.prom, so node_exporter
  // never reads it, and the rename makes the new file appear whole.
  write_output_file(prometheus_out, text, "the Prometheus exposition");
  std::printf("prometheus: %s\n", prometheus_out.c_str());
  // node_exporter's textfile collector reads only *.prom; say so rather than let the metrics
  // silently never appear.
  if (std::filesystem::path(prometheus_out).extension() != ".prom") {
    std::fprintf(stderr,
                 "pathbench: note: %s does not end in .prom; node_exporter's textfile collector "
                 "reads only *.prom files\n",
                 prometheus_out.c_str());
  }
  return 0;
}

}  // namespace pathbench::cli
