#pragma once

// Where a case's measuring thread runs: bound to the CPUs of a NUMA node (the GPU's, or the one
// the scenario names) for the placement's lifetime, with the check that it really ran there.

#include <optional>
#include <string>
#include <vector>

#include "inventory/machine.hpp"
#include "placement/thread_affinity.hpp"
#include "result/vocabulary.hpp"

namespace pathbench {

class ThreadPlacement {
 public:
  // Binds the calling thread to the CPUs of `node` when the machine knows usable ones; otherwise
  // leaves it where the OS put it, and check() says so.
  ThreadPlacement(const Machine& machine, std::optional<int> node);
  // Binds the calling thread to `cpus` (those of `node`, one CPU of it, or every CPU of the
  // process when unbound); `where` says which in the check ("node 1 (remote)", "unbound").
  // Empty `cpus`: left where the OS puts it, as above.
  ThreadPlacement(std::vector<int> cpus, std::optional<int> node, std::string where);
  ThreadPlacement(const ThreadPlacement&) = delete;
  ThreadPlacement& operator=(const ThreadPlacement&) = delete;

  bool bound() const { return scope_.has_value(); }
  std::optional<int> node() const { return node_; }

  // "thread_placement": the CPU the calling thread runs on now, against the node's CPUs.
  Check check(const std::string& who = "measuring thread") const;

 private:
  std::optional<int> node_;
  std::vector<int> cpus_;
  std::string where_;
  std::optional<ThreadAffinityScope> scope_;  // last member: restores the thread first
};

// The NUMA node a case's host memory goes on: the GPU's own, or with `remote` another one.
// Throws SkipCase when the machine cannot say (requirements() should have skipped it first).
int host_node_for(const Machine& machine, int device, bool remote);

}  // namespace pathbench
