#pragma once

// Where a GPU family's prepare hands over to its CUDA bench (in a .cu file). A build without
// CUDA has no such file: there the case skips with the CUDA probe's reason (the family's
// requirements, judged first, already say the same), so no family needs a stand-in of its own.

#include "core/errors.hpp"
#include "cuda/cuda_probe.hpp"

#ifdef PATHBENCH_HAVE_CUDA
#define PATHBENCH_GPU_BENCH(...) return __VA_ARGS__
#else
// The expression is named in an unevaluated operand only: it must still compile (the bench's
// declaration is the same in both builds), and its arguments count as used.
#define PATHBENCH_GPU_BENCH(...)                                                      \
  do {                                                                                \
    static_cast<void>(sizeof(decltype(__VA_ARGS__)*));                                \
    throw ::pathbench::SkipCase(::pathbench::probe_cuda().unavailable_reason);        \
  } while (false)
#endif
