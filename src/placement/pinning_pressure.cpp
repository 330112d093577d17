#include "placement/pinning_pressure.hpp"

#include "core/errors.hpp"
#include "core/host_clock.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "inventory/sysfs.hpp"
#include "placement/smaps.hpp"

namespace pathbench {

namespace {

std::uint64_t mem_available() { return read_meminfo().mem_available_bytes; }

}  // namespace

PinningPressure::PinningPressure(const PinningPressureRequest& request)
    : request_(request), available_before_(mem_available()) {
  if (request_.bytes == 0) return;  // 0 %: the case runs without pressure, and says so
  buffer_.emplace(HostBufferRequest{request_.bytes, PageType::k4K, std::nullopt});
  lock_seconds_ = time_on_host([&] { lock_ = MemoryLock(buffer_->data(), buffer_->size()); });
  available_held_ = mem_available();
  const LockState state = query_lock_state(buffer_->data(), buffer_->size());
  if (!state.locked() || state.locked_kb * 1024 < buffer_->size()) {
    throw CaseFailure(concat("mlock of ", format_bytes(buffer_->size()),
                             " for pinning pressure returned 0 but smaps shows ", state.describe(),
                             ": the memory is not pinned"));
  }
}

Check PinningPressure::check() const {
  nlohmann::ordered_json v;
  v["pinned_pct"] = request_.pct;
  v["pinned_bytes"] = request_.bytes;
  v["mem_total_bytes"] = request_.mem_total_bytes;
  v["cap_pct"] = request_.cap_pct;
  v["memlock_limit_bytes"] = request_.memlock_limit_bytes;
  v["mem_available_before_bytes"] = available_before_;
  if (request_.bytes == 0) {
    return {"pinning_pressure", true,
            concat("nothing pinned (pinned_pct 0: the reference); MemAvailable ",
                   format_bytes(available_before_)),
            v};
  }
  const LockState state = query_lock_state(buffer_->data(), buffer_->size());
  const bool held = state.locked() && state.locked_kb * 1024 >= buffer_->size();
  v["mem_available_pinned_bytes"] = available_held_;
  v["locked_bytes"] = state.locked_kb * 1024;
  v["lock_seconds"] = lock_seconds_;
  return {"pinning_pressure", held,
          concat(held ? "held " : "no longer holds ", format_bytes(request_.bytes), " (",
                 std::to_string(request_.pct), " % of MemTotal ",
                 format_bytes(request_.mem_total_bytes), ", cap ", std::to_string(request_.cap_pct),
                 " %) locked in 4 KiB pages (smaps: ", state.describe(), "), locked in ",
                 format_seconds(lock_seconds_), "; MemAvailable ", format_bytes(available_before_),
                 " before, ", format_bytes(available_held_), " while held"),
          v};
}

}  // namespace pathbench
