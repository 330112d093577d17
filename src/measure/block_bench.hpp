#pragma once

// The sample loop of every family whose sample is one block of operations (copies, peer copies,
// memcpy): the core warms the path, probes and sizes the block to the scenario's min_time, times
// it with the family's clock, splits a latency case's budget between the block and round trips,
// verifies after every sample and records that it did. A family supplies what it moves: how to
// issue n operations, how to wait for them, what to clear before a sample, what to verify, and
// its metric formulas.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "measure/family.hpp"
#include "measure/operation_clock.hpp"

namespace pathbench {

struct BlockShape {
  std::uint64_t max_ops = 256;  // operations in one block (a latched block stays in the queue)
  // The warm-up's first block (not counted) warms the path and, latched, is the clock's probe of
  // whether enqueueing blocks behind the latch: it must be the case's largest block when a
  // smaller one could pass the probe and a larger one block (peer copies). 0: none.
  std::uint64_t first_block_ops = 1;
  std::uint64_t probe_ops = 4;  // the block whose time per operation sizes the samples
  // Latency: half the budget goes to round trips (one operation issued, then waited for), timed
  // by the host clock — what a caller observes.
  bool latency = false;
  std::uint64_t max_round_trips = 20000;
  std::uint64_t lanes = 1;         // concurrent copies of each operation (GPUs, directions)
  std::uint64_t bytes_per_op = 0;  // per lane
  std::string verified;            // what every verified sample showed, for the check's detail
};

// What one sample measured: each timed stream's seconds for `ops` operations, and for latency the
// mean host time of one round trip.
struct BlockTimes {
  std::vector<double> seconds;
  std::uint64_t ops = 1;
  double round_trip = 0;
  double slowest() const;
};

class BlockBench : public CaseBench {
 public:
  TimingMethod timing_method() const final { return clock_->method(); }
  void warm_up(double min_time) final;
  Sample measure() final;
  void verify() final;
  std::vector<Check> checks() const override;
  std::uint64_t operations_per_sample() const final { return ops_ * shape_.lanes; }
  std::uint64_t bytes_per_sample() const final {
    return shape_.bytes_per_op * operations_per_sample();
  }
  std::string timing_detail() const override;

  // Called with each round trip's own duration when set (per-operation latency distributions);
  // otherwise round trips are timed as one loop.
  void observe_round_trips(std::function<void(double)> observer) {
    observer_ = std::move(observer);
  }

 protected:
  explicit BlockBench(BlockShape shape) : shape_(std::move(shape)) {}
  // The clock that times every block, set once by the family's constructor (after the streams it
  // times exist).
  void use_clock(std::unique_ptr<OperationClock> clock) { clock_ = std::move(clock); }

  // Issues `ops` operations without waiting for them.
  virtual void enqueue(std::uint64_t ops) = 0;
  // Waits for everything issued.
  virtual void complete() = 0;
  // Untimed, before every timed block: clear destinations, new source patterns.
  virtual void before_sample() {}
  // Throws CaseFailure when a destination does not hold what the operations must have put there.
  virtual void check_destination() = 0;
  // The metric values of one sample, in metrics() order.
  virtual std::vector<double> values(const BlockTimes& t) const = 0;

  std::uint64_t ops() const { return ops_; }
  std::uint64_t round_trip_ops() const { return round_trip_ops_; }
  const BlockShape& shape() const { return shape_; }

  std::vector<Check> checks_;  // what prepare verified (placement, memory kinds, links)

 private:
  BlockTimes timed(std::uint64_t ops);
  double round_trips(std::uint64_t n);

  BlockShape shape_;
  std::unique_ptr<OperationClock> clock_;
  std::function<void(double)> observer_;
  std::uint64_t ops_ = 1;
  std::uint64_t round_trip_ops_ = 1;
  std::uint64_t verified_ = 0;
};

}  // namespace pathbench
