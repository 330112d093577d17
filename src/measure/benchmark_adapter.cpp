#include "measure/benchmark_adapter.hpp"

#include <exception>

namespace pathbench {

namespace {

// Google Benchmark's console output would interleave with ours; the samples are recorded by the
// runner, so the reporter only keeps the library's runs for --benchmark_out.
class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  explicit CollectingReporter(std::vector<Run>& runs) : runs_(runs) {}
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    runs_.insert(runs_.end(), runs.begin(), runs.end());
  }

 private:
  std::vector<Run>& runs_;
};

}  // namespace

std::size_t run_repetitions(const std::string& id, int repetitions,
                            const std::function<double(std::size_t)>& repetition,
                            std::vector<benchmark::BenchmarkReporter::Run>& runs) {
  std::exception_ptr failure;
  std::size_t ran = 0;
  auto body = [&](benchmark::State& state) {
    for (auto _ : state) {
      if (failure) {
        state.SkipWithError("an earlier repetition failed");
        break;
      }
      try {
        state.SetIterationTime(repetition(ran));
      } catch (const std::exception& e) {
        failure = std::current_exception();
        state.SkipWithError(e.what());
        break;
      }
    }
    ++ran;
  };
  benchmark::ClearRegisteredBenchmarks();
  benchmark::RegisterBenchmark(id.c_str(), body)
      ->UseManualTime()
      ->Iterations(1)
      ->Repetitions(repetitions)
      ->Unit(benchmark::kMillisecond);
  CollectingReporter reporter(runs);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  if (failure) std::rethrow_exception(failure);
  return ran;
}

}  // namespace pathbench
