#pragma once

#include <gtest/gtest.h>

#include "cuda/cuda_probe.hpp"

// GPU tests skip themselves, saying why, on a machine without a usable CUDA device.
#define PATHBENCH_REQUIRE_GPU()                                                      \
  do {                                                                               \
    const auto probe = ::pathbench::probe_cuda();                                    \
    if (!probe.unavailable_reason.empty()) GTEST_SKIP() << probe.unavailable_reason; \
  } while (0)
