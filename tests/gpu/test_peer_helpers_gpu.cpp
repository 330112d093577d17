// GPU tests of the CUDA helpers the peer family stands on: the SM copy kernel (one GPU), peer
// access set, verified and put back (two GPUs), and ordering across two GPUs' streams.
#include <gtest/gtest.h>

#include "test_gpu_common.hpp"

// The helpers are CUDA code: a build without CUDA has none to test (the family tests say why
// they skip).
#ifdef PATHBENCH_HAVE_CUDA
#include <cstddef>

#include "cuda/device_copy.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/multi_device.hpp"
#include "cuda/peer_access.hpp"

namespace pathbench::test_peer_helpers_gpu {
namespace {

int device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

#define PATHBENCH_REQUIRE_TWO_DEVICES()                               \
  do {                                                                \
    PATHBENCH_REQUIRE_GPU();                                          \
    if (device_count() < 2) GTEST_SKIP() << "needs two CUDA devices"; \
  } while (0)

// Whether `accessor` has peer access to `peer` now, asked without changing it for long.
bool peer_access_enabled(int accessor, int peer) {
  const PeerAccessSetting probe(accessor, peer, true);
  return !probe.changed();  // the setting puts back what it changed
}

TEST(DeviceCopyKernelGpu, CopiesEverySizeExactly) {
  PATHBENCH_REQUIRE_GPU();
  DeviceScope scope(0);
  Stream stream;
  DevicePatternChecker checker;
  for (std::size_t bytes : {std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{17},
                            std::size_t{4096 + 511}, std::size_t{64} << 20}) {
    DeviceMemory src(bytes), dst(bytes);
    fill_pattern_on_device(src.get(), bytes, 42 + bytes, stream.get());
    PB_CUDA(cudaMemsetAsync(dst.get(), 0, bytes, stream.get()));
    const DeviceCopyKernel kernel(0, bytes);
    EXPECT_GE(kernel.blocks(), 1);
    kernel.launch(dst.get(), src.get(), stream.get());
    EXPECT_FALSE(checker.find_mismatch(dst.get(), bytes, 42 + bytes, stream.get())) << bytes;
  }
}

TEST(PeerAccessGpu, EnabledVerifiedAndPutBack) {
  PATHBENCH_REQUIRE_TWO_DEVICES();
  if (!can_access_peer(0, 1)) GTEST_SKIP() << "GPU 0 cannot access GPU 1 (cudaDeviceCanAccessPeer)";
  PB_CUDA(cudaSetDevice(1));
  const bool before = peer_access_enabled(0, 1);
  {
    const PeerAccessSettings on({{0, 1}}, true);
    EXPECT_TRUE(on.verified()) << on.describe();
    EXPECT_TRUE(peer_access_enabled(0, 1));
    {
      const PeerAccessSetting again(0, 1, true);  // already enabled: nothing to put back
      EXPECT_FALSE(again.changed());
      EXPECT_TRUE(again.verified()) << again.describe();
    }
    EXPECT_TRUE(peer_access_enabled(0, 1));
  }
  EXPECT_EQ(peer_access_enabled(0, 1), before);
  {
    const PeerAccessSettings off({{0, 1}}, false);
    EXPECT_TRUE(off.verified()) << off.describe();
    EXPECT_FALSE(peer_access_enabled(0, 1));
  }
  EXPECT_EQ(peer_access_enabled(0, 1), before);
  int current = -1;
  PB_CUDA(cudaGetDevice(&current));
  EXPECT_EQ(current, 1);                       // the caller's device, whatever the settings did
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // expected "already" answers leave no error behind
}

TEST(MultiDeviceGpu, HandOffOrdersWorkAcrossGpus) {
  PATHBENCH_REQUIRE_TWO_DEVICES();
  constexpr std::size_t kBytes = std::size_t{32} << 20;
  GpuBuffer a(0, kBytes), b(1, kBytes);
  const Event done = on_device<Event>(0, cudaEventDisableTiming);
  PB_CUDA(cudaSetDevice(0));
  fill_pattern_on_device(a.memory.get(), kBytes, 7, a.stream.get());
  // b's stream copies a's data only after a's stream has written it.
  hand_off(a.on(), done, b.on());
  PB_CUDA(cudaMemcpyPeerAsync(b.memory.get(), 1, a.memory.get(), 0, kBytes, b.stream.get()));
  DevicePatternChecker checker = on_device<DevicePatternChecker>(1);
  PB_CUDA(cudaSetDevice(1));
  EXPECT_FALSE(checker.find_mismatch(b.memory.get(), kBytes, 7, b.stream.get()));
  a.stream.synchronize();
}

}  // namespace
}  // namespace pathbench::test_peer_helpers_gpu

#endif  // PATHBENCH_HAVE_CUDA
