#pragma once

// Where a file under test lives: the file system's type and the mount's source (from
// /proc/self/mountinfo), the block device behind it (sysfs: model, rotational, scheduler) and the
// free space, probed on the folder or, before it exists, on its nearest existing parent. tmpfs (and
// ramfs) hold their files in the page cache itself: a read from them is never cold, and O_DIRECT
// open fails there.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "placement/block_device.hpp"

namespace pathbench {

struct StorageLocation {
  std::string dir;               // as asked for, made absolute
  std::string probed;            // the existing folder that statfs looked at
  std::string fs_type;           // "ext4", "xfs", "tmpfs", ...; "0x<magic>" when unknown
  bool memory_backed = false;    // tmpfs or ramfs
  std::uint64_t free_bytes = 0;  // statvfs f_bavail * f_frsize (what this user may fill)
  std::string source;            // the mount's source ("/dev/nvme0n1p2", "overlay"); "" unknown
  std::string mount_point;
  std::string device_number;                // st_dev as "major:minor"
  std::optional<BlockDevice> block_device;  // empty: no block device behind it (nfs, overlay)
};

// Throws SystemError when no parent of `dir` can be statfs'd.
StorageLocation probe_storage(const std::string& dir);

// The file system name of statfs's f_type, for the types a node stores files on; nothing when
// unknown.
std::optional<std::string> filesystem_name(std::uint64_t f_type);

// The mount of /proc/self/mountinfo `text` whose mount point is the longest prefix of `path` (an
// absolute, symlink-free path): its type, source and mount point. Nothing when none matches.
struct MountEntry {
  std::string mount_point, fs_type, source;
};
std::optional<MountEntry> mount_of(std::string_view mountinfo_text, const std::string& path);

// Free space the file must leave: 5 % of it, at least 256 MiB, so a run never fills the disk.
constexpr std::uint64_t storage_free_margin(std::uint64_t file_bytes) {
  const std::uint64_t floor = std::uint64_t{256} << 20;
  return file_bytes / 20 > floor ? file_bytes / 20 : floor;
}

}  // namespace pathbench
