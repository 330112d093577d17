// A standalone cross-check of the serving family's back-to-back rows, the way issue 12's
// reference figures were taken: per request one host-steady-clock interval around
//   pinned:    cudaMemcpyAsync + cudaStreamSynchronize
//   pageable:  cudaMemcpy
//   register:  cudaHostRegister + cudaMemcpyAsync + cudaStreamSynchronize + cudaHostUnregister
//   slot:      memcpy into a pinned slot + cudaMemcpyAsync + cudaStreamSynchronize
// with p50/p99/p99.9/max over N requests. It shares no code with pathbench on purpose: a
// difference between the two is then a difference of method, which the variants isolate:
//   --buffer malloc       the pageable buffer from malloc (the reference's likely setup)
//   --buffer mmap4k       mmap + MADV_NOHUGEPAGE + mbind to the GPU's node (pathbench's)
//   --stamp               write one word into every 4 KiB page before each request (pathbench)
//   --event               record an event after each copy (pathbench's timed arrivals)
//   --query               wait by spinning on cudaStreamQuery, not cudaStreamSynchronize
//   --step                after each request, a kernel that reads its input, waited for (the
//                         serving family's step), outside the timed interval
// Build: nvcc -O2 -std=c++17 -arch=sm_90 per_request_latency.cu -lnuma -o per_request_latency
// Not part of the build or the tests: it is run by hand on the GPU machine (docs/measurements.md).
#include <cuda_runtime.h>
#include <numaif.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

namespace {

__global__ void sum_words(const unsigned long long* in, std::size_t words,
                          unsigned long long* out) {
  unsigned long long v = 0;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words;
       i += gridDim.x * blockDim.x) {
    v += in[i];
  }
  atomicAdd(out, v);
}

using Clock = std::chrono::steady_clock;

void* pageable_buffer(const std::string& kind, std::size_t bytes, int node) {
  if (kind == "malloc") {
    void* p = std::malloc(bytes);
    std::memset(p, 1, bytes);
    return p;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) std::exit(2);
  madvise(p, bytes, MADV_NOHUGEPAGE);
  unsigned long mask = 1ul << node;
  if (mbind(p, bytes, MPOL_BIND, &mask, sizeof mask * 8, 0) != 0) std::perror("mbind");
  std::memset(p, 1, bytes);
  return p;
}

void report(const char* what, std::size_t bytes, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, std::size_t(q * us.size()))]; };
  std::printf("%-10s %8zu  p50 %8.1f  p99 %8.1f  p99.9 %8.1f  max %8.1f us\n", what, bytes, at(0.5),
              at(0.99), at(0.999), us.back());
}

}  // namespace

int main(int argc, char** argv) {
  std::string buffer = "malloc";
  bool stamp = false, event = false, query = false, step = false;
  int n = 20000, node = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--buffer" && i + 1 < argc)
      buffer = argv[++i];
    else if (a == "--stamp")
      stamp = true;
    else if (a == "--event")
      event = true;
    else if (a == "--query")
      query = true;
    else if (a == "--step")
      step = true;
    else if (a == "--requests" && i + 1 < argc)
      n = std::atoi(argv[++i]);
    else if (a == "--node" && i + 1 < argc)
      node = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--buffer malloc|mmap4k] [--stamp] [--event] [--query] [--step] "
                   "[--requests N] [--node K]\n",
                   argv[0]);
      return 3;
    }
  }
  std::printf("buffer %s, stamp %d, event %d, query %d, step %d, %d requests\n", buffer.c_str(),
              stamp, event, query, step, n);
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned long long* sum;
  CHECK(cudaMalloc(&sum, sizeof *sum));
  cudaEvent_t ev;
  CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  for (std::size_t bytes : {std::size_t{64} << 10, std::size_t{2} << 20}) {
    void* dev;
    CHECK(cudaMalloc(&dev, bytes));
    void* pinned;
    CHECK(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault));
    std::memset(pinned, 1, bytes);
    auto* src = static_cast<unsigned char*>(pageable_buffer(buffer, bytes, node));
    auto touch = [&](unsigned char* p, int k) {
      if (!stamp) return;
      for (std::size_t off = 0; off < bytes; off += 4096) std::memcpy(p + off, &k, sizeof k);
    };
    auto after = [&] {
      if (event) CHECK(cudaEventRecord(ev, s));
    };
    auto wait = [&] {
      if (!query) {
        CHECK(cudaStreamSynchronize(s));
        return;
      }
      cudaError_t e;
      while ((e = cudaStreamQuery(s)) == cudaErrorNotReady) {
      }
      CHECK(e);
    };
    auto read_input = [&] {
      if (!step) return;
      sum_words<<<32, 256, 0, s>>>(static_cast<const unsigned long long*>(dev), bytes / 8, sum);
      CHECK(cudaStreamSynchronize(s));
    };
    // The stamp is written before the clock starts, as pathbench prepares a request's data
    // before it arrives.
    auto timed = [&](const char* what, auto&& copy_one) {
      for (int k = 0; k < 200; ++k) {
        touch(src, k);
        touch(static_cast<unsigned char*>(pinned), k);
        copy_one();
      }
      std::vector<double> us;
      us.reserve(n);
      for (int k = 0; k < n; ++k) {
        touch(src, k);
        touch(static_cast<unsigned char*>(pinned), k);
        const auto t = Clock::now();
        copy_one();
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
        read_input();
      }
      report(what, bytes, std::move(us));
    };
    timed("pinned", [&] {
      CHECK(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, s));
      after();
      wait();
    });
    timed("pageable", [&] { CHECK(cudaMemcpy(dev, src, bytes, cudaMemcpyHostToDevice)); });
    timed("pageable_s", [&] {
      CHECK(cudaMemcpyAsync(dev, src, bytes, cudaMemcpyHostToDevice, s));
      after();
      wait();
    });
    timed("register", [&] {
      CHECK(cudaHostRegister(src, bytes, cudaHostRegisterDefault));
      CHECK(cudaMemcpyAsync(dev, src, bytes, cudaMemcpyHostToDevice, s));
      after();
      wait();
      CHECK(cudaHostUnregister(src));
    });
    timed("slot", [&] {
      std::memcpy(pinned, src, bytes);
      CHECK(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, s));
      after();
      wait();
    });
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(pinned));
  }
  return 0;
}
