#pragma once

// The block device a file lives on, from sysfs: what a storage figure means depends on it (an
// NVMe drive, a stripe of them, a rotating disk, a virtual disk) and on the I/O scheduler in
// front of it. From the file's st_dev, /sys/dev/block/MAJ:MIN leads to the device (a partition's
// parent directory is its disk, which holds queue/ and device/); a device-mapper or md device
// lists what it is built on in slaves/. A file system whose st_dev names no block device (btrfs
// and its anonymous device numbers) is found by its mount source (/dev/NAME). Readers take a
// root, "/" being the live system, so tests point them at a recorded tree; a missing file leaves
// its field empty.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pathbench {

struct BlockDevice {
  std::string name;    // the device the file system is on: "nvme0n1p2", "dm-0", "md0", "vda"
  std::string disk;    // the whole device holding it ("nvme0n1"); `name` when no partition
  std::string model;   // the disk's device/model, trimmed; "" where the driver has none (virtio)
  std::string vendor;  // the disk's device/vendor ("ATA", "0x1af4" for virtio); often ""
  std::optional<bool> rotational;  // queue/rotational
  std::string scheduler;           // queue/scheduler's choice: "none", "mq-deadline", ...
  // How much of the disk one reader can reach: queue/max_segments (the most memory pieces one
  // request may gather: an O_DIRECT read into scattered 4 KiB pages is one segment per page, so
  // a 1 MiB read into them needs 256 and is split where the disk takes fewer, as virtio's 254),
  // queue/max_sectors_kb (the largest request the kernel sends) and the hardware queues (mq/
  // entries: an NVMe drive has one per CPU or so, a virtio disk often one).
  std::optional<std::uint64_t> max_segments;
  std::optional<std::uint64_t> max_sectors_kb;
  std::optional<std::uint64_t> hardware_queues;
  std::string raid_level;           // md devices: md/level ("raid0")
  std::string backing_file;         // loop devices: loop/backing_file
  std::vector<BlockDevice> slaves;  // device-mapper and md: the devices it is built on
};

nlohmann::ordered_json to_json(const BlockDevice& device);

// "nvme0n1p2 (disk nvme0n1, model "X", non-rotational, scheduler none)" and its slaves; where
// sysfs gave them, also ", 32 hardware queues, requests of at most 128 segments and 1280 KiB".
std::string describe(const BlockDevice& device);

// The device of device number major:minor, else of `mount_source` when it is /dev/NAME or
// /dev/mapper/NAME; nothing when neither leads to one (a network, overlay or memory file system).
std::optional<BlockDevice> read_block_device(unsigned major, unsigned minor,
                                             const std::string& mount_source,
                                             const std::filesystem::path& root = "/");

// The device at `device_dir` (a directory below root/sys/devices), with its slaves.
BlockDevice read_block_device_at(const std::filesystem::path& device_dir);

}  // namespace pathbench
