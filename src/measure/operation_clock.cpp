#include "measure/operation_clock.hpp"

#include "core/host_clock.hpp"

namespace pathbench {

std::vector<double> HostClock::time(const Enqueue& enqueue) {
  return {time_on_host([&] {
    enqueue();
    if (complete_) complete_();
  })};
}

std::string HostClock::describe() const {
  std::string text = "host steady clock around issuing each block";
  if (complete_) text += " and waiting for its completion";
  if (!why_.empty()) text += " (" + why_ + ")";
  return text;
}

}  // namespace pathbench
