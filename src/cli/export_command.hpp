#pragma once

#include <string>

namespace pathbench::cli {

// `pathbench export RESULT --prometheus FILE`: renders a result file in the Prometheus text
// exposition format (for node_exporter's textfile collector) and writes it atomically, so the
// collector never scrapes a half-written file. FILE "-" writes to stdout. Returns the exit code
// (0); an unreadable or invalid result, or an unwritable FILE, throws InputError (exit 3).
int export_command(const std::string& result_path, const std::string& prometheus_out);

}  // namespace pathbench::cli
