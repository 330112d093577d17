#include "cli/export_command.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "compare/baseline.hpp"
#include "compare/run_noise.hpp"
#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/json_reader.hpp"
#include "export/prometheus.hpp"
#include "result/result.hpp"
#include "result/run_context.hpp"
#include "stats/operation_distribution.hpp"

namespace pathbench::cli {

namespace {

using ojson = nlohmann::ordered_json;

// Written as JSON: the documents were read as UTF-8 (the JSON reader refuses anything else), but
// a path given on the command line may be any bytes.
std::string dumped(const ojson& j) {
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

// {"center": ..., "spread_pct": ... or null below kMinRunsForSpread runs}
ojson between_run_json(const BetweenRun& b) {
  ojson j = ojson::object();
  j["center"] = b.center;
  j["spread_pct"] = b.known ? ojson(b.spread_pct) : ojson(nullptr);
  return j;
}

// What a report shows of a baseline and would otherwise compute a second time: each metric's
// between-run spread, and that of each distribution statistic (null where a run has none).
ojson baseline_derived(const Baseline& b) {
  ojson cases = ojson::object();
  for (const auto& c : b.cases) {
    ojson metrics = ojson::object();
    for (const auto& m : c.metrics) {
      ojson metric = between_run_json(m.between);
      ojson statistics = ojson::object();
      for (const auto& s : kDistributionStatistics) {
        const std::optional<BaselineMetric> view = statistic_view(m, s.name);
        statistics[std::string(s.name)] = view ? between_run_json(view->between) : ojson(nullptr);
      }
      metric["statistics"] = std::move(statistics);
      metrics[m.name] = std::move(metric);
    }
    cases[c.id] = std::move(metrics);
  }
  return cases;
}

std::string line_start(const std::string& path, const ojson& schema) {
  return "{\"path\":" + dumped(ojson(path)) + ",\"schema\":" + dumped(schema);
}

ojson schema_of(const ojson& doc) {
  if (!doc.is_object()) return nullptr;
  const auto it = doc.find("schema");
  return it != doc.end() && it->is_string() ? *it : ojson(nullptr);
}

// A result: its header as read, its cases as the file holds them (each once the reader accepted
// it), then any the journal beside it adds, as pathbench reads them.
std::string result_line(const std::string& path, const Result& r, const ojson& header,
                        const std::string& cases) {
  std::string line = line_start(path, kResultSchema);
  line += ",\"complete\":" + std::string(r.complete ? "true" : "false");
  line += ",\"incomplete_reason\":" + dumped(ojson(r.incomplete_reason));
  line += ",\"document\":{";
  bool first = true;
  for (const auto& [key, value] : header.items()) {
    if (!first) line += ',';
    first = false;
    line += dumped(ojson(key)) + ':';
    line += key == "cases" ? "[" + cases + "]" : dumped(value);
  }
  return line + "}}";
}

std::string baseline_line(const std::string& path, const ojson& doc) {
  const Baseline b = baseline_from_json(doc, path);
  // Each run's environment, as compare reads it for noise.
  for (std::size_t i = 0; i < b.run_contexts.size(); ++i) {
    checked_run_noise_reasons(b.run_contexts[i], path,
                              "/runs/" + std::to_string(i) + "/context/environment");
  }
  return line_start(path, kBaselineSchema) + ",\"between_run\":" + dumped(baseline_derived(b)) +
         ",\"document\":" + dumped(doc) + "}";
}

std::string json_line(const std::string& path, const JsonLinesOptions& options) {
  const bool result_only = options.as == "result";
  if (options.as == "json" || options.as == "baseline") {
    JsonReadOptions read;
    read.max_bytes = options.max_bytes;
    const ojson doc = read_json_file(path, read);
    if (options.as == "json") {
      return line_start(path, schema_of(doc)) + ",\"document\":" + dumped(doc) + "}";
    }
    // spread.py's question: a result is one run, and has no between-run spread.
    if (schema_of(doc) == kResultSchema) {
      throw InputError(path, "/schema",
                       std::string("\"") + kResultSchema +
                           "\" is a result, not a baseline: the spread takes at least " +
                           std::to_string(kMinRunsForSpread) +
                           " runs (make a baseline with: pathbench baseline promote RESULT...)");
    }
    return baseline_line(path, doc);
  }
  std::string cases;
  ojson header;
  ojson other;
  ResultFileTap tap;
  tap.max_bytes = options.max_bytes;
  tap.header = &header;
  // The file's cases come with their JSON, before each is handed over converted; the cases a
  // journal adds come converted only.
  std::size_t from_file = 0;
  tap.on_case_json = [&](const ojson& element, std::size_t /*index*/) {
    if (!cases.empty()) cases += ',';
    cases += dumped(element);
    ++from_file;
  };
  const std::optional<Result> r = read_result_file(
      path,
      [&](CaseResult&& c, std::size_t index) {
        if (index >= from_file) {
          if (!cases.empty()) cases += ',';
          cases += dumped(to_json(c));
        }
      },
      result_only ? nullptr : &other, tap);
  if (r) {
    // The context as compare and export --prometheus read it, its environment included.
    checked_run_noise_reasons(RunContext::from_json(r->context, path), path,
                              "/context/environment");
    return result_line(path, *r, header, cases);
  }
  return baseline_line(path, other);  // refused at /schema unless a baseline
}

// "FILE: POINTER: " as InputError begins its message.
std::string error_json(const InputError& e) {
  const std::string pointer = e.pointer().empty() ? "/" : printable_pointer(e.pointer());
  const std::string prefix = printable_text(e.file()) + ": " + pointer + ": ";
  const std::string what = e.what();
  ojson j = ojson::object();
  j["path"] = e.file();
  j["pointer"] = pointer;
  j["message"] = what.starts_with(prefix) ? what.substr(prefix.size()) : what;
  return dumped(ojson{{"error", std::move(j)}});
}

}  // namespace

int export_json_lines_command(const std::vector<std::string>& files,
                              const JsonLinesOptions& options) {
  std::string out;
  for (const auto& file : files) {
    try {
      out += json_line(file, options);
    } catch (const InputError& e) {
      std::fprintf(stderr, "%s\n", error_json(e).c_str());
      throw;
    }
    out += '\n';
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

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
