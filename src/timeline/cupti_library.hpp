#pragma once

#include <string>

namespace pathbench {

// Environment variable through which the NVTX library finds its injection (64-bit processes).
inline constexpr const char* kNvtxInjectionVariable = "NVTX_INJECTION64_PATH";

// Absolute path of the libcupti shared object this process has loaded (found with dladdr on a
// CUPTI function), or "" when pathbench was built without CUDA or the path cannot be found.
//
// NVTX ranges reach CUPTI (and so a TimelineCapture) only when NVTX_INJECTION64_PATH names
// libcupti at the moment of the process's *first* NVTX call: NVTX reads the variable once, in
// its lazy initialisation, and from then on every call is either forwarded to the injection or a
// no-op. So a caller that wants NVTX ranges in its timeline sets the variable before anything
// emits NVTX, e.g.
//   if (!getenv(kNvtxInjectionVariable)) setenv(kNvtxInjectionVariable, path.c_str(), 0);
// Pointing it at the very file returned here makes the injected CUPTI the same instance the
// capture talks to (the dynamic loader does not load a second copy).
std::string cupti_library_path();

}  // namespace pathbench
