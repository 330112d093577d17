#pragma once

// Where a GPU family's prepare hands over to its CUDA bench (in a .cu file). A build without
// CUDA has no such file: there the case skips with the CUDA probe's reason (the family's
// requirements, judged first, already say the same), so no family needs a stand-in of its own.

#include "core/errors.hpp"
#include "cuda/cuda_probe.hpp"

#ifdef PATHBENCH_HAVE_CUDA
#define PATHBENCH_GPU_BENCH(...) return __VA_ARGS__
#else
#define PATHBENCH_GPU_BENCH(...) throw ::pathbench::SkipCase(::pathbench::probe_cuda().unavailable_reason)
#endif
