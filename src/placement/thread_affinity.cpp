#include "placement/thread_affinity.hpp"

#include <pthread.h>

#include <cerrno>
#include <string>

#include "core/errors.hpp"

namespace pathbench {

namespace {

std::string cpu_list(const std::vector<int>& cpus) {
  std::string text;
  for (const int cpu : cpus) {
    if (!text.empty()) text += ',';
    text += std::to_string(cpu);
  }
  return text.empty() ? "none" : text;
}

}  // namespace

ThreadAffinityScope::ThreadAffinityScope(const std::vector<int>& cpus) {
  CPU_ZERO(&previous_);
  // pthread_*affinity_np return the error number instead of setting errno.
  if (const int rc = pthread_getaffinity_np(pthread_self(), sizeof previous_, &previous_);
      rc != 0) {
    throw SystemError("pthread_getaffinity_np", rc);
  }
  const std::string call = "pthread_setaffinity_np(CPUs " + cpu_list(cpus) + ")";
  if (cpus.empty()) throw SystemError(call, EINVAL);
  cpu_set_t wanted;
  CPU_ZERO(&wanted);
  for (const int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) throw SystemError(call, EINVAL);
    CPU_SET(cpu, &wanted);
  }
  if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof wanted, &wanted); rc != 0) {
    throw SystemError(call, rc);
  }
}

ThreadAffinityScope::~ThreadAffinityScope() {
  // Restoring can only fail if the cpuset shrank meanwhile; a destructor has no one to tell, and
  // the kernel then keeps the thread on CPUs it still allows.
  pthread_setaffinity_np(pthread_self(), sizeof previous_, &previous_);
}

}  // namespace pathbench
