// The block device reader on sysfs trees laid out as the kernel lays them out (recorded from
// real nodes): an NVMe partition, a virtio disk (no model, the kernel calling it rotational), an
// md RAID0 of two NVMe drives, dm-crypt on a partition, a loop device, btrfs (whose st_dev is no
// block device, found by its mount source and by /dev/mapper), and an overlay with no device.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "placement/block_device.hpp"
#include "temp_dir.hpp"

namespace pathbench::test_block_device {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNvme0 = "pci0000:00/0000:00:03.0/0000:05:00.0/nvme/nvme0";
constexpr const char* kNvme1 = "pci0000:00/0000:00:04.0/0000:06:00.0/nvme/nvme1";

class BlockTree {
 public:
  // A disk below /sys/devices/<parent>/<name> with its queue, its /sys/block and /sys/class/block
  // links and its /sys/dev/block/<number> link.
  fs::path disk(const std::string& parent, const std::string& name, const std::string& number,
                const std::string& rotational, const std::string& scheduler) {
    const fs::path dir = root() / "sys/devices" / parent / name;
    fs::create_directories(dir / "queue");
    write(dir / "queue/rotational", rotational);
    write(dir / "queue/scheduler", scheduler);
    write(dir / "dev", number);
    links(dir, name, number);
    fs::create_directories(root() / "sys/block");
    fs::create_directory_symlink(fs::relative(dir, root() / "sys/block"),
                                 root() / "sys/block" / name);
    return dir;
  }
  fs::path partition(const fs::path& disk, const std::string& name, const std::string& number) {
    const fs::path dir = disk / name;
    fs::create_directories(dir);
    write(dir / "partition", "2");
    write(dir / "dev", number);
    links(dir, name, number);
    return dir;
  }
  // The device's controller, as device/ links it (the model lives there).
  void controller(const fs::path& disk, const std::string& controller_dir, const std::string& model,
                  const std::string& vendor = "") {
    const fs::path dir = root() / "sys/devices" / controller_dir;
    fs::create_directories(dir);
    if (!model.empty()) write(dir / "model", model);
    if (!vendor.empty()) write(dir / "vendor", vendor);
    fs::create_directory_symlink(fs::relative(dir, disk), disk / "device");
  }
  void slave(const fs::path& holder, const fs::path& device) {
    fs::create_directories(holder / "slaves");
    fs::create_directory_symlink(fs::relative(device, holder / "slaves"),
                                 holder / "slaves" / device.filename());
  }
  void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
  }
  const fs::path& root() const { return tmp_.path(); }

 private:
  void links(const fs::path& dir, const std::string& name, const std::string& number) {
    fs::create_directories(root() / "sys/dev/block");
    fs::create_directory_symlink(fs::relative(dir, root() / "sys/dev/block"),
                                 root() / "sys/dev/block" / number);
    fs::create_directories(root() / "sys/class/block");
    fs::create_directory_symlink(fs::relative(dir, root() / "sys/class/block"),
                                 root() / "sys/class/block" / name);
  }
  testing::TempDir tmp_{"pathbench_block"};
};

// nvme0n1 (Samsung) with partition p2, nvme1n1 (Micron): namespaces below their controllers.
void two_nvme_drives(BlockTree& t) {
  const fs::path n0 = t.disk(kNvme0, "nvme0n1", "259:0", "0", "[none] mq-deadline kyber bfq");
  t.controller(n0, kNvme0, "SAMSUNG MZQL27T6HBLA-00A07");
  t.partition(n0, "nvme0n1p2", "259:2");
  const fs::path n1 = t.disk(kNvme1, "nvme1n1", "259:3", "0", "[none] mq-deadline kyber bfq");
  t.controller(n1, kNvme1, "Micron_7450_MTFDKCC7T6TFR");
}

TEST(BlockDevice, APartitionIsReadThroughItsDisk) {
  BlockTree t;
  two_nvme_drives(t);
  const auto d = read_block_device(259, 2, "/dev/nvme0n1p2", t.root());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "nvme0n1p2");
  EXPECT_EQ(d->disk, "nvme0n1");
  EXPECT_EQ(d->model, "SAMSUNG MZQL27T6HBLA-00A07");
  ASSERT_TRUE(d->rotational);
  EXPECT_FALSE(*d->rotational);
  EXPECT_EQ(d->scheduler, "none");
  EXPECT_TRUE(d->slaves.empty());
  EXPECT_EQ(describe(*d),
            "nvme0n1p2 (disk nvme0n1, model \"SAMSUNG MZQL27T6HBLA-00A07\", non-rotational, "
            "scheduler none)");
  const auto j = to_json(*d);
  EXPECT_EQ(j.at("disk"), "nvme0n1");
  EXPECT_EQ(j.at("rotational"), false);
  EXPECT_TRUE(j.at("slaves").empty());
  EXPECT_FALSE(j.contains("raid_level"));
}

// This machine's kind of disk: virtio has a vendor id but no model, and the kernel marks it
// rotational (the hypervisor does not say otherwise).
TEST(BlockDevice, AVirtioDiskHasNoModelAndIsCalledRotational) {
  BlockTree t;
  const fs::path vda =
      t.disk("pci0000:00/0000:00:02.0/virtio1/block", "vda", "254:0", "1", "none [mq-deadline]");
  t.controller(vda, "pci0000:00/0000:00:02.0/virtio1", "", "0x1af4");
  const auto d = read_block_device(254, 0, "/dev/vda", t.root());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->disk, "vda");
  EXPECT_EQ(d->model, "");
  EXPECT_EQ(d->vendor, "0x1af4");
  EXPECT_EQ(d->rotational, std::optional<bool>(true));
  EXPECT_EQ(d->scheduler, "mq-deadline");
  EXPECT_EQ(describe(*d), "vda (no model, rotational, scheduler mq-deadline)");
  EXPECT_EQ(to_json(*d).at("model"), "");
  EXPECT_EQ(to_json(*d).at("max_segments"), nullptr);  // not in this tree
}

// What one reader can reach, as the H100 VMs' virtio disk showed it: one hardware queue and at
// most 254 segments per request (a 1 MiB read into 4 KiB pages needs 256), against an NVMe
// drive's queue per CPU. mq/ holds one numbered directory per queue and nothing else counts.
TEST(BlockDevice, SegmentsRequestSizeAndHardwareQueuesAreRead) {
  BlockTree t;
  const fs::path vda =
      t.disk("pci0000:00/0000:00:02.0/virtio1/block", "vda", "254:0", "1", "none [mq-deadline]");
  t.write(vda / "queue/max_segments", "254");
  t.write(vda / "queue/max_sectors_kb", "4096");
  fs::create_directories(vda / "mq/0");
  const auto d = read_block_device(254, 0, "/dev/vda", t.root());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->max_segments, std::optional<std::uint64_t>(254));
  EXPECT_EQ(d->max_sectors_kb, std::optional<std::uint64_t>(4096));
  EXPECT_EQ(d->hardware_queues, std::optional<std::uint64_t>(1));
  EXPECT_EQ(describe(*d),
            "vda (no model, rotational, scheduler mq-deadline, 1 hardware queue, requests of at "
            "most 254 segments and 4096 KiB)");
  const auto j = to_json(*d);
  EXPECT_EQ(j.at("max_segments"), 254);
  EXPECT_EQ(j.at("max_sectors_kb"), 4096);
  EXPECT_EQ(j.at("hardware_queues"), 1);

  BlockTree n;
  const fs::path nvme = n.disk(kNvme0, "nvme0n1", "259:0", "0", "[none] mq-deadline kyber bfq");
  n.partition(nvme, "nvme0n1p2", "259:2");
  n.write(nvme / "queue/max_segments", "127");
  for (int q = 0; q < 32; ++q) fs::create_directories(nvme / "mq" / std::to_string(q));
  n.write(nvme / "mq/not-a-queue", "x");  // a file, not a queue
  const auto p = read_block_device(259, 2, "/dev/nvme0n1p2", n.root());
  ASSERT_TRUE(p);  // a partition: the disk's queue
  EXPECT_EQ(p->hardware_queues, std::optional<std::uint64_t>(32));
  EXPECT_EQ(p->max_segments, std::optional<std::uint64_t>(127));
  EXPECT_FALSE(p->max_sectors_kb);
  EXPECT_NE(describe(*p).find(", 32 hardware queues, requests of at most 127 segments)"),
            std::string::npos)
      << describe(*p);

  BlockTree bad;
  const fs::path odd = bad.disk("virtual/block", "loop0", "7:0", "0", "none");
  bad.write(odd / "queue/max_segments", "lots");
  bad.write(odd / "queue/max_sectors_kb", "-1");
  const auto o = read_block_device(7, 0, "/dev/loop0", bad.root());
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->max_segments);  // not a count: left empty, not guessed
  EXPECT_FALSE(o->max_sectors_kb);
  EXPECT_FALSE(o->hardware_queues);  // no mq/
}

// A stripe: md0 (RAID0) over both drives, each described with its own model.
TEST(BlockDevice, AnMdStripeListsTheDrivesItIsBuiltOn) {
  BlockTree t;
  two_nvme_drives(t);
  const fs::path md = t.disk("virtual/block", "md0", "9:0", "0", "none");
  t.write(md / "md/level", "raid0");
  t.slave(md, t.root() / "sys/devices" / kNvme1 / "nvme1n1");
  t.slave(md, t.root() / "sys/devices" / kNvme0 / "nvme0n1");
  const auto d = read_block_device(9, 0, "/dev/md0", t.root());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "md0");
  EXPECT_EQ(d->raid_level, "raid0");
  EXPECT_EQ(d->scheduler, "none");  // no bracketed choice: as written
  ASSERT_EQ(d->slaves.size(), 2u);
  EXPECT_EQ(d->slaves[0].name, "nvme0n1");  // sorted by name
  EXPECT_EQ(d->slaves[0].model, "SAMSUNG MZQL27T6HBLA-00A07");
  EXPECT_EQ(d->slaves[1].model, "Micron_7450_MTFDKCC7T6TFR");
  const std::string text = describe(*d);
  EXPECT_NE(text.find("md0 (raid0, no model, non-rotational, scheduler none) on nvme0n1 ("),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" + nvme1n1 (model \"Micron_7450_MTFDKCC7T6TFR\""), std::string::npos)
      << text;
  const auto j = to_json(*d);
  EXPECT_EQ(j.at("raid_level"), "raid0");
  EXPECT_EQ(j.at("slaves").size(), 2u);
  EXPECT_EQ(j.at("slaves")[1].at("disk"), "nvme1n1");
}

// dm-crypt on a partition: the slave is the partition, read through its disk.
TEST(BlockDevice, ADeviceMapperTargetLeadsToThePartitionBelowIt) {
  BlockTree t;
  two_nvme_drives(t);
  const fs::path dm = t.disk("virtual/block", "dm-0", "252:0", "0", "none");
  t.write(dm / "dm/name", "cryptdata");
  t.slave(dm, t.root() / "sys/devices" / kNvme0 / "nvme0n1/nvme0n1p2");
  const auto d = read_block_device(252, 0, "/dev/mapper/cryptdata", t.root());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "dm-0");
  ASSERT_EQ(d->slaves.size(), 1u);
  EXPECT_EQ(d->slaves[0].name, "nvme0n1p2");
  EXPECT_EQ(d->slaves[0].disk, "nvme0n1");
  EXPECT_EQ(d->slaves[0].model, "SAMSUNG MZQL27T6HBLA-00A07");
}

TEST(BlockDevice, ALoopDeviceNamesItsBackingFile) {
  BlockTree t;
  const fs::path loop = t.disk("virtual/block", "loop3", "7:3", "0", "none");
  t.write(loop / "loop/backing_file", "/var/lib/images/scratch.img");
  const auto d = read_block_device(7, 3, "/dev/loop3", t.root());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->backing_file, "/var/lib/images/scratch.img");
  EXPECT_NE(describe(*d).find("backed by /var/lib/images/scratch.img"), std::string::npos);
  EXPECT_EQ(to_json(*d).at("backing_file"), "/var/lib/images/scratch.img");
}

// btrfs reports an anonymous device number (0:45), which /sys/dev/block does not hold: the mount
// source names the device instead, /dev/NAME or /dev/mapper/NAME.
TEST(BlockDevice, AnAnonymousDeviceNumberIsResolvedByTheMountSource) {
  BlockTree t;
  two_nvme_drives(t);
  const fs::path dm = t.disk("virtual/block", "dm-1", "252:1", "0", "none");
  t.write(dm / "dm/name", "vg0-models");
  const auto by_name = read_block_device(0, 45, "/dev/nvme1n1", t.root());
  ASSERT_TRUE(by_name);
  EXPECT_EQ(by_name->model, "Micron_7450_MTFDKCC7T6TFR");
  const auto by_mapper = read_block_device(0, 45, "/dev/mapper/vg0-models", t.root());
  ASSERT_TRUE(by_mapper);
  EXPECT_EQ(by_mapper->name, "dm-1");
  EXPECT_FALSE(read_block_device(0, 45, "/dev/mapper/absent", t.root()));
  EXPECT_FALSE(read_block_device(0, 45, "/dev/disk/by-uuid/1234", t.root()));
  EXPECT_FALSE(read_block_device(0, 45, "/dev/../etc", t.root()));
}

TEST(BlockDevice, NoBlockDeviceBehindAnOverlayOrANetworkFileSystem) {
  BlockTree t;
  two_nvme_drives(t);
  EXPECT_FALSE(read_block_device(0, 50, "overlay", t.root()));
  EXPECT_FALSE(read_block_device(0, 51, "fileserver:/export/models", t.root()));
  EXPECT_FALSE(read_block_device(0, 52, "", t.root()));
}

// Missing files leave their fields empty: a container may hide any of them.
TEST(BlockDevice, MissingFilesLeaveFieldsEmpty) {
  BlockTree t;
  const fs::path dir = t.root() / "sys/devices/virtual/block/zram0";
  fs::create_directories(dir);
  fs::create_directories(t.root() / "sys/dev/block");
  fs::create_directory_symlink("../../devices/virtual/block/zram0",
                               t.root() / "sys/dev/block/253:0");
  const auto d = read_block_device(253, 0, "/dev/zram0", t.root());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "zram0");
  EXPECT_FALSE(d->rotational);
  EXPECT_EQ(d->scheduler, "");
  EXPECT_EQ(to_json(*d).at("rotational"), nullptr);
  EXPECT_EQ(to_json(*d).at("hardware_queues"), nullptr);
  EXPECT_EQ(describe(*d), "zram0 (no model)");
}

}  // namespace
}  // namespace pathbench::test_block_device
