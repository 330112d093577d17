#include "measure/case_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/stop_signals.hpp"
#include "measure/benchmark_adapter.hpp"
#include "measure/nvtx.hpp"
#include "measure/timeline_checks.hpp"
#include "timeline/cupti_timeline.hpp"

namespace pathbench {

namespace {

CaseResult skeleton(const CaseSpec& spec) {
  CaseResult r;
  r.id = spec.id;
  r.scenario = spec.scenario;
  r.family = spec.family;
  r.params = spec.params;
  r.gate = spec.gate;
  return r;
}

// Thrown between the steps of a case when a stop signal came: the case ends at once, failed.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int sig)
      : std::runtime_error(std::string(kInterruptedReason) + " " + signal_name(sig)) {}
};

void throw_if_stopped() {
  if (const auto sig = stop_signal_received()) throw Interrupted(*sig);
}

}  // namespace

namespace {

std::string trace_file_name(const std::string& id) {
  std::string out;
  for (char c : id) {
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  }
  return out + ".trace.json";
}

// Writes the Chrome trace of `timeline` for case `id`; returns the path, or throws.
std::string write_trace(const std::filesystem::path& dir, const std::string& id,
                        const Timeline& timeline) {
  const auto path = dir / trace_file_name(id);
  write_file_atomically(path, chrome_trace(timeline, id).dump() + "\n");
  return path.string();
}

}  // namespace

CaseRunner::CaseRunner(const Machine& machine, RunSettings settings, Progress& progress)
    : machine_(machine), settings_(settings), progress_(progress) {}

void CaseRunner::record_timeline(CaseBench& bench, CaseResult& result) {
  try {
    if (const Timeline* own = bench.captured_timeline(); own != nullptr && !own->records.empty()) {
      result.timeline_file = write_trace(
          settings_.timeline_dir.value_or(settings_.default_timeline_dir), result.id, *own);
      return;
    }
    if (!settings_.timeline_dir) return;
    // One more sample, untimed, under CUPTI: the trace proves what the timed ones did without
    // the tracing's overhead touching them.
    Timeline timeline;
    {
      TimelineCapture capture(TimelineCapture::Options{});
      if (!capture.active()) {
        result.checks.push_back(
            Check{"timeline", true, "no timeline: " + capture.unavailable_reason(), nullptr});
        return;
      }
      bench.measure();
      timeline = capture.collect();
    }
    bench.verify();
    const TimelineAnalysis analysis = analyze_timeline(timeline);
    for (auto& c : bench.timeline_checks(timeline, analysis)) result.checks.push_back(std::move(c));
    result.checks.push_back(timeline_complete_check(timeline));
    result.timeline_file = write_trace(*settings_.timeline_dir, result.id, timeline);
  } catch (const std::exception& e) {
    result.checks.push_back(Check{"timeline", false, e.what(), nullptr});
  }
}

void add_timing_check(const CaseBench& bench, CaseResult& result) {
  const bool has_own = std::any_of(result.checks.begin(), result.checks.end(),
                                   [](const Check& c) { return c.name == "timing"; });
  if (has_own) return;
  std::string detail = bench.timing_detail();
  if (detail.empty()) detail = "timed by " + result.timing_method;
  result.checks.push_back(Check{"timing", true, std::move(detail), result.timing_method});
}

void apply_checks(CaseResult& result) {
  if (result.status != CaseStatus::kOk) return;
  for (const auto& c : result.checks) {
    if (!c.passed) {
      result.status = CaseStatus::kFailed;
      result.reason = "check " + c.name + " did not pass: " + c.detail;
      return;
    }
  }
}

CaseResult CaseRunner::run(const CaseSpec& spec, const Family& family) {
  const auto started = std::chrono::steady_clock::now();
  CaseResult result = skeleton(spec);
  auto finish = [&]() -> CaseResult {
    result.elapsed_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (result.status == CaseStatus::kFailed) progress_.case_failed(result.id, result.reason);
    return result;
  };

  if (auto why = family.skip_reason(spec, machine_, settings_.device)) {
    result.status = CaseStatus::kSkipped;
    result.reason = *why;
    return finish();
  }

  NvtxRange case_range(spec.id, spec.family);
  std::unique_ptr<CaseBench> bench;
  // One per metric; set for the per-operation ones.
  std::vector<std::optional<DistributionRecorder>> distributions;
  try {
    bench = family.prepare(spec, machine_, settings_.device);
    for (const auto& m : bench->metrics()) {
      result.metrics.push_back(MetricResult{m.name, m.unit, m.better, {}, {}, std::nullopt});
      distributions.emplace_back();
      if (m.per_operation) distributions.back().emplace();
    }
    result.timing_method = std::string(to_string(bench->timing_method()));
    throw_if_stopped();
    {
      NvtxRange warm("warm-up", spec.family);
      bench->warm_up(spec.min_time);
    }
    throw_if_stopped();
    result.operations_per_sample = bench->operations_per_sample();
    result.bytes_per_sample = bench->bytes_per_sample();
  } catch (const SkipCase& e) {
    result.status = CaseStatus::kSkipped;
    result.reason = e.what();
    result.metrics.clear();
    return finish();
  } catch (const Interrupted& e) {
    result.status = CaseStatus::kFailed;
    result.reason = std::string(e.what()) + " during set-up";
    result.metrics.clear();
    return finish();
  } catch (const std::exception& e) {
    result.status = CaseStatus::kFailed;
    result.reason = std::string("set-up: ") + e.what();
    if (bench) result.checks = bench->checks();
    return finish();
  }

  std::string failure;
  std::size_t repetitions_run = 0;
  const auto repetitions = static_cast<std::size_t>(spec.repetitions);
  auto repetition = [&](std::size_t index) -> double {
    const std::string which = std::to_string(index + 1);
    try {
      throw_if_stopped();
      NvtxRange rep_range("repetition " + which, spec.family, bench->bytes_per_sample());
      Sample sample = bench->measure();
      if (sample.values.size() != result.metrics.size()) {
        throw std::logic_error("the case returned " + std::to_string(sample.values.size()) +
                               " values for " + std::to_string(result.metrics.size()) + " metrics");
      }
      for (std::size_t i = 0; i < distributions.size(); ++i) {
        if (!distributions[i]) continue;
        if (i >= sample.operation_seconds.size() || sample.operation_seconds[i].empty()) {
          throw std::logic_error("the case timed no operation for per-operation metric " +
                                 result.metrics[i].name);
        }
        for (double s : sample.operation_seconds[i]) {
          if (!std::isfinite(s) || s < 0) {
            throw CaseFailure("an operation of " + result.metrics[i].name +
                              " has no finite, non-negative duration");
          }
        }
      }
      for (double v : sample.values) {
        if (!std::isfinite(v)) throw CaseFailure("a sample is not finite");
      }
      bench->verify();
      // Recorded only once verified: a repetition that failed leaves no operations behind.
      for (std::size_t i = 0; i < sample.values.size(); ++i) {
        if (distributions[i]) {
          sample.values[i] =
              distributions[i]->add_repetition(std::move(sample.operation_seconds[i]));
        }
        result.metrics[i].samples.push_back(sample.values[i]);
      }
      progress_.repetition(index + 1, repetitions);
      return sample.seconds;
    } catch (const Interrupted& e) {
      failure = std::string(e.what()) + " in repetition " + which;
    } catch (const std::exception& e) {
      failure = "repetition " + which + ": " + e.what();
    }
    progress_.repetition(index + 1, repetitions);
    throw CaseFailure(failure);
  };
  try {
    repetitions_run = run_repetitions(spec.id, spec.repetitions, repetition, runs_);
  } catch (const CaseFailure&) {
    // `failure` says which repetition and why.
  }

  try {
    result.checks = bench->checks();
  } catch (const std::exception& e) {
    result.checks.push_back(Check{"checks", false, e.what(), nullptr});
  }
  // Read after the samples: a timer that found the latch blocked switched to the host clock.
  result.timing_method = std::string(to_string(bench->timing_method()));
  add_timing_check(*bench, result);
  if (failure.empty() && !stop_signal_received()) record_timeline(*bench, result);
  for (std::size_t i = 0; i < result.metrics.size(); ++i) {
    auto& m = result.metrics[i];
    m.stats = summarize(m.samples);
    if (i < distributions.size() && distributions[i]) m.distribution = distributions[i]->finish();
  }
  if (!failure.empty()) {
    result.status = CaseStatus::kFailed;
    result.reason = failure;
  } else if (repetitions_run < repetitions) {
    result.status = CaseStatus::kFailed;
    result.reason = "Google Benchmark ran " + std::to_string(repetitions_run) + " of " +
                    std::to_string(repetitions) + " repetitions";
  }
  apply_checks(result);
  bench.reset();  // release buffers before the next case allocates its own
  return finish();
}

}  // namespace pathbench
