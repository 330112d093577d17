// host_memory's first_touch and mlock cases: one fresh buffer per sample, because both costs are
// paid once per page.
#include "bench/host_memory.hpp"
#include "core/errors.hpp"
#include "core/host_clock.hpp"
#include "core/units.hpp"
#include "measure/check_log.hpp"
#include "placement/buffer_checks.hpp"
#include "placement/memory_lock.hpp"
#include "placement/smaps.hpp"
#include "placement/thread_placement.hpp"

namespace pathbench {

namespace {

using Measure = HostMemoryParams::Measure;

class FreshBufferBench final : public CaseBench {
 public:
  FreshBufferBench(const HostMemoryParams& p, const Machine& machine)
      : p_(p), thread_(machine, p.cpu_node), page_bytes_(page_size_of(p.page)) {
    // Mapping now makes an impossible request (no hugetlb pages, unusable node) a skip at prepare
    // time instead of a failure in the middle of the repetitions.
    buffer_.emplace(p_.buffer());
    mapped_ = buffer_->mapped_size();
    if (p_.measure == Measure::kMlock) {
      buffer_->touch();
      MemoryLock probe(buffer_->data(), mapped_);  // a refused lock skips the case here
    }
  }

  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }
  std::vector<MetricSpec> metrics() const override {
    return host_memory_metrics(p_.measure, page_size_label(page_bytes_));
  }
  std::string timing_detail() const override {
    return std::string("host steady clock around the ") + action() + " of one fresh " +
           format_bytes(mapped_) + " buffer per sample";
  }

  // One untimed cycle warms the kernel's allocation and zeroing paths; a sample is always one
  // buffer, so min_time does not size anything here.
  void warm_up(double /*min_time*/) override { cycle(); }

  Sample measure() override {
    const double seconds = cycle();
    if (!(seconds > 0.0)) {
      throw CaseFailure("the steady clock measured no time for " + std::string(action()) + " of " +
                        std::to_string(mapped_) + " bytes");
    }
    const double size = static_cast<double>(mapped_);
    Sample sample{seconds, {seconds / (size / kGiB)}};
    if (p_.measure == Measure::kFirstTouch) {
      sample.values.push_back(seconds / (size / static_cast<double>(page_bytes_)));
    }
    return sample;
  }

  void verify() override {
    std::vector<Check> checks;
    if (p_.measure == Measure::kMlock) {
      const LockState lock = query_lock_state(buffer_->data(), mapped_);
      checks.push_back({"buffer_locked", lock.locked(), lock.describe(), lock.locked_kb});
    }
    add_buffer_checks(checks, "buffer", *buffer_, p_.mem_node, p_.page);
    if (thread_.bound()) checks.push_back(thread_.check());
    log_.record(std::move(checks));
    lock_ = MemoryLock();
  }

  std::vector<Check> checks() const override { return log_.checks(); }
  std::uint64_t operations_per_sample() const override { return 1; }
  std::uint64_t bytes_per_sample() const override { return mapped_; }

 private:
  const char* action() const { return p_.measure == Measure::kMlock ? "mlock" : "first touch"; }

  // Maps a fresh buffer and times the first touch or the mlock of it.
  double cycle() {
    // The previous buffer goes first: two live copies could exceed memory or the hugetlb pool.
    lock_ = MemoryLock();
    buffer_.reset();
    buffer_.emplace(p_.buffer());
    if (p_.measure == Measure::kFirstTouch) return time_on_host([&] { buffer_->touch(); });
    buffer_->touch();
    return time_on_host([&] { lock_ = MemoryLock(buffer_->data(), mapped_); });
  }

  HostMemoryParams p_;
  ThreadPlacement thread_;
  std::uint64_t page_bytes_;
  std::optional<HostBuffer> buffer_;
  std::uint64_t mapped_ = 0;
  MemoryLock lock_;  // after the buffer: unlocked before it is unmapped
  CheckLog log_;
};

}  // namespace

std::unique_ptr<CaseBench> make_fresh_buffer_bench(const HostMemoryParams& p,
                                                   const Machine& machine) {
  return std::make_unique<FreshBufferBench>(p, machine);
}

}  // namespace pathbench
