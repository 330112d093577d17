#pragma once

#include <gtest/gtest.h>

#include "cuda/cuda_probe.hpp"
#include "inventory/requirements.hpp"

// GPU tests skip themselves, saying why, on a machine without a usable CUDA device.
#define PATHBENCH_REQUIRE_GPU()                                                      \
  do {                                                                               \
    const auto probe = ::pathbench::probe_cuda();                                    \
    if (!probe.unavailable_reason.empty()) GTEST_SKIP() << probe.unavailable_reason; \
  } while (0)

// Needs two usable GPUs on `machine`: skips with the two-GPU requirement's own reason (one GPU,
// no CUDA) otherwise.
#define PATHBENCH_REQUIRE_TWO_GPUS(machine)                                    \
  do {                                                                         \
    PATHBENCH_REQUIRE_GPU();                                                   \
    if (auto why = ::pathbench::Requirements().two_gpus().unmet(machine, 0)) { \
      GTEST_SKIP() << *why;                                                    \
    }                                                                          \
  } while (0)
