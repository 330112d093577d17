#include "measure/under_pinning_pressure.hpp"

#include "core/errors.hpp"

namespace pathbench {

namespace {

class UnderPinningPressure final : public CaseBench {
 public:
  UnderPinningPressure(const PinningPressureRequest& request,
                       const std::function<std::unique_ptr<CaseBench>()>& make_bench)
      : pressure_(request), bench_(make_bench()) {}

  TimingMethod timing_method() const override { return bench_->timing_method(); }
  std::vector<MetricSpec> metrics() const override { return bench_->metrics(); }
  void warm_up(double min_time) override { bench_->warm_up(min_time); }
  Sample measure() override { return bench_->measure(); }
  void verify() override {
    bench_->verify();
    Check held = pressure_.check();
    if (!held.passed) throw CaseFailure(held.detail);
  }
  std::vector<Check> checks() const override {
    std::vector<Check> all = bench_->checks();
    all.push_back(pressure_.check());
    return all;
  }
  std::uint64_t operations_per_sample() const override { return bench_->operations_per_sample(); }
  std::uint64_t bytes_per_sample() const override { return bench_->bytes_per_sample(); }
  const Timeline* captured_timeline() const override { return bench_->captured_timeline(); }
  std::vector<Check> timeline_checks(const Timeline& t, const TimelineAnalysis& a) const override {
    return bench_->timeline_checks(t, a);
  }
  std::string timing_detail() const override { return bench_->timing_detail(); }

 private:
  // Declared first: built before the bench, destroyed after it.
  PinningPressure pressure_;
  std::unique_ptr<CaseBench> bench_;
};

}  // namespace

std::unique_ptr<CaseBench> under_pinning_pressure(
    const PinningPressureRequest& request,
    const std::function<std::unique_ptr<CaseBench>()>& make_bench) {
  return std::make_unique<UnderPinningPressure>(request, make_bench);
}

}  // namespace pathbench
