#include "inventory/nvidia_smi_run.hpp"

#include <chrono>
#include <exception>
#include <string_view>
#include <utility>

#include "core/subprocess.hpp"

namespace pathbench {
namespace {

std::string first_line(std::string_view text) {
  const auto start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return {};
  text = text.substr(start);
  return std::string(text.substr(0, text.find_first_of("\r\n")));
}

}  // namespace

SmiRun run_nvidia_smi(const std::vector<std::string>& argv, const std::string& what) {
  SmiRun out;
  const std::string name = what.empty() ? "nvidia-smi" : "nvidia-smi " + what;
  SubprocessOptions options;
  options.timeout = std::chrono::seconds(10);
  SubprocessResult run;
  try {
    run = run_subprocess(argv, options);
  } catch (const std::exception& e) {
    out.error = "could not run " + name + ": " + e.what();
    return out;
  }
  out.ran = run.outcome == SubprocessOutcome::kExited;
  if (!run.ok()) {
    out.error = (what.empty() ? "" : name + ": ") + run.error;
    // nvidia-smi explains itself on stdout ("NVIDIA-SMI has failed because ...", "Field ... is
    // not a valid field to query.").
    std::string detail = first_line(run.stdout_text);
    if (detail.empty()) detail = first_line(run.stderr_text);
    if (!detail.empty() && out.ran) out.error += ": " + detail;
    return out;
  }
  out.text = std::move(run.stdout_text);
  return out;
}

}  // namespace pathbench
