#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pathbench::cli {

// `pathbench export RESULT --prometheus FILE`: renders a result file in the Prometheus text
// exposition format (for node_exporter's textfile collector) and writes it atomically, so the
// collector never scrapes a half-written file. FILE "-" writes to stdout. Returns the exit code
// (0); an unreadable or invalid result, or an unwritable FILE, throws InputError (exit 3).
int export_command(const std::string& result_path, const std::string& prometheus_out);

// How `export --json-lines` reads each file (--as).
struct JsonLinesOptions {
  // "auto": a result or a baseline, by its schema, each by pathbench's reader of it; "result",
  // "baseline": that schema only (a result given as a baseline is refused at /schema); "json":
  // any JSON document, by the strict JSON reader alone (a compare file, a Chrome trace).
  std::string as = "auto";
  // A larger file is refused before it is read.
  std::uint64_t max_bytes = std::uint64_t{1} << 40;
};

// `pathbench export --json-lines FILE...`: reads every file with the reader pathbench itself uses
// for it and writes one JSON object per file, one per line, on stdout:
//   {"path": FILE, "schema": SCHEMA or null, "document": THE DOCUMENT AS READ, ...derived values}
// (a result adds "complete" and "incomplete_reason"; a baseline "between_run", the spread of each
// metric and of its distribution statistics). All or nothing: the lines are written once every
// file is read. A file refused throws InputError (exit 3, nothing on stdout) after writing
// {"error": {"path": ..., "pointer": ..., "message": ...}} as one line on stderr, for scripts.
int export_json_lines_command(const std::vector<std::string>& files,
                              const JsonLinesOptions& options);

}  // namespace pathbench::cli
