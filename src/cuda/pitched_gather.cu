#include "cuda/pitched_gather.hpp"

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/kernel_loading.hpp"

namespace pathbench {

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
constexpr std::size_t kChunk = std::size_t{kThreads} * 16 * kUnroll;  // 16 KiB
constexpr std::uint64_t kBlocksPerSm = 8;

// Block-strided chunks of kChunk bytes of the pieces: a chunk whose source and destination are
// both 16-byte aligned moves in one round of 16-byte loads per thread, the rest byte by byte.
__global__ void pitched_gather_kernel(const unsigned char* __restrict__ src, std::size_t pitch,
                                      unsigned char* __restrict__ dst, std::size_t piece_bytes,
                                      std::uint64_t chunks_per_piece, std::uint64_t total_chunks) {
  for (std::uint64_t c = blockIdx.x; c < total_chunks; c += gridDim.x) {
    const std::uint64_t piece = c / chunks_per_piece;
    const std::size_t begin = static_cast<std::size_t>(c % chunks_per_piece) * kChunk;
    const std::size_t len = piece_bytes - begin < kChunk ? piece_bytes - begin : kChunk;
    const unsigned char* s = src + piece * pitch + begin;
    unsigned char* d = dst + piece * piece_bytes + begin;
    std::size_t done = 0;
    if (((reinterpret_cast<std::uintptr_t>(s) | reinterpret_cast<std::uintptr_t>(d)) & 15) == 0) {
      const std::size_t vecs = len / 16;  // <= kUnroll * blockDim.x: one round
      const auto* s4 = reinterpret_cast<const uint4*>(s);
      auto* d4 = reinterpret_cast<uint4*>(d);
      uint4 r[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::size_t v = threadIdx.x + std::size_t(u) * blockDim.x;
        if (v < vecs) r[u] = __ldcv(s4 + v);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::size_t v = threadIdx.x + std::size_t(u) * blockDim.x;
        if (v < vecs) d4[v] = r[u];
      }
      done = vecs * 16;
    }
    for (std::size_t b = done + threadIdx.x; b < len; b += blockDim.x) d[b] = __ldcv(s + b);
  }
}

}  // namespace

PitchedGather::PitchedGather(const std::byte* src, std::size_t pitch, std::byte* dst,
                             std::size_t bytes, std::uint64_t count)
    : src_(src),
      pitch_(pitch),
      dst_(dst),
      bytes_(bytes),
      chunks_per_piece_((bytes + kChunk - 1) / kChunk),
      chunks_(chunks_per_piece_ * count) {
  load_kernel(pitched_gather_kernel);
  int device = 0, sms = 1;
  PB_CUDA(cudaGetDevice(&device));
  PB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::uint64_t max_blocks = static_cast<std::uint64_t>(std::max(sms, 1)) * kBlocksPerSm;
  grid_ = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(chunks_, max_blocks)));
}

void PitchedGather::launch(cudaStream_t stream) const {
  pitched_gather_kernel<<<grid_, kThreads, 0, stream>>>(
      reinterpret_cast<const unsigned char*>(src_), pitch_, reinterpret_cast<unsigned char*>(dst_),
      bytes_, chunks_per_piece_, chunks_);
  PB_CUDA(cudaGetLastError());
}

}  // namespace pathbench
