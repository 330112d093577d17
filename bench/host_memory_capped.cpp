// host_memory's first_touch with memory_cap: what a NUMA policy does when the memory it may use
// cannot hold the buffer. Each sample maps a fresh buffer under the case's policy and has a child
// process in a capped memory cgroup fault it in (src/placement/capped_touch.*).
#include "bench/host_memory.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "measure/check_log.hpp"
#include "placement/capped_touch.hpp"
#include "placement/memory_cgroup.hpp"
#include "placement/thread_placement.hpp"

namespace pathbench {

namespace {

// Sampled resident pages of a survivor may exceed the cap by this much before the cap is
// judged not to have held (the cgroup also charges the child's own page tables and stack).
constexpr std::uint64_t kCapSlack = std::uint64_t{4} << 20;

class CappedTouchBench final : public CaseBench {
 public:
  CappedTouchBench(const HostMemoryParams& p, const Machine& machine)
      : p_(p), thread_(machine, p.cpu_node) {
    MemoryCgroup probe(*p.memory_cap);  // no cgroup here: skipped now, not failed per sample
  }

  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }
  std::vector<MetricSpec> metrics() const override { return host_memory_metrics(p_, ""); }
  std::string timing_detail() const override {
    return "host steady clock in the child process, from its first write to the buffer to its "
           "last (or to the last page it wrote before it was killed), one fresh " +
           format_bytes(p_.bytes) + " buffer per sample under a " + format_bytes(*p_.memory_cap) +
           " memory cgroup";
  }

  void warm_up(double) override {}

  Sample measure() override {
    const HostBuffer buffer(p_.buffer());  // mapped and its policy set; only the child touches it
    last_ = touch_under_cap(buffer, *p_.memory_cap);
    return {last_.seconds,
            {last_.touched_share(), static_cast<double>(last_.oom_kills), last_.seconds}};
  }

  void verify() override {
    std::vector<Check> checks;
    const std::uint64_t resident_bytes =
        last_.resident.pages_sampled == 0
            ? 0
            : static_cast<std::uint64_t>(static_cast<double>(last_.pages * 4096) *
                                         static_cast<double>(last_.resident.pages_sampled -
                                                             last_.resident.pages_not_present -
                                                             last_.resident.pages_error) /
                                         static_cast<double>(last_.resident.pages_sampled));
    const bool held = last_.oom_kills > 0 || (!last_.killed && !last_.timed_out &&
                                              resident_bytes <= *p_.memory_cap + kCapSlack);
    checks.push_back({"cap_held", held,
                      held ? "the cap held: " + last_.describe() + " (" + last_.cgroup + ")"
                           : "the cap did not visibly hold: " + last_.describe() + " (" +
                                 last_.cgroup + "; about " + format_bytes(resident_bytes) +
                                 " resident)",
                      last_.touched_share()});
    if (!last_.killed && !last_.timed_out) {
      checks.push_back(policy_outcome_check(p_, last_.resident));
    }
    if (thread_.bound()) checks.push_back(thread_.check());
    log_.record(std::move(checks));
  }

  std::vector<Check> checks() const override { return log_.checks(); }
  std::uint64_t operations_per_sample() const override { return 1; }
  std::uint64_t bytes_per_sample() const override { return p_.bytes; }

 private:
  HostMemoryParams p_;
  ThreadPlacement thread_;
  CappedTouchOutcome last_;
  CheckLog log_;
};

}  // namespace

std::unique_ptr<CaseBench> make_capped_touch_bench(const HostMemoryParams& p,
                                                   const Machine& machine) {
  return std::make_unique<CappedTouchBench>(p, machine);
}

}  // namespace pathbench
