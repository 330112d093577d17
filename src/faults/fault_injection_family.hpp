#pragma once

#include <memory>

#include "measure/family.hpp"

namespace pathbench {

// A family for testing the run, never for measuring a node: its cases fault on purpose (a kernel
// that writes to an address no allocation owns, an allocation larger than the GPU), so a GPU
// test can show that such a case fails alone and the rest of the run goes on. Registered only
// when the environment variable below is "1" (tests/e2e/test_gpu_faults.py sets it).
inline constexpr const char* kFaultInjectionVariable = "PATHBENCH_FAULT_INJECTION";
// Null in a build without CUDA (the cases need a GPU to fault on).
std::unique_ptr<Family> make_fault_injection_family();

}  // namespace pathbench
