// host_memory's first_touch and mlock cases: one fresh buffer per sample, because both costs are
// paid once per page.
#include "bench/host_memory.hpp"
#include "core/errors.hpp"
#include "core/host_clock.hpp"
#include "core/units.hpp"
#include "measure/check_log.hpp"
#include "measure/thp_fault_conditions.hpp"
#include "placement/buffer_checks.hpp"
#include "placement/memory_lock.hpp"
#include "placement/memory_policy.hpp"
#include "placement/page_placement.hpp"
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
    // Only THP faults take free 2 MiB blocks from the buddy allocator: 4 KiB faults do not need
    // them, and hugetlb pages come from the pool reserved beforehand.
    if (p_.page == PageType::kThp) thp_.emplace(p_.mem_node, mapped_ / page_bytes_);
    if (p_.measure == Measure::kMlock) {
      buffer_->touch();
      MemoryLock probe(buffer_->data(), mapped_);  // a refused lock skips the case here
    }
  }

  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }
  std::vector<MetricSpec> metrics() const override {
    return host_memory_metrics(p_, page_size_label(page_bytes_));
  }
  std::string timing_detail() const override {
    return std::string("host steady clock around the ") + action() + " of one fresh " +
           format_bytes(mapped_) + " buffer per sample";
  }

  // One untimed cycle warms the kernel's allocation and zeroing paths; a sample is always one
  // buffer, so min_time does not size anything here.
  void warm_up(double /*min_time*/) override { cycle(false); }

  Sample measure() override {
    const double seconds = cycle(true);
    if (!(seconds > 0.0)) {
      throw CaseFailure("the steady clock measured no time for " + std::string(action()) + " of " +
                        std::to_string(mapped_) + " bytes");
    }
    const double size = static_cast<double>(mapped_);
    Sample sample{seconds, {seconds / (size / kGiB)}};
    if (p_.measure == Measure::kFirstTouch) {
      sample.values.push_back(seconds / (size / static_cast<double>(page_bytes_)));
      if (p_.policy) {
        const PagePlacement placed = query_page_placement(buffer_->data(), mapped_);
        sample.values.push_back(misplaced_share(placed.pages_per_node, *p_.policy, p_.target_node(),
                                                p_.interleave_nodes));
      }
    }
    return sample;
  }

  void verify() override {
    std::vector<Check> checks;
    if (p_.measure == Measure::kMlock) {
      const LockState lock = query_lock_state(buffer_->data(), mapped_);
      checks.push_back({"buffer_locked", lock.locked(), lock.describe(), lock.locked_kb});
    }
    add_buffer_checks(checks, "buffer", *buffer_, p_.bound() ? p_.mem_node : std::nullopt, p_.page);
    if (p_.policy) {
      checks.push_back(policy_outcome_check(p_, query_page_placement(buffer_->data(), mapped_)));
    }
    if (thread_.bound()) checks.push_back(thread_.check());
    log_.record(std::move(checks));
    lock_ = MemoryLock();
  }

  std::vector<Check> checks() const override {
    std::vector<Check> all = log_.checks();
    if (thp_) {
      for (auto& c : thp_->checks()) all.push_back(std::move(c));
    }
    return all;
  }
  std::uint64_t operations_per_sample() const override { return 1; }
  std::uint64_t bytes_per_sample() const override { return mapped_; }

 private:
  const char* action() const { return p_.measure == Measure::kMlock ? "mlock" : "first touch"; }

  // Maps a fresh buffer and times the first touch or the mlock of it; `record`: a sample, whose
  // THP fault conditions the checks report (the warm-up's are not).
  double cycle(bool record) {
    // The previous buffer goes first: two live copies could exceed memory or the hugetlb pool,
    // and its freed pages are there for the compaction to use.
    lock_ = MemoryLock();
    buffer_.reset();
    std::optional<ThpFaultConditions::Start> start;
    if (thp_) start = thp_->before_sample();
    buffer_.emplace(p_.buffer());
    double seconds = 0;
    if (p_.measure == Measure::kFirstTouch) {
      seconds = time_on_host([&] { buffer_->touch(); });
    } else {
      buffer_->touch();
      seconds = time_on_host([&] { lock_ = MemoryLock(buffer_->data(), mapped_); });
    }
    if (thp_ && record) thp_->after_sample(*start);
    return seconds;
  }

  HostMemoryParams p_;
  ThreadPlacement thread_;
  std::uint64_t page_bytes_;
  std::optional<HostBuffer> buffer_;
  std::uint64_t mapped_ = 0;
  MemoryLock lock_;  // after the buffer: unlocked before it is unmapped
  // THP cases only.
  std::optional<ThpFaultConditions> thp_;
  CheckLog log_;
};

}  // namespace

std::unique_ptr<CaseBench> make_fresh_buffer_bench(const HostMemoryParams& p,
                                                   const Machine& machine) {
  return std::make_unique<FreshBufferBench>(p, machine);
}

}  // namespace pathbench
