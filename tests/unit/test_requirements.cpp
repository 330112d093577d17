#include <gtest/gtest.h>

#include <string>

#include "inventory/requirements.hpp"

namespace pathbench::test_requirements {
namespace {

TEST(Requirements, CudaRuntimeFeatureNamesBothVersionsAndTheRebuild) {
  const Machine machine;
  const auto old =
      Requirements().cuda_runtime(12080, "cudaMemcpyBatchAsync", 12060).unmet(machine, 0);
  ASSERT_TRUE(old);
  for (const auto* part :
       {"cudaMemcpyBatchAsync needs CUDA 12.8 or newer", "runtime 12.6", "cmake"}) {
    EXPECT_NE(old->find(part), std::string::npos) << part << " in " << *old;
  }
  EXPECT_FALSE(Requirements().cuda_runtime(12080, "f", 12080).unmet(machine, 0));
  EXPECT_FALSE(Requirements().cuda_runtime(12080, "f", 13000).unmet(machine, 0));
  // Without CUDA the gpu() requirement says why; this one adds nothing.
  EXPECT_FALSE(Requirements().cuda_runtime(12080, "f", 0).unmet(machine, 0));
  // The build's own runtime by default.
  EXPECT_FALSE(Requirements().cuda_runtime(built_cuda_runtime(), "f").unmet(machine, 0));
}

}  // namespace
}  // namespace pathbench::test_requirements
