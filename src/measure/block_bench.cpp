#include "measure/block_bench.hpp"

#include <algorithm>

#include "core/host_clock.hpp"

namespace pathbench {

double BlockTimes::slowest() const {
  return seconds.empty() ? 0.0 : *std::max_element(seconds.begin(), seconds.end());
}

BlockTimes BlockBench::timed(std::uint64_t ops) {
  BlockTimes t;
  t.ops = ops;
  t.seconds = clock_->time([&] { enqueue(ops); });
  return t;
}

double BlockBench::round_trips(std::uint64_t n) {
  auto one = [&] {
    enqueue(1);
    complete();
  };
  if (!observer_) {
    return time_on_host([&] {
      for (std::uint64_t i = 0; i < n; ++i) one();
    });
  }
  double total = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const double s = time_on_host(one);
    observer_(s);
    total += s;
  }
  return total;
}

void BlockBench::warm_up(double min_time) {
  ops_ = 1;
  if (shape_.first_block_ops > 0) {
    before_sample();
    timed(std::min(shape_.first_block_ops, shape_.max_ops));
  }
  const std::uint64_t probe = std::clamp<std::uint64_t>(shape_.probe_ops, 1, shape_.max_ops);
  const double per_op = timed(probe).slowest() / static_cast<double>(probe);
  const double budget = shape_.latency ? min_time / 2 : min_time;
  ops_ = operations_for(budget, per_op, shape_.max_ops);
  if (shape_.latency) {
    const double rt = round_trips(4) / 4;
    round_trip_ops_ = operations_for(min_time / 2, rt, shape_.max_round_trips);
  }
}

Sample BlockBench::measure() {
  before_sample();
  BlockTimes t = timed(ops_);
  if (shape_.latency) {
    t.round_trip = round_trips(round_trip_ops_) / static_cast<double>(round_trip_ops_);
  }
  return {t.slowest(), values(t)};
}

void BlockBench::verify() {
  check_destination();
  ++verified_;
}

std::vector<Check> BlockBench::checks() const {
  std::vector<Check> all = checks_;
  all.push_back({"copy_pattern", verified_ > 0,
                 verified_ > 0 ? shape_.verified + " after every sample" : "no sample was verified",
                 verified_});
  return all;
}

std::string BlockBench::timing_detail() const {
  std::string text = std::to_string(ops_) + " operation" + (ops_ == 1 ? "" : "s") +
                     " per block; " + clock_->describe();
  if (shape_.latency) {
    text += "; round trips (" + std::to_string(round_trip_ops_) +
            " per sample) by the host clock from issue to completion";
  }
  return text;
}

}  // namespace pathbench
