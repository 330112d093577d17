#include "placement/storage_location.hpp"

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/errors.hpp"

namespace pathbench {

namespace {

// Octal escapes mountinfo uses for space, tab, newline and backslash in paths.
std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string oct(s.substr(i + 1, 3));
      if (oct.find_first_not_of("01234567") == std::string::npos) {
        out += static_cast<char>(std::stoi(oct, nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool is_prefix_dir(const std::string& mount, const std::string& path) {
  if (mount == "/") return true;
  return path.compare(0, mount.size(), mount) == 0 &&
         (path.size() == mount.size() || path[mount.size()] == '/');
}

std::string read_text(const char* path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::optional<std::string> filesystem_name(std::uint64_t f_type) {
  switch (f_type) {
    case 0xEF53:
      return "ext4";  // ext2/3/4 share the magic
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x01021994:
      return "tmpfs";
    case 0x858458F6:
      return "ramfs";
    case 0x794C7630:
      return "overlay";
    case 0x6969:
      return "nfs";
    case 0x2FC12FC1:
      return "zfs";
    case 0x0BD00BD0:
      return "lustre";
    case 0x47504653:
      return "gpfs";
    case 0x65735546:
      return "fuse";
    default:
      return std::nullopt;
  }
}

std::optional<MountEntry> mount_of(std::string_view text, const std::string& path) {
  std::optional<MountEntry> best;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    // id parent major:minor root mount-point options [optional...] - type source super-options
    std::size_t dash = 0;
    for (std::size_t i = 6; i < f.size(); ++i) {
      if (f[i] == "-") {
        dash = i;
        break;
      }
    }
    if (dash == 0 || dash + 1 >= f.size()) continue;
    MountEntry e{unescape(f[4]), f[dash + 1], dash + 2 < f.size() ? unescape(f[dash + 2]) : ""};
    if (!is_prefix_dir(e.mount_point, path)) continue;
    // Later lines of the same mount point are mounts on top of earlier ones.
    if (!best || e.mount_point.size() >= best->mount_point.size()) best = std::move(e);
  }
  return best;
}

StorageLocation probe_storage(const std::string& dir) {
  StorageLocation loc;
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(dir, ec);
  if (ec) p = dir;
  loc.dir = p.string();
  while (!std::filesystem::exists(p, ec) && p.has_parent_path() && p != p.parent_path()) {
    p = p.parent_path();
  }
  const std::filesystem::path canonical = std::filesystem::canonical(p, ec);
  loc.probed = ec ? p.string() : canonical.string();
  struct statfs fs {};
  if (::statfs(loc.probed.c_str(), &fs) != 0) throw SystemError("statfs " + loc.probed, errno);
  const auto type = static_cast<std::uint64_t>(fs.f_type);
  if (auto name = filesystem_name(type)) {
    loc.fs_type = *name;
  } else {
    std::ostringstream hex;
    hex << "0x" << std::hex << type;
    loc.fs_type = hex.str();
  }
  loc.memory_backed = type == 0x01021994 || type == 0x858458F6;
  struct statvfs vfs {};
  if (::statvfs(loc.probed.c_str(), &vfs) != 0) throw SystemError("statvfs " + loc.probed, errno);
  loc.free_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  if (auto m = mount_of(read_text("/proc/self/mountinfo"), loc.probed)) {
    loc.source = m->source;
    loc.mount_point = m->mount_point;
    // mountinfo tells ext2/3/4 and fuse subtypes apart, where the magic number cannot.
    if (!m->fs_type.empty()) loc.fs_type = m->fs_type;
  }
  struct stat st {};
  if (::stat(loc.probed.c_str(), &st) != 0) throw SystemError("stat " + loc.probed, errno);
  const unsigned major = ::major(st.st_dev), minor = ::minor(st.st_dev);
  loc.device_number = std::to_string(major) + ":" + std::to_string(minor);
  loc.block_device = read_block_device(major, minor, loc.source);
  return loc;
}

}  // namespace pathbench
