#include "placement/numa_balancing.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "core/errors.hpp"
#include "inventory/sysfs.hpp"

namespace pathbench {

namespace {

// ofstream does not report why a write to /proc failed; errno still holds it.
std::string write_value(const std::filesystem::path& file, int value) {
  std::ofstream out(file);
  if (!out) return std::strerror(errno);
  out << value << '\n';
  out.flush();
  if (!out) return std::strerror(errno);
  return "";
}

}  // namespace

NumaBalancingScope::NumaBalancingScope(int value, std::filesystem::path root)
    : root_(std::move(root)), file_(root_ / "proc/sys/kernel/numa_balancing"), value_(value) {
  const auto before = read_numa_balancing(root_);
  if (!before) throw SkipCase("cannot read " + file_.string() + " (numa_balancing)");
  previous_ = *before;
  if (const std::string why = write_value(file_, value); !why.empty()) {
    throw SkipCase("cannot set numa_balancing: writing " + std::to_string(value) + " to " +
                   file_.string() + " failed (" + why + "; it needs root)");
  }
}

NumaBalancingScope::~NumaBalancingScope() {
  // A restore that fails has no one to tell but the next run's context, which records the value.
  write_value(file_, previous_);
}

Check NumaBalancingScope::check() const {
  const auto now = read_numa_balancing(root_);
  const bool held = now && (*now != 0) == (value_ != 0);
  return {"numa_balancing", held,
          "numa_balancing " + std::string(value_ != 0 ? "on" : "off") + " for the case (" +
              (now ? "reads " + std::to_string(*now) : std::string("unreadable")) +
              "), restored to " + std::to_string(previous_) + " after it",
          value_};
}

}  // namespace pathbench
