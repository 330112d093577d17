// GPU tests of the copy helpers in src/cuda/: a captured graph of copies, cudaMemcpyBatchAsync
// over a copy list, and the pitched gather kernel. Each moves scattered pinned host pieces into a
// contiguous device buffer, which must then hold the pattern the pieces hold together. Label
// `gpu`; they skip without a device.
#include <gtest/gtest.h>

#include "test_gpu_common.hpp"

#ifdef PATHBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <vector>

#include "core/errors.hpp"
#include "cuda/cuda_graph.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/memcpy_batch.hpp"
#include "cuda/pitched_gather.hpp"
#include "measure/pattern.hpp"
#endif

namespace pathbench::test_cuda_copy_helpers_gpu {
namespace {

#ifdef PATHBENCH_HAVE_CUDA

constexpr std::uint64_t kSeed = 0x68656c70u;  // "help"

// `count` pieces of `bytes`, one every `pitch` bytes of pinned host memory, holding one pattern;
// a device buffer for all of them back to back; and the copy list between the two.
struct Pieces {
  Pieces(const Stream& stream, std::uint64_t count, std::uint64_t bytes, std::uint64_t pitch,
         unsigned flags = cudaHostAllocDefault)
      : host(count * pitch, flags), device(count * bytes), layout{host.get(), count, bytes, pitch} {
    fill_pattern_pieces(layout, kSeed);
    for (std::uint64_t i = 0; i < count; ++i) {
      dsts.push_back(device.get() + i * bytes);
      srcs.push_back(host.get() + i * pitch);
    }
    clear(stream);
  }
  // Whether the device buffer holds the pattern; then clears it for the next check.
  bool device_holds_pattern(const Stream& stream) {
    const bool ok =
        !checker.find_mismatch(device.get(), device.size(), kSeed, stream.get()).has_value();
    clear(stream);
    return ok;
  }
  void clear(const Stream& stream) {
    PB_CUDA(cudaMemsetAsync(device.get(), 0, device.size(), stream.get()));
    stream.synchronize();
  }
  PinnedHostMemory host;
  DeviceMemory device;
  PatternPieces layout;
  std::vector<void*> dsts, srcs;
  DevicePatternChecker checker;
};

void use_gpu() { PB_CUDA(cudaSetDevice(0)); }

TEST(CapturedGraph, ReplaysTheCapturedCopiesOneNodeEach) {
  PATHBENCH_REQUIRE_GPU();
  use_gpu();
  Stream stream;
  Pieces p(stream, 37, 1001, 4096);
  const CapturedGraph graph(stream.get(), [&] {
    cudaError_t err = cudaSuccess;
    for (std::size_t i = 0; i < p.dsts.size() && err == cudaSuccess; ++i) {
      err = cudaMemcpyAsync(p.dsts[i], p.srcs[i], 1001, cudaMemcpyHostToDevice, stream.get());
    }
    return err;
  });
  EXPECT_EQ(graph.nodes(), 37u);
  // Capturing queued nothing: the destination is still clear.
  EXPECT_FALSE(p.device_holds_pattern(stream));
  for (int launch = 0; launch < 2; ++launch) {
    graph.launch(stream.get());
    stream.synchronize();
    EXPECT_TRUE(p.device_holds_pattern(stream)) << launch;
  }
}

TEST(CapturedGraph, AFailedCaptureThrowsAndLeavesTheStreamUsable) {
  PATHBENCH_REQUIRE_GPU();
  use_gpu();
  Stream stream;
  EXPECT_THROW(CapturedGraph(stream.get(), [] { return cudaErrorInvalidValue; }), CudaError);
  DeviceMemory a(64), b(64);
  PB_CUDA(cudaMemcpyAsync(b.get(), a.get(), 64, cudaMemcpyDeviceToDevice, stream.get()));
  EXPECT_NO_THROW(stream.synchronize());
}

TEST(MemcpyBatch, CopiesEveryPieceInOneCall) {
  PATHBENCH_REQUIRE_GPU();
  use_gpu();
  Stream stream;
  Pieces p(stream, 64, 4096 + 24, 8192 + 4096);
  MemcpyBatch batch(p.dsts, p.srcs, std::vector<std::size_t>(64, 4096 + 24));
  EXPECT_EQ(batch.size(), 64u);
  try {
    batch.probe(stream.get());
  } catch (const SkipCase& e) {
    GTEST_SKIP() << e.what();  // a driver (or a build) without cudaMemcpyBatchAsync
  }
  EXPECT_TRUE(p.device_holds_pattern(stream));
  PB_CUDA(batch.enqueue(stream.get()));
  stream.synchronize();
  EXPECT_TRUE(p.device_holds_pattern(stream));
}

TEST(PitchedGather, GathersOddAndAlignedPiecesFromMappedMemory) {
  PATHBENCH_REQUIRE_GPU();
  use_gpu();
  Stream stream;
  // Odd sizes take the byte path at odd offsets; 1 MiB + 16 spans chunks on the 16-byte path.
  for (const auto& [count, bytes] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {37, 1001}, {1, 1}, {3, (1 << 20) + 16}, {256, 4096}}) {
    SCOPED_TRACE(std::to_string(count) + " x " + std::to_string(bytes));
    const std::uint64_t pitch = (bytes + 4095) / 4096 * 4096 + 4096;
    Pieces p(stream, count, bytes, pitch, cudaHostAllocMapped);
    void* view = nullptr;
    PB_CUDA(cudaHostGetDevicePointer(&view, p.host.get(), 0));
    const PitchedGather gather(static_cast<const std::byte*>(view), pitch, p.device.get(), bytes,
                               count);
    gather.launch(stream.get());
    stream.synchronize();
    EXPECT_TRUE(p.device_holds_pattern(stream));
  }
}

#endif  // PATHBENCH_HAVE_CUDA

}  // namespace
}  // namespace pathbench::test_cuda_copy_helpers_gpu
