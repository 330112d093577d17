#include "cli/export_command.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "export/prometheus.hpp"
#include "result/result.hpp"

namespace pathbench::cli {

int export_command(const std::string& result_path, const std::string& prometheus_out) {
  const Result result = load_result(result_path);  // InputError names the file and field
  const std::string text = prometheus_exposition(result);
  if (prometheus_out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  try {
    // The temporary file is ".<name>.XXXXXX" beside the target: not *.prom, so node_exporter
    // never reads it, and the rename makes the new file appear whole.
    write_file_atomically(prometheus_out, text);
  } catch (const std::exception& e) {
    throw InputError(prometheus_out, "", std::string("cannot write: ") + e.what());
  }
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
