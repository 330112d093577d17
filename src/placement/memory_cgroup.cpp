#include "placement/memory_cgroup.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <vector>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "inventory/sysfs.hpp"

namespace pathbench {

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find(sep, start);
    out.push_back(
        text.substr(start, end == std::string_view::npos ? text.size() - start : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (auto line : split(text, '\n')) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

bool has_option(std::string_view options, std::string_view name) {
  for (auto o : split(options, ',')) {
    if (o == name) return true;
  }
  return false;
}

// The mount of a hierarchy (fstype cgroup with the memory option, or cgroup2) and the part of it
// that is mounted there (a container sees its own subtree as "/").
struct HierarchyMount {
  std::string point;
  std::string root;
};

std::optional<HierarchyMount> find_mount(std::string_view mountinfo, int version) {
  for (auto line : lines(mountinfo)) {
    const auto dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const auto before = split(line.substr(0, dash), ' ');
    const auto after = split(line.substr(dash + 3), ' ');
    if (before.size() < 5 || after.size() < 3) continue;
    const bool match = version == 1 ? after[0] == "cgroup" && has_option(after[2], "memory")
                                    : after[0] == "cgroup2";
    if (match) return HierarchyMount{std::string(before[4]), std::string(before[3])};
  }
  return std::nullopt;
}

std::filesystem::path under_mount(const HierarchyMount& mount, std::string_view path) {
  std::string_view rest = path;
  if (mount.root != "/" && rest.starts_with(mount.root)) rest.remove_prefix(mount.root.size());
  std::filesystem::path dir = mount.point;
  const std::string relative(rest.starts_with('/') ? rest.substr(1) : rest);
  return relative.empty() ? dir : dir / relative;
}

void write_file(const std::filesystem::path& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  if (!out) throw SystemError("write " + value + " to " + path.string(), errno ? errno : EIO);
}

// "oom_kill 3" in memory.events (v2) or memory.oom_control (v1).
std::optional<std::uint64_t> named_count(const std::string& text, std::string_view name) {
  for (auto line : lines(text)) {
    const auto fields = split(line, ' ');
    if (fields.size() == 2 && fields[0] == name) {
      try {
        return std::stoull(std::string(fields[1]));
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

std::atomic<unsigned> next_cgroup{0};

}  // namespace

std::optional<CgroupLocation> find_memory_cgroup(std::string_view proc_self_cgroup,
                                                 std::string_view mountinfo) {
  std::optional<std::string> v2_path;
  for (auto line : lines(proc_self_cgroup)) {
    // "hierarchy-ID:controller-list:path"; the path may itself hold ':'.
    const auto first = line.find(':');
    const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const auto controllers = line.substr(first + 1, second - first - 1);
    const auto path = line.substr(second + 1);
    if (has_option(controllers, "memory")) {
      if (auto mount = find_mount(mountinfo, 1))
        return CgroupLocation{under_mount(*mount, path), 1};
    }
    if (line.substr(0, first) == "0" && controllers.empty()) v2_path = std::string(path);
  }
  if (v2_path) {
    if (auto mount = find_mount(mountinfo, 2))
      return CgroupLocation{under_mount(*mount, *v2_path), 2};
  }
  return std::nullopt;
}

MemoryCgroup::MemoryCgroup(std::uint64_t limit_bytes) : limit_(limit_bytes) {
  const auto cgroup = read_file_if_present("/proc/self/cgroup");
  const auto mountinfo = read_file_if_present("/proc/self/mountinfo");
  const auto where = cgroup && mountinfo ? find_memory_cgroup(*cgroup, *mountinfo) : std::nullopt;
  if (!where) {
    throw SkipCase(
        "memory_cap needs a memory cgroup: /proc/self/cgroup and mountinfo name none "
        "(no cgroup v1 memory controller or cgroup v2 mounted)");
  }
  version_ = where->version;
  dir_ = where->dir / ("pathbench-cap-" + std::to_string(::getpid()) + "-" +
                       std::to_string(next_cgroup.fetch_add(1)));
  std::error_code ec;
  if (!std::filesystem::create_directory(dir_, ec) || ec) {
    throw SkipCase("memory_cap needs a memory cgroup of its own: cannot create " + dir_.string() +
                   " (" + (ec ? ec.message() : std::string("it exists")) +
                   "; run as root with a writable cgroup file system)");
  }
  const std::filesystem::path limit_file =
      dir_ / (version_ == 1 ? "memory.limit_in_bytes" : "memory.max");
  try {
    if (!std::filesystem::exists(limit_file)) {
      throw SkipCase("memory_cap: " + dir_.string() + " has no " + limit_file.filename().string() +
                     (version_ == 2 ? " (the memory controller is not enabled for this cgroup's "
                                      "children: +memory in the parent's cgroup.subtree_control)"
                                    : ""));
    }
    write_file(limit_file, std::to_string(limit_bytes));
  } catch (...) {
    std::filesystem::remove(dir_, ec);
    throw;
  }
}

MemoryCgroup::~MemoryCgroup() {
  // rmdir, not remove_all: a cgroup directory's files cannot be unlinked.
  ::rmdir(dir_.c_str());
}

void MemoryCgroup::add(pid_t pid) const { write_file(dir_ / "cgroup.procs", std::to_string(pid)); }

std::optional<std::uint64_t> MemoryCgroup::oom_kills() const {
  const auto text = read_file_if_present(dir_ / (version_ == 1 ? "memory.oom_control" : "memory.events"));
  return text ? named_count(*text, "oom_kill") : std::nullopt;
}

std::string MemoryCgroup::describe() const {
  return "cgroup v" + std::to_string(version_) + " " + dir_.string() + ", limit " +
         format_bytes(limit_);
}

}  // namespace pathbench
