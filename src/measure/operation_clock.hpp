#pragma once

// How a block of operations is timed. A family says how to issue its operations and how to wait
// for them; the clock decides how the block is timed and says so (the case's timing method and
// its `timing` check), so no family can time a block its own way.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "result/vocabulary.hpp"

namespace pathbench {

class OperationClock {
 public:
  using Enqueue = std::function<void()>;
  virtual ~OperationClock() = default;
  // Seconds for the block `enqueue` issues, one entry per timed stream (one for a single stream).
  virtual std::vector<double> time(const Enqueue& enqueue) = 0;
  virtual TimingMethod method() const = 0;
  // How the blocks are timed, in words (the `timing` check's detail).
  virtual std::string describe() const = 0;
};

// The host's steady clock around issuing the block and `complete` (waiting for what the block
// started): for work the host performs synchronously (pageable copies, memcpy, page faults).
class HostClock final : public OperationClock {
 public:
  explicit HostClock(std::function<void()> complete = {}, std::string why = {})
      : complete_(std::move(complete)), why_(std::move(why)) {}
  std::vector<double> time(const Enqueue& enqueue) override;
  TimingMethod method() const override { return TimingMethod::kHostSteadyClock; }
  std::string describe() const override;

 private:
  std::function<void()> complete_;
  std::string why_;
};

}  // namespace pathbench
