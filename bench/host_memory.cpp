// The `host_memory` family: host memcpy per NUMA node pair (the core's block loop on the host
// clock), first-touch and mlock cost (bench/host_memory_fresh.cpp).
#include "bench/host_memory.hpp"

#include <cstring>
#include <exception>
#include <thread>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "measure/block_bench.hpp"
#include "measure/check_log.hpp"
#include "measure/pattern.hpp"
#include "measure/under_pinning_pressure.hpp"
#include "placement/buffer_checks.hpp"
#include "placement/memory_policy.hpp"
#include "placement/numa_balancing.hpp"
#include "placement/page_placement.hpp"
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
const EnumAxis<MemoryPolicyMode> kPolicy{
    "policy",
    {{"bind", MemoryPolicyMode::kBind},
     {"preferred", MemoryPolicyMode::kPreferred},
     {"interleave", MemoryPolicyMode::kInterleave},
     {"local", MemoryPolicyMode::kLocal}},
    "NUMA policy of the buffers before first touch: bind (MPOL_BIND to mem_node; the default "
    "with mem_node), preferred (mem_node first, other nodes when it is full), interleave (page "
    "by page over every node with memory), local (none: pages land on cpu_node, where the "
    "touching thread runs); where the pages landed is counted per node (misplaced_share)"};
const IntegerAxis kMemoryCap{
    "memory_cap", 4096, std::int64_t{1} << 40,
    "first_touch only: each sample's buffer is faulted in by a child process in a memory cgroup "
    "capped at this many bytes, below `bytes`: what the policy does when the memory it may use "
    "cannot hold the buffer (reclaim, then the OOM killer). Needs root and a writable memory "
    "cgroup; skipped otherwise"};
const IntegerAxis kTouchNode{
    "touch_node", 0, 4095,
    "memcpy only: the buffers are first touched from this node's CPUs, with no policy, then "
    "copied from cpu_node's (memory a loader thread on the other socket faulted in); "
    "misplaced_share is the share of their pages not on cpu_node after each sample"};
const EnumAxis<bool> kNumaBalancing{
    "numa_balancing",
    {{"off", false}, {"on", true}},
    "with touch_node: /proc/sys/kernel/numa_balancing set for the case and restored after it, "
    "so the pair shows whether the kernel moves the pages to the copying node (needs two NUMA "
    "nodes, root and run --allow-numa-balancing-change; skipped otherwise, saying why)"};
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
  p.policy = kPolicy.decode_optional(spec);
  if (const auto node = kTouchNode.decode_optional(spec)) p.touch_node = static_cast<int>(*node);
  p.numa_balancing = kNumaBalancing.decode_optional(spec);
  if (const auto cap = kMemoryCap.decode_optional(spec)) {
    p.memory_cap = static_cast<std::uint64_t>(*cap);
  }
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
    if (p.numa_balancing) balancing_.emplace(*p.numa_balancing ? 1 : 0);
    // First touch happens here, on the bound thread: without a mem_node the pages land on the
    // thread's node, which is the placement the case then reports. With a touch_node, a thread on
    // that node touches them instead.
    const auto touch = [this] {
      fill_pattern(src_.span(), kPatternSeed);
      dst_.touch();
    };
    if (!p.touch_node) {
      touch();
      return;
    }
    std::exception_ptr failed;
    std::thread toucher([&] {
      try {
        ThreadPlacement there(machine, p.touch_node);
        touch();
      } catch (...) {
        failed = std::current_exception();
      }
    });
    toucher.join();
    if (failed) std::rethrow_exception(failed);
  }

  std::vector<MetricSpec> metrics() const override { return host_memory_metrics(p_, ""); }
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
    const std::optional<int> bound = p_.bound() ? p_.mem_node : std::nullopt;
    add_buffer_checks(checks, "source", src_, bound, p_.page);
    add_buffer_checks(checks, "destination", dst_, bound, p_.page);
    if (p_.policy) {
      checks.push_back(policy_outcome_check(p_, query_page_placement(src_.data(), src_.size())));
    }
    if (p_.touch_node) {
      const PagePlacement src = query_page_placement(src_.data(), src_.size());
      checks.push_back({"page_migration", true,
                        "source touched on node " + std::to_string(*p_.touch_node) +
                            ", copied from node " + std::to_string(*p_.cpu_node) +
                            "; after the sample: " + src.describe(),
                        src.fraction_on(*p_.cpu_node)});
    }
    if (balancing_) checks.push_back(balancing_->check());
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
    std::vector<double> v = {static_cast<double>(p_.bytes) * ops / seconds / kGB, seconds / ops};
    if (p_.touch_node) {
      // Both buffers' pages (sampled), against the copying thread's node.
      PagePlacement both = query_page_placement(src_.data(), src_.size());
      for (const auto& [node, pages] :
           query_page_placement(dst_.data(), dst_.size()).pages_per_node) {
        both.pages_per_node[node] += pages;
      }
      v.push_back(misplaced_share(both.pages_per_node, MemoryPolicyMode::kLocal, p_.cpu_node, {}));
    }
    return v;
  }

  HostMemoryParams p_;
  ThreadPlacement thread_;
  // Before the buffers: set before their first touch, restored after they are unmapped.
  std::optional<NumaBalancingScope> balancing_;
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
                        axis_schemas(kMeasure, kPage, kCpuNode, kMemNode, kBytes, kPinnedPct,
                                     kPolicy, kMemoryCap, kTouchNode, kNumaBalancing),
                        {"measure", "bytes"}}) {}

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    const HostMemoryParams p = parse(spec);
    if (p.measure == Measure::kMlock && p.page == PageType::kHugetlb) {
      // mlock_fixup() leaves hugetlb VMAs alone (their pages are never swapped): the call returns
      // 0 without locking anything, so there would be nothing to measure.
      return "measure 'mlock' with page 'hugetlb' measures nothing: the kernel does not mlock "
             "hugetlb mappings (they are never swapped); exclude this combination";
    }
    if (p.policy) {
      const char* name = policy_name(*p.policy);
      switch (*p.policy) {
        case MemoryPolicyMode::kBind:
        case MemoryPolicyMode::kPreferred:
          if (!p.mem_node) return "policy " + std::string(name) + " needs mem_node (its node)";
          break;
        case MemoryPolicyMode::kInterleave:
          if (p.mem_node) {
            return std::string(
                "policy interleave spreads pages over every node with memory: "
                "mem_node does not apply");
          }
          break;
        case MemoryPolicyMode::kLocal:
          if (p.mem_node) return std::string("policy local sets no node: mem_node does not apply");
          if (!p.cpu_node) {
            return std::string(
                "policy local puts pages on the touching thread's node: it needs "
                "cpu_node");
          }
          break;
      }
    }
    if (p.touch_node) {
      if (p.measure != Measure::kMemcpy)
        return std::string("touch_node applies only to measure memcpy");
      if (!p.cpu_node) return std::string("touch_node needs cpu_node: the node whose CPUs copy");
      if (p.mem_node || p.policy) {
        return std::string(
            "touch_node leaves the buffers unbound, so the kernel may move them: "
            "mem_node and policy do not apply");
      }
    }
    if (p.numa_balancing && !p.touch_node) {
      return std::string(
          "numa_balancing applies to memcpy with touch_node (buffers touched on "
          "one node, copied from another)");
    }
    if (p.memory_cap) {
      if (p.measure != Measure::kFirstTouch) {
        return std::string("memory_cap applies only to measure first_touch");
      }
      if (*p.memory_cap >= p.bytes) {
        return std::string(
            "memory_cap must be below bytes: a cap the buffer fits under "
            "changes nothing");
      }
      if (p.page == PageType::kHugetlb) {
        return std::string(
            "memory_cap needs page 4k or thp: hugetlb pages are charged to the "
            "hugetlb controller, not to the memory cgroup");
      }
      if (p.pinned_pct) return std::string("memory_cap and pinned_pct do not go together");
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
    if (p.touch_node) needs.numa_node(*p.touch_node, true);
    if (p.numa_balancing) needs.numa_balancing_change(*p.numa_balancing ? 1 : 0);
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
    return metric_names_of(host_memory_metrics(parse(spec), "<page>"));
  }

  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int device) const override {
    // Tests prepare cases directly; the runner has judged the requirements already.
    if (auto why = requirements(spec).unmet(machine, device)) throw SkipCase(*why);
    HostMemoryParams p = parse(spec);
    if (p.policy == MemoryPolicyMode::kInterleave) p.interleave_nodes = machine.numa_nodes;
    const auto make_bench = [&]() -> std::unique_ptr<CaseBench> {
      if (p.measure == Measure::kMemcpy) return std::make_unique<MemcpyBench>(p, machine);
      if (p.memory_cap) return make_capped_touch_bench(p, machine);
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

std::vector<MetricSpec> host_memory_metrics(const HostMemoryParams& p, const std::string& page) {
  switch (p.measure) {
    case Measure::kMemcpy:
      if (p.touch_node) {
        return {{"bandwidth", "GB/s", Better::kHigher},
                {"time_per_copy", "s", Better::kLower},
                {"misplaced_share", "ratio", Better::kLower}};
      }
      return {{"bandwidth", "GB/s", Better::kHigher}, {"time_per_copy", "s", Better::kLower}};
    case Measure::kFirstTouch:
      if (p.memory_cap) {
        return {{"touched_share", "ratio", Better::kHigher},
                {"oom_kills", "kills", Better::kLower},
                {"time_to_end", "s", Better::kLower}};
      }
      if (p.policy) {
        return {{"seconds_per_gib", "s/GiB", Better::kLower},
                {"time_per_page_" + page, "s", Better::kLower},
                {"misplaced_share", "ratio", Better::kLower}};
      }
      return {{"seconds_per_gib", "s/GiB", Better::kLower},
              {"time_per_page_" + page, "s", Better::kLower}};
    case Measure::kMlock:
      return {{"seconds_per_gib", "s/GiB", Better::kLower}};
  }
  return {};
}

std::unique_ptr<Family> make_host_memory_family() { return std::make_unique<HostMemoryFamily>(); }

Check policy_outcome_check(const HostMemoryParams& p, const PagePlacement& placement) {
  const MemoryPolicyMode mode = p.policy.value_or(MemoryPolicyMode::kBind);
  const double misplaced =
      misplaced_share(placement.pages_per_node, mode, p.target_node(), p.interleave_nodes);
  nlohmann::ordered_json per_node = nlohmann::ordered_json::object();
  for (const auto& [node, pages] : placement.pages_per_node) per_node[std::to_string(node)] = pages;
  std::string intent;
  switch (mode) {
    case MemoryPolicyMode::kBind:
      intent = "bind to node " + std::to_string(p.mem_node.value_or(-1));
      break;
    case MemoryPolicyMode::kPreferred:
      intent = "preferred node " + std::to_string(p.mem_node.value_or(-1)) +
               " (other nodes when it is full)";
      break;
    case MemoryPolicyMode::kInterleave:
      intent = "interleave over " + std::to_string(p.interleave_nodes.size()) + " node(s)";
      break;
    case MemoryPolicyMode::kLocal:
      intent =
          "local to the touching thread (node " + std::to_string(p.cpu_node.value_or(-1)) + ")";
      break;
  }
  const int pct = static_cast<int>(misplaced * 1000 + 0.5);
  return {"policy_outcome", mode != MemoryPolicyMode::kBind || misplaced <= 0.01,
          intent + ": " + placement.describe() + "; " + std::to_string(pct / 10) + "." +
              std::to_string(pct % 10) + " % of the pages not where the policy puts them",
          per_node};
}

std::span<std::byte> host_memory_destination_for_testing(CaseBench& bench) {
  auto* memcpy_bench = dynamic_cast<MemcpyBench*>(&bench);
  if (memcpy_bench == nullptr) throw std::invalid_argument("not a host_memory memcpy case");
  return memcpy_bench->destination();
}

}  // namespace pathbench
