// GPU tests of the ipc family, through the CLI's case runner. The child is the real pathbench
// binary (PATHBENCH_BINARY, its CMake target file): this test binary's own /proc/self/exe has no
// ipc-child mode. Label `gpu`; they skip without a device.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "bench/ipc.hpp"
#include "inventory/inventory.hpp"
#include "measure/family.hpp"
#include "runner_case.hpp"
#include "scenario/expansion.hpp"
#include "test_gpu_common.hpp"

namespace pathbench::test_ipc_gpu {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

CaseSpec ipc_case(const std::string& method, const std::string& access, std::int64_t bytes) {
  return gpu_test_case("ipc", {{"method", method}, {"access", access}, {"bytes", bytes}});
}

IpcChildCommand pathbench_child() {
  IpcChildCommand c;
  c.argv = {PATHBENCH_BINARY, "ipc-child"};
  return c;
}

MeasuredCase run(const CaseSpec& spec) {
  return run_required(*make_ipc_family(pathbench_child()), spec);
}

void expect_measured_and_verified(const MeasuredCase& m, const std::string& verified_word) {
  ASSERT_EQ(m.samples.size(), 3u) << m.result.reason;
  EXPECT_EQ(m.method, timing_name(TimingMethod::kCudaEventsLatched));
  ASSERT_EQ(m.metrics.size(), 4u);
  for (const auto& sample : m.samples) {
    EXPECT_GE(sample[0], 0.0);  // export_time
    EXPECT_GT(sample[1], 0.0);  // open_time: a real open takes time
    EXPECT_GE(sample[2], 0.0);  // close_time
    EXPECT_GT(sample[3], 0.0);  // bandwidth
  }
  const Check* verified = m.check("child_verified");
  ASSERT_NE(verified, nullptr);
  EXPECT_TRUE(verified->passed) << verified->detail;
  EXPECT_NE(verified->detail.find(verified_word), std::string::npos) << verified->detail;
  const Check* child = m.check("child_process");
  ASSERT_NE(child, nullptr);
  EXPECT_NE(child->detail.find("\"protocol\""), std::string::npos) << child->detail;
  std::cout << m.result.id << ": bandwidth " << m.median("bandwidth") << " GB/s, open "
            << m.median("open_time") << " s, export " << m.median("export_time") << " s\n";
}

// Both accesses of `method`, each measured in the child and verified there.
void expect_both_accesses_work(const std::string& method) {
  for (const char* access : {"copy", "kernel"}) {
    const auto m = run(ipc_case(method, access, 64 * kMiB));
    PATHBENCH_SKIP_IF_SKIPPED(m);
    expect_measured_and_verified(m, std::string(access) == "copy" ? "byte for byte" : "kernel");
    // Through host memory over PCIe: well below device memory bandwidth, but a real transfer.
    if (method == "shared_pinned") {
      EXPECT_LT(m.median("bandwidth"), 1000.0);
    }
  }
}

TEST(IpcGpu, CudaIpcCopyAndKernelAreMeasuredAndVerifiedInTheChild) {
  PATHBENCH_REQUIRE_GPU();
  expect_both_accesses_work("cuda_ipc");
}

TEST(IpcGpu, VmmFdCopyAndKernelAreMeasuredAndVerifiedInTheChild) {
  PATHBENCH_REQUIRE_GPU();
  expect_both_accesses_work("vmm_fd");
}

TEST(IpcGpu, SharedPinnedCopyAndKernelAreMeasuredAndVerifiedInTheChild) {
  PATHBENCH_REQUIRE_GPU();
  expect_both_accesses_work("shared_pinned");
}

// Exporter on one GPU, importer on the other, both ways: every method and access measured and
// verified in the child on the importer's GPU. Skips without two GPUs, saying why.
TEST(IpcGpu, AcrossAGpuPairTheChildReadsTheOtherGpusBuffer) {
  const Machine machine = machine_from(collect_inventory({}));
  PATHBENCH_REQUIRE_TWO_GPUS(machine);
  const auto family = make_ipc_family(pathbench_child());
  for (const char* pair : {"0-1", "1-0"}) {
    for (const char* method : {"cuda_ipc", "vmm_fd", "shared_pinned"}) {
      for (const char* access : {"copy", "kernel"}) {
        CaseSpec spec = gpu_test_case(
            "ipc", {{"pair", pair}, {"method", method}, {"access", access}, {"bytes", 64 * kMiB}});
        family->derive_params(spec, machine);
        spec.id = case_id("ipc", spec.params);
        if (auto why = family->skip_reason(spec, machine, 0)) {  // a pair without peer access
          std::cout << spec.id << ": skipped: " << *why << "\n";
          continue;
        }
        const auto m = run_case(*family, spec, machine);
        PATHBENCH_SKIP_IF_SKIPPED(m);
        expect_measured_and_verified(m, std::string(access) == "copy" ? "byte for byte" : "kernel");
        const std::string importer(1, pair[2]);
        const Check* verified = m.check("child_verified");
        ASSERT_NE(verified, nullptr);
        EXPECT_NE(verified->detail.find("(GPU " + importer + " reading "), std::string::npos)
            << verified->detail;
        const Check* link = m.check("peer_link");
        ASSERT_NE(link, nullptr) << spec.id;
        EXPECT_TRUE(link->passed) << link->detail;
      }
    }
  }
}

TEST(IpcGpu, AChildThatDiesIsAFailedCaseNamingTheSignal) {
  PATHBENCH_REQUIRE_GPU();
  IpcChildCommand crash;
  crash.argv = {"/bin/sh", "-c", "kill -SEGV $$", "sh"};
  const auto family = make_ipc_family(crash);
  const Machine machine = machine_from(collect_inventory({}));
  Progress progress(1, false);
  RunSettings settings;
  CaseRunner runner(machine, settings, progress);
  CaseSpec spec = ipc_case("cuda_ipc", "copy", 64 * kMiB);
  spec.repetitions = 3;
  const CaseResult r = runner.run(spec, *family);
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("signal 11"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace pathbench::test_ipc_gpu
