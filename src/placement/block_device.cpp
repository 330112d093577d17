#include "placement/block_device.hpp"

#include <algorithm>
#include <system_error>

#include "core/text.hpp"
#include "inventory/sysfs.hpp"

namespace pathbench {

namespace fs = std::filesystem;

namespace {

// dm on md on partitions is three levels; a recorded tree with a loop in slaves/ must end.
constexpr int kMaxSlaveDepth = 4;

std::string read_trimmed(const fs::path& path) {
  const auto text = read_file_if_present(path);
  return text ? std::string(trim(*text)) : std::string();
}

// "none [mq-deadline] kyber" -> "mq-deadline"; a device without a choice ("none") as written.
std::string scheduler_of(const fs::path& queue) {
  const auto text = read_file_if_present(queue / "scheduler");
  if (!text) return {};
  const std::string chosen = parse_bracketed_choice(*text);
  return chosen.empty() ? std::string(trim(*text)) : chosen;
}

std::optional<std::uint64_t> read_count(const fs::path& path) {
  const auto text = read_file_if_present(path);
  if (!text) return std::nullopt;
  const auto v = parse_int(*text);
  if (!v || *v < 0) return std::nullopt;
  return static_cast<std::uint64_t>(*v);
}

// The entries of mq/ ("0", "1", ...): one per hardware queue. Nothing where the device has no
// mq/ (device-mapper and md devices queue through the disks below them).
std::optional<std::uint64_t> hardware_queue_count(const fs::path& mq) {
  std::error_code ec;
  if (!fs::is_directory(mq, ec)) return std::nullopt;
  std::uint64_t n = 0;
  for (const auto& e : fs::directory_iterator(mq, ec)) {
    n += e.is_directory(ec) && parse_int(e.path().filename().string()) ? 1 : 0;
  }
  return n;
}

std::optional<fs::path> resolved(const fs::path& link) {
  std::error_code ec;
  const fs::path p = fs::canonical(link, ec);
  if (ec || !fs::is_directory(p, ec)) return std::nullopt;
  return p;
}

BlockDevice read_at(const fs::path& dir, int depth) {
  BlockDevice d;
  d.name = dir.filename().string();
  std::error_code ec;
  // A partition is a directory of its disk and has a `partition` file; queue/ is the disk's.
  const fs::path disk = fs::exists(dir / "partition", ec) ? dir.parent_path() : dir;
  d.disk = disk.filename().string();
  d.model = read_trimmed(disk / "device" / "model");
  d.vendor = read_trimmed(disk / "device" / "vendor");
  if (const auto r = read_file_if_present(disk / "queue" / "rotational")) {
    if (const auto v = parse_int(*r); v && (*v == 0 || *v == 1)) d.rotational = *v == 1;
  }
  d.scheduler = scheduler_of(disk / "queue");
  d.max_segments = read_count(disk / "queue" / "max_segments");
  d.max_sectors_kb = read_count(disk / "queue" / "max_sectors_kb");
  d.hardware_queues = hardware_queue_count(disk / "mq");
  d.raid_level = read_trimmed(disk / "md" / "level");
  d.backing_file = read_trimmed(disk / "loop" / "backing_file");
  if (depth >= kMaxSlaveDepth) return d;
  std::vector<fs::path> slaves;
  for (const auto& e : fs::directory_iterator(dir / "slaves", ec)) {
    if (const auto p = resolved(e.path())) slaves.push_back(*p);
  }
  std::sort(slaves.begin(), slaves.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  for (const auto& s : slaves) d.slaves.push_back(read_at(s, depth + 1));
  return d;
}

// /dev/mapper/NAME: the dm-N whose dm/name is NAME.
std::optional<fs::path> mapper_device(const fs::path& root, const std::string& name) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root / "sys" / "block", ec)) {
    if (read_trimmed(e.path() / "dm" / "name") == name) return resolved(e.path());
  }
  return std::nullopt;
}

std::optional<fs::path> device_of_source(const fs::path& root, const std::string& source) {
  constexpr std::string_view kDev = "/dev/", kMapper = "/dev/mapper/";
  if (source.compare(0, kMapper.size(), kMapper) == 0) {
    return mapper_device(root, source.substr(kMapper.size()));
  }
  if (source.compare(0, kDev.size(), kDev) != 0) return std::nullopt;
  const std::string name = source.substr(kDev.size());
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return std::nullopt;  // /dev/disk/by-*/...: not a kernel name
  }
  return resolved(root / "sys" / "class" / "block" / name);
}

}  // namespace

BlockDevice read_block_device_at(const fs::path& device_dir) { return read_at(device_dir, 0); }

std::optional<BlockDevice> read_block_device(unsigned major, unsigned minor,
                                             const std::string& mount_source,
                                             const fs::path& root) {
  const std::string number = std::to_string(major) + ":" + std::to_string(minor);
  if (const auto dir = resolved(root / "sys" / "dev" / "block" / number)) return read_at(*dir, 0);
  if (const auto dir = device_of_source(root, mount_source)) return read_at(*dir, 0);
  return std::nullopt;
}

nlohmann::ordered_json to_json(const BlockDevice& d) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["name"] = d.name;
  j["disk"] = d.disk;
  j["model"] = d.model;
  j["vendor"] = d.vendor;
  j["rotational"] = d.rotational ? nlohmann::ordered_json(*d.rotational) : nullptr;
  j["scheduler"] = d.scheduler;
  const auto count = [](const std::optional<std::uint64_t>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  j["max_segments"] = count(d.max_segments);
  j["max_sectors_kb"] = count(d.max_sectors_kb);
  j["hardware_queues"] = count(d.hardware_queues);
  if (!d.raid_level.empty()) j["raid_level"] = d.raid_level;
  if (!d.backing_file.empty()) j["backing_file"] = d.backing_file;
  nlohmann::ordered_json slaves = nlohmann::ordered_json::array();
  for (const auto& s : d.slaves) slaves.push_back(to_json(s));
  j["slaves"] = std::move(slaves);
  return j;
}

std::string describe(const BlockDevice& d) {
  std::string s = d.name + " (";
  if (d.disk != d.name) s += "disk " + d.disk + ", ";
  if (!d.raid_level.empty()) s += d.raid_level + ", ";
  s += d.model.empty() ? "no model" : "model \"" + d.model + "\"";
  if (d.rotational) s += *d.rotational ? ", rotational" : ", non-rotational";
  if (!d.scheduler.empty()) s += ", scheduler " + d.scheduler;
  if (!d.backing_file.empty()) s += ", backed by " + d.backing_file;
  if (d.hardware_queues) {
    s += ", " + std::to_string(*d.hardware_queues) +
         (*d.hardware_queues == 1 ? " hardware queue" : " hardware queues");
  }
  if (d.max_segments || d.max_sectors_kb) {
    s += ", requests of at most ";
    if (d.max_segments) s += std::to_string(*d.max_segments) + " segments";
    if (d.max_segments && d.max_sectors_kb) s += " and ";
    if (d.max_sectors_kb) s += std::to_string(*d.max_sectors_kb) + " KiB";
  }
  s += ")";
  if (!d.slaves.empty()) {
    s += " on ";
    for (std::size_t i = 0; i < d.slaves.size(); ++i) {
      if (i > 0) s += " + ";
      s += describe(d.slaves[i]);
    }
  }
  return s;
}

}  // namespace pathbench
