// The `host_memory` family: host memcpy per NUMA node pair (the core's block loop on the host
// clock), first-touch and mlock cost (bench/host_memory_fresh.cpp).
#include "bench/host_memory.hpp"

#include <cstring>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "measure/block_bench.hpp"
#include "measure/check_log.hpp"
#include "measure/pattern.hpp"
#include "measure/under_pinning_pressure.hpp"
#include "placement/buffer_checks.hpp"
#include "placement/thread_placement.hpp"
#include "scenario/typed_axis.hpp"

namespace pathbench {

namespace {

using Measure = HostMemoryParams::Measure;
constexpr std::uint64_t kPatternSeed = 0x686f73745f6d656dULL;  // "host_mem"

const EnumAxis<Measure> kMeasure{
    "measure",
    {{"memcpy", Measure::kMemcpy},
     {"first_touch", Measure::kFirstTouch},
     {"mlock", Measure::kMlock}},
    "what is timed: memcpy bandwidth, first-touch page faults, or mlock"};
const EnumAxis<PageType> kPage{
    "page",
    {{"4k", PageType::k4K}, {"thp", PageType::kThp}, {"hugetlb", PageType::kHugetlb}},
    "page backing of the host buffers (default 4k)"};
const IntegerAxis kCpuNode{"cpu_node", 0, 4095,
                           "NUMA node whose CPUs run the thread (default: not bound)"};
const IntegerAxis kMemNode{
    "mem_node", 0, 4095,
    "NUMA node the buffers are bound to with MPOL_BIND (default: first touch)"};
const IntegerAxis kBytes{"bytes", 4096, std::int64_t{1} << 40, "size of each buffer in bytes"};
const IntegerAxis kPinnedPct{
    "pinned_pct", 0, kMaxPinCapPct,
    "share of the node's RAM (MemTotal, percent) mlock'ed for the whole case before its buffers "
    "are mapped: host throughput under pinning pressure. Cases above the run's cap "
    "(--max-pinned-pct, default 50) are skipped; 0 is the unpressured reference"};

HostMemoryParams parse(const CaseSpec& spec) {
  HostMemoryParams p;
  p.measure = kMeasure.decode(spec);
  p.page = kPage.decode_or(spec, PageType::k4K);
  if (const auto node = kCpuNode.decode_optional(spec)) p.cpu_node = static_cast<int>(*node);
  if (const auto node = kMemNode.decode_optional(spec)) p.mem_node = static_cast<int>(*node);
  p.bytes = static_cast<std::uint64_t>(kBytes.decode(spec));
  if (const auto pct = kPinnedPct.decode_optional(spec)) p.pinned_pct = static_cast<int>(*pct);
  return p;
}

// memcpy between two buffers of the same page kind on the same node, from a thread on cpu_node.
class MemcpyBench final : public BlockBench {
 public:
  MemcpyBench(const HostMemoryParams& p, const Machine& machine)
      : BlockBench(shape(p)),
        p_(p),
        thread_(machine, p.cpu_node),
        src_(p.buffer()),
        dst_(p.buffer()) {
    use_clock(std::make_unique<HostClock>());
    // First touch happens here, on the bound thread: without a mem_node the pages land on the
    // thread's node, which is the placement the case then reports.
    fill_pattern(src_.span(), kPatternSeed);
    dst_.touch();
  }

  std::vector<MetricSpec> metrics() const override {
    return host_memory_metrics(Measure::kMemcpy, "");
  }
  std::vector<Check> checks() const override {
    std::vector<Check> all = log_.checks();
    for (auto& c : BlockBench::checks()) all.push_back(std::move(c));
    return all;
  }
  std::span<std::byte> destination() { return dst_.span(); }

 private:
  static BlockShape shape(const HostMemoryParams& p) {
    BlockShape s;
    s.bytes_per_op = p.bytes;
    s.max_ops = 1024;
    s.first_block_ops = 0;  // one timed copy sizes the block
    s.probe_ops = 1;
    s.verified = "the destination matched the source";
    return s;
  }

  void enqueue(std::uint64_t ops) override {
    for (std::uint64_t i = 0; i < ops; ++i) {
      std::memcpy(dst_.data(), src_.data(), p_.bytes);
      // Repeating an identical memcpy is idempotent; the barrier keeps the compiler from merging
      // the iterations.
      asm volatile("" : : "r"(dst_.data()) : "memory");
    }
  }
  void complete() override {}
  // Cleared outside the timed region, so a copy that did nothing cannot pass verify().
  void before_sample() override { std::memset(dst_.data(), 0, dst_.size()); }

  void check_destination() override {
    verify_pattern(dst_.span(), kPatternSeed, "memcpy destination");
    std::vector<Check> checks;
    checks.push_back({"destination_pattern", true,
                      std::to_string(p_.bytes) + " bytes of the destination match the source",
                      nullptr});
    add_buffer_checks(checks, "source", src_, p_.mem_node, p_.page);
    add_buffer_checks(checks, "destination", dst_, p_.mem_node, p_.page);
    if (thread_.bound()) checks.push_back(thread_.check());
    log_.record(std::move(checks));
  }

  std::vector<double> values(const BlockTimes& t) const override {
    const double seconds = t.slowest();
    if (!(seconds > 0.0)) {
      throw CaseFailure("the steady clock measured no time for " + std::to_string(t.ops) +
                        " copies of " + std::to_string(p_.bytes) + " bytes");
    }
    const double ops = static_cast<double>(t.ops);
    return {static_cast<double>(p_.bytes) * ops / seconds / kGB, seconds / ops};
  }

  HostMemoryParams p_;
  ThreadPlacement thread_;
  HostBuffer src_;
  HostBuffer dst_;
  CheckLog log_;
};

class HostMemoryFamily final : public DeclaredFamily {
 public:
  HostMemoryFamily()
      : DeclaredFamily({"host_memory",
                        "host memcpy bandwidth per NUMA node pair, first-touch fault cost (4 KiB "
                        "vs THP vs hugetlb) and mlock cost, optionally while a share of RAM is "
                        "pinned; verifies page node (move_pages), huge backing and locks (smaps)",
                        axis_schemas(kMeasure, kPage, kCpuNode, kMemNode, kBytes, kPinnedPct),
                        {"measure", "bytes"}}) {}

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    const HostMemoryParams p = parse(spec);
    if (p.measure == Measure::kMlock && p.page == PageType::kHugetlb) {
      // mlock_fixup() leaves hugetlb VMAs alone (their pages are never swapped): the call returns
      // 0 without locking anything, so there would be nothing to measure.
      return "measure 'mlock' with page 'hugetlb' measures nothing: the kernel does not mlock "
             "hugetlb mappings (they are never swapped); exclude this combination";
    }
    return std::nullopt;
  }

  // Huge kinds round each buffer up to whole 2 MiB pages (a larger hugetlb size is only known
  // from the machine; the requirements check the pool with it).
  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const HostMemoryParams p = parse(spec);
    return {static_cast<std::uint64_t>(p.buffers()) * p.mapped(2u << 20), 0};
  }

  Requirements requirements(const CaseSpec& spec) const override {
    const HostMemoryParams p = parse(spec);
    Requirements needs;
    if (p.cpu_node) needs.numa_node(*p.cpu_node, true);
    if (p.mem_node) needs.numa_node(*p.mem_node);
    if (p.page == PageType::kThp) needs.transparent_huge_pages();
    if (p.page == PageType::kHugetlb) {
      needs.hugetlb_pages(p.bytes, static_cast<std::uint64_t>(p.buffers()));
    }
    if (p.measure == Measure::kMlock) needs.memlock(p.mapped(2u << 20));
    if (p.pinned_pct) {
      needs.pinned_share(*p.pinned_pct,
                         static_cast<std::uint64_t>(p.buffers()) * p.mapped(2u << 20));
    }
    return needs;
  }

  // The page size is the machine's (base page, THP or hugetlb size): "<page>" stands for it.
  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override {
    return metric_names_of(host_memory_metrics(parse(spec).measure, "<page>"));
  }

  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    // Tests prepare cases directly; the runner has judged the requirements already.
    if (auto why = requirements(spec).unmet(machine, device)) throw SkipCase(*why);
    const HostMemoryParams p = parse(spec);
    const auto make_bench = [&]() -> std::unique_ptr<CaseBench> {
      if (p.measure == Measure::kMemcpy) return std::make_unique<MemcpyBench>(p, machine);
      return make_fresh_buffer_bench(p, machine);
    };
    if (!p.pinned_pct) return make_bench();
    return under_pinning_pressure({.pct = *p.pinned_pct,
                                   .bytes = pinned_share_bytes(machine, *p.pinned_pct),
                                   .mem_total_bytes = machine.mem_total_bytes,
                                   .cap_pct = machine.pin_cap_pct,
                                   .memlock_limit_bytes = machine.memlock_limit_bytes},
                                  make_bench);
  }
};

}  // namespace

std::vector<MetricSpec> host_memory_metrics(Measure measure, const std::string& page) {
  switch (measure) {
    case Measure::kMemcpy:
      return {{"bandwidth", "GB/s", Better::kHigher}, {"time_per_copy", "s", Better::kLower}};
    case Measure::kFirstTouch:
      return {{"seconds_per_gib", "s/GiB", Better::kLower},
              {"time_per_page_" + page, "s", Better::kLower}};
    case Measure::kMlock:
      return {{"seconds_per_gib", "s/GiB", Better::kLower}};
  }
  return {};
}

std::unique_ptr<Family> make_host_memory_family() { return std::make_unique<HostMemoryFamily>(); }

std::span<std::byte> host_memory_destination_for_testing(CaseBench& bench) {
  auto* memcpy_bench = dynamic_cast<MemcpyBench*>(&bench);
  if (memcpy_bench == nullptr) throw std::invalid_argument("not a host_memory memcpy case");
  return memcpy_bench->destination();
}

}  // namespace pathbench
