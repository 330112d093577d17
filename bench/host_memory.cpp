#include "bench/host_memory.hpp"

#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "inventory/requirements.hpp"
#include "core/host_clock.hpp"
#include "measure/pattern.hpp"
#include "placement/host_buffer.hpp"
#include "placement/page_placement.hpp"
#include "placement/smaps.hpp"
#include "placement/thread_affinity.hpp"

namespace pathbench {

namespace {

constexpr std::uint64_t kPatternSeed = 0x686f73745f6d656dULL;  // "host_mem"
constexpr std::uint64_t kMaxCopiesPerSample = 1024;
constexpr double kMinFractionOnNode = 0.99;
constexpr double kMinHugeFraction = 0.9;
constexpr std::uint64_t kUnlimited = UINT64_MAX;
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 40;

enum class Measure { kMemcpy, kFirstTouch, kMlock };

std::optional<Measure> measure_from_string(std::string_view s) {
  if (s == "memcpy") return Measure::kMemcpy;
  if (s == "first_touch") return Measure::kFirstTouch;
  if (s == "mlock") return Measure::kMlock;
  return std::nullopt;
}

struct Params {
  Measure measure = Measure::kMemcpy;
  PageType page = PageType::k4K;
  std::optional<int> cpu_node;
  std::optional<int> mem_node;
  std::uint64_t bytes = 0;
};

// Why the axis values cannot form a case, else nothing. Shared by invalid_combination and parse.
std::optional<std::string> params_problem(const CaseSpec& spec) {
  if (!spec.has("measure")) return "axis 'measure' is required";
  if (!spec.params.at("measure").is_string() || !measure_from_string(spec.str("measure"))) {
    return "axis 'measure' must be one of memcpy, first_touch, mlock";
  }
  if (spec.has("page") &&
      (!spec.params.at("page").is_string() || !page_type_from_string(spec.str("page")))) {
    return "axis 'page' must be one of 4k, thp, hugetlb";
  }
  if (!spec.has("bytes")) return "axis 'bytes' is required";
  if (!spec.params.at("bytes").is_number_integer() || spec.integer("bytes") < 4096 ||
      spec.integer("bytes") > kMaxBytes) {
    return "axis 'bytes' must be an integer from 4096 to 2^40";
  }
  if (spec.str("measure") == "mlock" && spec.has("page") && spec.str("page") == "hugetlb") {
    // mlock_fixup() leaves hugetlb VMAs alone (their pages are never swapped): the call returns 0
    // without locking anything, so there would be nothing to measure.
    return "measure 'mlock' with page 'hugetlb' measures nothing: the kernel does not mlock "
           "hugetlb mappings (they are never swapped); exclude this combination";
  }
  for (const char* axis : {"cpu_node", "mem_node"}) {
    if (spec.has(axis) && (!spec.params.at(axis).is_number_integer() || spec.integer(axis) < 0 ||
                           spec.integer(axis) > 4095)) {
      return std::string("axis '") + axis + "' must be a NUMA node id (integer 0-4095)";
    }
  }
  return std::nullopt;
}

Params parse(const CaseSpec& spec) {
  if (auto problem = params_problem(spec)) throw InputError(spec.file, spec.pointer, *problem);
  Params p;
  p.measure = *measure_from_string(spec.str("measure"));
  if (spec.has("page")) p.page = *page_type_from_string(spec.str("page"));
  if (spec.has("cpu_node")) p.cpu_node = static_cast<int>(spec.integer("cpu_node"));
  if (spec.has("mem_node")) p.mem_node = static_cast<int>(spec.integer("mem_node"));
  p.bytes = static_cast<std::uint64_t>(spec.integer("bytes"));
  return p;
}

std::uint64_t round_up(std::uint64_t value, std::uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// What one buffer of the case occupies: huge kinds round up to whole huge pages.
std::uint64_t mapped_bytes(const Params& p, std::uint64_t hugetlb_page_bytes) {
  switch (p.page) {
    case PageType::k4K:
      return round_up(p.bytes, 4096);
    case PageType::kThp:
      return round_up(p.bytes, 2u << 20);
    case PageType::kHugetlb:
      return round_up(p.bytes, hugetlb_page_bytes);
  }
  return p.bytes;
}

int buffers_of(const Params& p) { return p.measure == Measure::kMemcpy ? 2 : 1; }

std::string join(const std::vector<int>& values) {
  std::string text;
  for (const int v : values) {
    if (!text.empty()) text += ",";
    text += std::to_string(v);
  }
  return text.empty() ? "none" : text;
}


// "4k", "2m", "1g": the page unit a per-page metric counts in, spelled into its name.
std::string page_label(std::uint64_t bytes) {
  if (bytes % (1ULL << 30) == 0) return std::to_string(bytes >> 30) + "g";
  if (bytes % (1ULL << 20) == 0) return std::to_string(bytes >> 20) + "m";
  if (bytes % (1ULL << 10) == 0) return std::to_string(bytes >> 10) + "k";
  return std::to_string(bytes);
}

// The metrics a case records, in order: what its bench's metrics() returns and what the family
// declares for gate blocks. `page` is the page_label() of the buffer's page size (first_touch
// counts per page).
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

// The system calls themselves: the sanitizers intercept mlock/munlock as no-ops returning 0, and
// a sanitizer build would then time (and fail verifying) a lock that never happened. glibc's
// wrappers are plain system calls, so this costs nothing otherwise.
int lock_range(void* addr, std::size_t len) {
  return static_cast<int>(::syscall(SYS_mlock, addr, len));
}
int unlock_range(void* addr, std::size_t len) {
  return static_cast<int>(::syscall(SYS_munlock, addr, len));
}

// The CPUs a cpu_node binding pins the thread to; nothing when the case does not bind.
std::optional<std::vector<int>> cpus_for(const Params& p, const Machine& machine) {
  if (!p.cpu_node) return std::nullopt;
  const std::vector<int>* cpus = machine.cpus_of_node(*p.cpu_node);
  if (cpus == nullptr || cpus->empty()) {
    throw SkipCase("NUMA node " + std::to_string(*p.cpu_node) +
                   " has no CPUs this process may run on (nodes: " + join(machine.numa_nodes) +
                   ")");
  }
  return *cpus;
}

// Affinity is per thread, so every call that runs work binds for its own duration: nothing
// depends on the core calling prepare, measure and verify from the same thread.
class BindScope {
 public:
  explicit BindScope(const std::optional<std::vector<int>>& cpus) {
    if (cpus) scope_.emplace(*cpus);
  }

 private:
  std::optional<ThreadAffinityScope> scope_;
};

HostBufferRequest request_for(const Params& p) {
  return HostBufferRequest{p.bytes, p.page, p.mem_node};
}

Check placement_check(const std::string& what, const HostBuffer& buffer,
                      std::optional<int> mem_node) {
  Check check;
  check.name = what + "_placement";
  PagePlacement placement;
  try {
    placement = query_page_placement(buffer.data(), buffer.mapped_size());
  } catch (const SystemError& e) {
    // A bind that cannot be confirmed is not trusted; without a bind nothing was claimed.
    check.passed = !mem_node.has_value();
    check.detail = std::string("cannot query page placement: ") + e.what();
    return check;
  }
  nlohmann::ordered_json per_node = nlohmann::ordered_json::object();
  for (const auto& [node, pages] : placement.pages_per_node) per_node[std::to_string(node)] = pages;
  if (mem_node) {
    const double fraction = placement.fraction_on(*mem_node);
    check.passed = fraction >= kMinFractionOnNode;
    check.detail = "expected >= 99 % of sampled pages on node " + std::to_string(*mem_node) +
                   " (move_pages): " + placement.describe();
    check.value = fraction;
  } else {
    check.passed = true;
    check.detail = "no memory binding requested; pages are where first touch put them: " +
                   placement.describe();
    check.value = per_node;
  }
  return check;
}

Check huge_backing_check(const std::string& what, const HostBuffer& buffer, PageType page) {
  Check check;
  check.name = what + "_huge_backing";
  const auto backing = query_huge_backing(buffer.data(), buffer.mapped_size());
  if (!backing) {
    check.passed = false;
    check.detail = "no /proc/self/smaps entry covers the buffer";
    return check;
  }
  check.value = backing->fraction();
  switch (page) {
    case PageType::k4K:
      check.passed = backing->huge_kb == 0;
      check.detail = "expected no huge pages (MADV_NOHUGEPAGE): " + backing->describe();
      break;
    case PageType::kThp:
      check.passed = !backing->hugetlb && backing->fraction() >= kMinHugeFraction;
      check.detail = "expected >= 90 % THP-backed (MADV_HUGEPAGE): " + backing->describe();
      if (!check.passed) {
        check.detail +=
            "; the range is (partly) mapped with 4 KiB pages: THP allocation fell back or the "
            "huge pages were split (fragmented memory? see "
            "/sys/kernel/mm/transparent_hugepage/defrag)";
      }
      break;
    case PageType::kHugetlb:
      check.passed = backing->hugetlb && backing->fraction() >= kMinHugeFraction;
      check.detail = "expected >= 90 % hugetlb-backed (MAP_HUGETLB): " + backing->describe();
      break;
  }
  return check;
}

// The core reads checks() once, after the last repetition: a check that failed in any
// repetition stays failed (with the repetition named) so a later passing sample cannot hide it.
class CheckLog {
 public:
  void record(std::vector<Check> fresh) {
    ++repetition_;
    for (auto& check : fresh) {
      if (!check.passed) {
        check.detail = "repetition " + std::to_string(repetition_) + ": " + check.detail;
      }
      const auto same = std::find_if(checks_.begin(), checks_.end(),
                                     [&](const Check& c) { return c.name == check.name; });
      if (same == checks_.end()) {
        checks_.push_back(std::move(check));
      } else if (same->passed) {
        *same = std::move(check);
      }
    }
  }
  const std::vector<Check>& checks() const { return checks_; }

 private:
  int repetition_ = 0;
  std::vector<Check> checks_;
};

Check thread_check(int cpu, int node, const std::vector<int>& cpus) {
  Check check;
  check.name = "thread_cpu";
  check.passed = std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
  check.detail = "ran on CPU " + std::to_string(cpu) + "; node " + std::to_string(node) +
                 " CPUs: " + join(cpus);
  check.value = cpu;
  return check;
}

// memcpy between two buffers of the same page kind on the same node, from a thread on cpu_node.
class MemcpyBench final : public CaseBench {
 public:
  MemcpyBench(const Params& p, std::optional<std::vector<int>> cpus)
      : p_(p), cpus_(std::move(cpus)), src_(request_for(p)), dst_(request_for(p)) {
    const BindScope bind(cpus_);
    // First touch happens here, on the bound thread: without a mem_node the pages land on the
    // thread's node, which is the placement the case then reports.
    fill_pattern(src_.span(), kPatternSeed);
    dst_.touch();
  }

  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }

  std::vector<MetricSpec> metrics() const override {
    return host_memory_metrics(Measure::kMemcpy, "");
  }

  void warm_up(double min_time) override {
    const BindScope bind(cpus_);
    const double one = time_on_host([&] { copy_once(); });
    ops_ = operations_for(min_time, one, kMaxCopiesPerSample);
  }

  Sample measure() override {
    const BindScope bind(cpus_);
    // Cleared outside the timed region, so a copy that did nothing cannot pass verify().
    std::memset(dst_.data(), 0, dst_.size());
    const double seconds = time_on_host([&] {
      for (std::uint64_t i = 0; i < ops_; ++i) copy_once();
    });
    last_cpu_ = sched_getcpu();
    if (!(seconds > 0.0)) {
      throw CaseFailure("the steady clock measured no time for " + std::to_string(ops_) +
                        " copies of " + std::to_string(p_.bytes) + " bytes");
    }
    const double ops = static_cast<double>(ops_);
    return Sample{seconds, {static_cast<double>(p_.bytes) * ops / seconds / kGB, seconds / ops}};
  }

  void verify() override {
    verify_pattern(dst_.span(), kPatternSeed, "memcpy destination");
    std::vector<Check> checks;
    checks.push_back({"destination_pattern", true,
                      std::to_string(p_.bytes) + " bytes of the destination match the source",
                      nullptr});
    checks.push_back(placement_check("source", src_, p_.mem_node));
    checks.push_back(placement_check("destination", dst_, p_.mem_node));
    checks.push_back(huge_backing_check("source", src_, p_.page));
    checks.push_back(huge_backing_check("destination", dst_, p_.page));
    if (cpus_) checks.push_back(thread_check(last_cpu_, *p_.cpu_node, *cpus_));
    log_.record(std::move(checks));
  }

  std::vector<Check> checks() const override { return log_.checks(); }
  std::uint64_t operations_per_sample() const override { return ops_; }
  std::uint64_t bytes_per_sample() const override { return ops_ * p_.bytes; }

  std::span<std::byte> destination() { return dst_.span(); }

 private:
  void copy_once() {
    std::memcpy(dst_.data(), src_.data(), p_.bytes);
    // Repeating an identical memcpy is idempotent; the barrier keeps the compiler from merging
    // the iterations.
    asm volatile("" : : "r"(dst_.data()) : "memory");
  }

  Params p_;
  std::optional<std::vector<int>> cpus_;
  HostBuffer src_;
  HostBuffer dst_;
  std::uint64_t ops_ = 1;
  int last_cpu_ = -1;
  CheckLog log_;
};

// first_touch and mlock: one fresh buffer per sample, because both costs are paid once per page.
class FreshBufferBench final : public CaseBench {
 public:
  FreshBufferBench(const Params& p, std::optional<std::vector<int>> cpus)
      : p_(p), cpus_(std::move(cpus)), page_bytes_(page_size_of(p.page)) {
    // Mapping now makes an impossible request (no hugetlb pages, unusable node) a skip at prepare
    // time instead of a failure in the middle of the repetitions.
    buffer_.emplace(request_for(p_));
    mapped_ = buffer_->mapped_size();
    if (p_.measure == Measure::kMlock) {
      const BindScope bind(cpus_);
      buffer_->touch();
      lock_or_throw();
      unlock();
    }
  }

  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }

  std::vector<MetricSpec> metrics() const override {
    return host_memory_metrics(p_.measure, page_label(page_bytes_));
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
    if (p_.measure == Measure::kMlock) checks.push_back(locked_check());
    checks.push_back(huge_backing_check("buffer", *buffer_, p_.page));
    checks.push_back(placement_check("buffer", *buffer_, p_.mem_node));
    if (cpus_) checks.push_back(thread_check(last_cpu_, *p_.cpu_node, *cpus_));
    log_.record(std::move(checks));
    unlock();
  }

  std::vector<Check> checks() const override { return log_.checks(); }
  std::uint64_t operations_per_sample() const override { return 1; }
  std::uint64_t bytes_per_sample() const override { return mapped_; }

 private:
  const char* action() const { return p_.measure == Measure::kMlock ? "mlock" : "first touch"; }

  // Maps a fresh buffer and times the first touch or the mlock of it.
  double cycle() {
    // The previous buffer goes first: two live copies could exceed memory or the hugetlb pool.
    unlock();
    buffer_.reset();
    buffer_.emplace(request_for(p_));
    const BindScope bind(cpus_);
    double seconds = 0.0;
    if (p_.measure == Measure::kFirstTouch) {
      seconds = time_on_host([&] { buffer_->touch(); });
    } else {
      buffer_->touch();
      int err = 0;
      seconds = time_on_host([&] { err = lock_range(buffer_->data(), mapped_) == 0 ? 0 : errno; });
      if (err != 0) lock_failed(err);
      locked_ = true;
    }
    last_cpu_ = sched_getcpu();
    return seconds;
  }

  void lock_or_throw() {
    if (lock_range(buffer_->data(), mapped_) != 0) lock_failed(errno);
    locked_ = true;
  }

  [[noreturn]] void lock_failed(int err) const {
    if (err == EPERM || err == ENOMEM) {
      rlimit limit{};
      ::getrlimit(RLIMIT_MEMLOCK, &limit);
      const std::string current = limit.rlim_cur == RLIM_INFINITY
                                      ? std::string("unlimited")
                                      : format_bytes(static_cast<std::uint64_t>(limit.rlim_cur));
      throw SkipCase("mlock of " + format_bytes(mapped_) + " refused (" + std::strerror(err) +
                     "); RLIMIT_MEMLOCK is " + current + " (or memory is short); " + memlock_fix());
    }
    throw SystemError("mlock(" + std::to_string(mapped_) + " bytes)", err);
  }

  void unlock() {
    if (locked_ && buffer_) unlock_range(buffer_->data(), mapped_);
    locked_ = false;
  }

  // mlock returning 0 should mean VM_LOCKED on every VMA of the range: confirm it in smaps
  // ("lo" in VmFlags). A sanitizer's no-op interceptor or a kernel that skips the VMA would
  // otherwise go unnoticed.
  Check locked_check() const {
    Check check;
    check.name = "buffer_locked";
    std::ifstream in("/proc/self/smaps");
    std::ostringstream text;
    text << in.rdbuf();
    const auto begin = reinterpret_cast<std::uintptr_t>(buffer_->data());
    const auto end = begin + mapped_;
    std::uint64_t locked_kb = 0;
    int entries = 0, flagged = 0;
    for (const auto& e : parse_smaps(text.str())) {
      if (e.end <= begin || e.start >= end) continue;
      ++entries;
      locked_kb += e.locked_kb;
      std::istringstream flags(e.vm_flags);
      std::string flag;
      while (flags >> flag) {
        if (flag == "lo") {
          ++flagged;
          break;
        }
      }
    }
    check.passed = entries > 0 && flagged == entries;
    check.detail = std::to_string(flagged) + " of " + std::to_string(entries) +
                   " smaps entries of the buffer have VM_LOCKED ('lo'); Locked " +
                   std::to_string(locked_kb) + " kB";
    check.value = locked_kb;
    return check;
  }

  Params p_;
  std::optional<std::vector<int>> cpus_;
  std::uint64_t page_bytes_;
  std::optional<HostBuffer> buffer_;
  std::uint64_t mapped_ = 0;
  bool locked_ = false;
  int last_cpu_ = -1;
  CheckLog log_;
};

AxisSchema string_axis(std::string name, std::vector<std::string> allowed, std::string help) {
  AxisSchema axis;
  axis.name = std::move(name);
  axis.kind = AxisSchema::Kind::kString;
  axis.allowed = std::move(allowed);
  axis.help = std::move(help);
  return axis;
}

AxisSchema integer_axis(std::string name, std::int64_t min, std::int64_t max, std::string help) {
  AxisSchema axis;
  axis.name = std::move(name);
  axis.kind = AxisSchema::Kind::kInteger;
  axis.min = min;
  axis.max = max;
  axis.help = std::move(help);
  return axis;
}

class HostMemoryFamily final : public Family {
 public:
  HostMemoryFamily()
      : axes_{
            string_axis("measure", {"memcpy", "first_touch", "mlock"},
                        "what is timed: memcpy bandwidth, first-touch page faults, or mlock"),
            string_axis("page", {"4k", "thp", "hugetlb"},
                        "page backing of the host buffers (default 4k)"),
            integer_axis("cpu_node", 0, 4095,
                         "NUMA node whose CPUs run the thread (default: not bound)"),
            integer_axis(
                "mem_node", 0, 4095,
                "NUMA node the buffers are bound to with MPOL_BIND (default: first touch)"),
            integer_axis("bytes", 4096, kMaxBytes, "size of each buffer in bytes"),
        } {}

  std::string_view name() const override { return "host_memory"; }
  std::string_view description() const override {
    return "host memcpy bandwidth per NUMA node pair, first-touch fault cost (4 KiB vs THP vs "
           "hugetlb) and mlock cost; verifies page node (move_pages) and huge backing (smaps)";
  }
  const std::vector<AxisSchema>& axes() const override { return axes_; }
  std::vector<std::string> required_axes() const override { return {"measure", "bytes"}; }

  std::optional<std::string> invalid_combination(const CaseSpec& spec) const override {
    return params_problem(spec);
  }

  MemoryNeeds memory_needs(const CaseSpec& spec) const override {
    const Params p = parse(spec);
    // Huge kinds round each buffer up to whole 2 MiB pages (a larger hugetlb size is only known
    // from the machine; skip_reason checks the pool with it).
    return {static_cast<std::uint64_t>(buffers_of(p)) * mapped_bytes(p, 2u << 20), 0};
  }

  Requirements requirements(const CaseSpec& spec) const override {
    const Params p = parse(spec);
    Requirements needs;
    if (p.cpu_node) needs.numa_node(*p.cpu_node, true);
    if (p.mem_node) needs.numa_node(*p.mem_node);
    if (p.page == PageType::kThp) needs.transparent_huge_pages();
    if (p.page == PageType::kHugetlb) {
      needs.hugetlb_pages(p.bytes, static_cast<std::uint64_t>(buffers_of(p)));
    }
    if (p.measure == Measure::kMlock) needs.memlock(mapped_bytes(p, 2u << 20));
    return needs;
  }

  // The page size is the machine's (base page, THP or hugetlb size): "<page>" stands for it.
  std::optional<std::vector<std::string>> metric_names(const CaseSpec& spec) const override {
    return metric_names_of(host_memory_metrics(parse(spec).measure, "<page>"));
  }

  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine& machine,
                                     int /*device*/) const override {
    const Params p = parse(spec);
    auto cpus = cpus_for(p, machine);
    if (p.measure == Measure::kMemcpy) return std::make_unique<MemcpyBench>(p, std::move(cpus));
    return std::make_unique<FreshBufferBench>(p, std::move(cpus));
  }

 private:
  std::vector<AxisSchema> axes_;
};

}  // namespace

std::unique_ptr<Family> make_host_memory_family() { return std::make_unique<HostMemoryFamily>(); }


std::span<std::byte> host_memory_destination_for_testing(CaseBench& bench) {
  auto* memcpy_bench = dynamic_cast<MemcpyBench*>(&bench);
  if (memcpy_bench == nullptr) {
    throw std::invalid_argument("not a host_memory memcpy case");
  }
  return memcpy_bench->destination();
}

}  // namespace pathbench
