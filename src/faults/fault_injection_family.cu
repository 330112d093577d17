#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>

#include "core/errors.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_resources.hpp"
#include "faults/fault_injection_family.hpp"

namespace pathbench {

namespace {

// Writes through `target`: a valid buffer for "none", an address no allocation owns otherwise.
__global__ void store_kernel(volatile std::uint64_t* target) { *target = 0x70617468u; }

class FaultBench : public CaseBench {
 public:
  FaultBench(std::string fault, int device) : fault_(std::move(fault)), scope_(device) {
    if (fault_ == "out_of_memory") {
      std::size_t free_bytes = 0, total_bytes = 0;
      PB_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
      // Twice the GPU: refused by the allocator (cudaErrorMemoryAllocation, not sticky).
      DeviceMemory too_big(2 * total_bytes);
    }
    buffer_ = DeviceMemory(sizeof(std::uint64_t));
  }
  TimingMethod timing_method() const override { return TimingMethod::kHostSteadyClock; }
  std::vector<MetricSpec> metrics() const override {
    return {{"kernel_round_trip", "s", Better::kLower}};
  }
  void warm_up(double) override {}
  Sample measure() override {
    auto* target = reinterpret_cast<std::uint64_t*>(buffer_.get());
    // An address far outside every allocation: the kernel's store faults (an illegal address,
    // which the CUDA context keeps: every later call of this process fails).
    if (fault_ == "illegal_address") target = reinterpret_cast<std::uint64_t*>(std::uintptr_t{16});
    const auto t0 = std::chrono::steady_clock::now();
    store_kernel<<<1, 1>>>(target);
    PB_CUDA(cudaGetLastError());
    PB_CUDA(cudaDeviceSynchronize());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return {s, {s}};
  }
  void verify() override {}
  std::vector<Check> checks() const override { return {}; }
  std::uint64_t operations_per_sample() const override { return 1; }
  std::uint64_t bytes_per_sample() const override { return sizeof(std::uint64_t); }

 private:
  std::string fault_;
  DeviceScope scope_;
  DeviceMemory buffer_;
};

class FaultInjectionFamily final : public DeclaredFamily {
 public:
  FaultInjectionFamily()
      : DeclaredFamily({"fault_injection",
                        "Testing only: cases that fault on purpose (illegal_address poisons the "
                        "CUDA context, out_of_memory fails an allocation, none runs a kernel)",
                        {{"fault",
                          AxisSchema::Kind::kString,
                          {"none", "illegal_address", "out_of_memory"},
                          0,
                          0,
                          "what the case does wrong"},
                         {"tag",
                          AxisSchema::Kind::kInteger,
                          {},
                          0,
                          1000,
                          "any number: tells apart cases that would otherwise be the same"}},
                        {"fault"}}) {}
  MemoryNeeds memory_needs(const CaseSpec&) const override { return {}; }
  Requirements requirements(const CaseSpec&) const override {
    return std::move(Requirements().gpu());
  }
  std::optional<std::vector<std::string>> metric_names(const CaseSpec&) const override {
    return std::vector<std::string>{"kernel_round_trip"};
  }
  std::unique_ptr<CaseBench> prepare(const CaseSpec& spec, const Machine&,
                                     int device) const override {
    return std::make_unique<FaultBench>(spec.params.at("fault").get<std::string>(), device);
  }
};

}  // namespace

std::unique_ptr<Family> make_fault_injection_family() {
  return std::make_unique<FaultInjectionFamily>();
}

}  // namespace pathbench
