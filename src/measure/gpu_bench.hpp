#pragma once

// Where a GPU family's prepare hands over to its CUDA bench (in a .cu file). A build without
// CUDA has no such file: there the case skips with the CUDA probe's reason (the family's
// requirements, judged first, already say the same), so no family needs a stand-in of its own.

#include "core/errors.hpp"
#include "cuda/cuda_probe.hpp"

#ifdef PATHBENCH_HAVE_CUDA
#define PATHBENCH_GPU_BENCH(...) return __VA_ARGS__
#else
// The bench expression is only named (an unevaluated operand, so its function needs no
// definition), which keeps the parameters prepare passes to it used in a -Werror build.
#define PATHBENCH_GPU_BENCH(...) \
  throw ::pathbench::SkipCase(   \
      (static_cast<void>(sizeof(__VA_ARGS__)), ::pathbench::probe_cuda().unavailable_reason))
#endif
