// latency_fuse: a read-only FUSE file system whose one file answers every read only after a fixed
// delay, standing in for a storage device with a fixed access time. On a local disk or tmpfs a
// deeper queue of O_DIRECT reads changes almost nothing, so nothing would show that the reader's
// queue depth reaches the device or pays off where the device has latency (an NVMe drive, a
// stripe of them); here each read costs --latency-us, N reads overlap only if N are really in
// flight, and the file system counts how many were.
//
// Files:
//   data   --size bytes of pathbench's verification pattern (measure/pattern.hpp, the bytes a
//          PatternFile of --seed holds), so measure/pattern_file.hpp's verify_file_image checks a
//          read of it. Every READ request for it sleeps --latency-us first, and is counted.
//   stats  {"reads":N,"max_in_flight":M,"in_flight":K,"bytes":B,...}: READ requests of data since
//          the mount, the most in flight at once, those in flight now, bytes returned. Opened
//          with direct_io (no page cache: every read sees the counters of that moment); its own
//          reads are neither delayed nor counted.
//
// How the kernel's FUSE turns O_DIRECT reads into requests (Linux 6.x): an O_DIRECT open of data
// succeeds (FUSE files have direct_IO), and a pread goes to the daemon as one READ per
// max_pages-sized piece: the kernel's default is 32 pages (128 KiB), libfuse 3.14 asks for 1 MiB
// (a 4 MiB pread arrives as 4 READs). Reads of at most 128 KiB are one request each on any setup.
// With async direct I/O (libfuse's default) those READs are "background" requests, which the
// kernel caps at max_background (12 by default): init raises it to --threads; without that, 16
// psync readers were seen at most 12 at once here.
// The daemon answers them on --threads worker threads, all started with it.
//
// Exit status: 0 after an unmount or SIGTERM/SIGINT/SIGHUP (it unmounts itself), 1 on a failure
// after the mount, 3 bad usage, 4 the mount failed (no /dev/fuse, not permitted): a test skips on
// 4 and fails on anything else.
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>  // the session calls of the request loop
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "measure/pattern.hpp"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 3;
constexpr int kExitMountFailed = 4;

constexpr char kDataPath[] = "/data";
constexpr char kStatsPath[] = "/stats";
constexpr std::uint64_t kDataHandle = 1;
constexpr std::uint64_t kStatsHandle = 2;

struct Options {
  std::string mountpoint;
  std::uint64_t size = 64ull << 20;
  std::uint64_t latency_us = 5000;
  std::uint64_t seed = 0;
  unsigned threads = 64;
  bool exit_with_parent = false;
};

struct State {
  Options options;
  std::atomic<std::uint64_t> reads{0}, in_flight{0}, max_in_flight{0}, bytes{0};
};

constexpr char kUsage[] =
    "usage: latency_fuse --mount DIR [--size BYTES] [--latency-us US] [--seed SEED]\n"
    "                    [--threads N] [--exit-with-parent]\n"
    "Mounts on DIR, read-only, a file system with two files, and serves it in the foreground\n"
    "until unmounted or sent SIGTERM:\n"
    "  data   BYTES of pathbench's verification pattern of SEED (what a PatternFile holds);\n"
    "         every READ request for it sleeps US microseconds first, like a device with a\n"
    "         fixed access time\n"
    "  stats  {\"reads\":R,\"max_in_flight\":M,\"in_flight\":K,\"bytes\":B,...}: READ requests\n"
    "         of data since the mount and the most in flight at once (not delayed, not counted)\n"
    "Options:\n"
    "  --mount DIR          an existing directory to mount on (required)\n"
    "  --size BYTES         size of data; suffix K, M or G for KiB, MiB, GiB (default 64M)\n"
    "  --latency-us US      delay of every READ of data, microseconds (default 5000; 0: none)\n"
    "  --seed SEED          pattern seed (default 0)\n"
    "  --threads N          worker threads, and the kernel's max_background: the most reads\n"
    "                       that can be in flight at once (1..4096, default 64)\n"
    "  --exit-with-parent   unmount and exit when the process that started it goes\n"
    "  --help               this text\n"
    "Exit status: 0 unmounted or stopped by a signal, 1 failure, 3 bad usage, 4 mount failed.\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "latency_fuse: %s (--help: usage)\n", message.c_str());
  std::exit(kExitUsage);
}

std::uint64_t parse_number(std::string_view option, const char* text, bool size_suffix) {
  const std::string value = text;
  std::size_t digits = 0;
  while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9') ++digits;
  std::uint64_t shift = 0;
  const std::string_view suffix = std::string_view(value).substr(digits);
  if (size_suffix && suffix.size() == 1) {
    const char s = suffix[0];
    shift = s == 'K' || s == 'k' ? 10 : s == 'M' || s == 'm' ? 20 : s == 'G' || s == 'g' ? 30 : 64;
  } else if (!suffix.empty()) {
    shift = 64;
  }
  errno = 0;
  const unsigned long long n =
      digits > 0 ? std::strtoull(value.substr(0, digits).c_str(), nullptr, 10) : 0;
  if (digits == 0 || shift == 64 || errno == ERANGE || (shift > 0 && n > (~0ull >> shift))) {
    usage_error(std::string(option) + " wants a non-negative integer" +
                (size_suffix ? " (optionally with K, M or G)" : "") + ", not '" + value + "'");
  }
  return static_cast<std::uint64_t>(n) << shift;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage_error(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--mount") {
      o.mountpoint = value();
    } else if (arg == "--size") {
      o.size = parse_number(arg, value(), true);
    } else if (arg == "--latency-us") {
      o.latency_us = parse_number(arg, value(), false);
    } else if (arg == "--seed") {
      o.seed = parse_number(arg, value(), false);
    } else if (arg == "--threads") {
      const std::uint64_t n = parse_number(arg, value(), false);
      if (n < 1 || n > 4096) usage_error("--threads must be between 1 and 4096");
      o.threads = static_cast<unsigned>(n);
    } else if (arg == "--exit-with-parent") {
      o.exit_with_parent = true;
    } else {
      usage_error("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (o.mountpoint.empty()) usage_error("--mount DIR is required");
  struct stat st {};
  if (::stat(o.mountpoint.c_str(), &st) != 0) {
    usage_error("--mount " + o.mountpoint + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) usage_error("--mount " + o.mountpoint + " is not a directory");
  if (o.latency_us > 60'000'000) usage_error("--latency-us above a minute is surely a mistake");
  if (o.size > static_cast<std::uint64_t>(INT64_MAX)) usage_error("--size is too large");
  return o;
}

State& state() { return *static_cast<State*>(fuse_get_context()->private_data); }

std::string stats_json(const State& s) {
  std::string j = "{\"reads\":";
  j += std::to_string(s.reads.load());
  j += ",\"max_in_flight\":";
  j += std::to_string(s.max_in_flight.load());
  j += ",\"in_flight\":";
  j += std::to_string(s.in_flight.load());
  j += ",\"bytes\":";
  j += std::to_string(s.bytes.load());
  j += ",\"latency_us\":";
  j += std::to_string(s.options.latency_us);
  j += ",\"size\":";
  j += std::to_string(s.options.size);
  j += "}\n";
  return j;
}

// Counts a read of data for as long as the daemon holds it (its sleep included): max_in_flight is
// then the most requests the "device" held at once, not how many the kernel had queued.
class InFlight {
 public:
  explicit InFlight(State& s) : s_(s) {
    s_.reads.fetch_add(1);
    const std::uint64_t now = s_.in_flight.fetch_add(1) + 1;
    std::uint64_t seen = s_.max_in_flight.load();
    while (now > seen && !s_.max_in_flight.compare_exchange_weak(seen, now)) {
    }
  }
  ~InFlight() { s_.in_flight.fetch_sub(1); }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  State& s_;
};

void* fs_init(fuse_conn_info* conn, fuse_config* cfg) {
  State& s = state();
  // Nothing ever changes: no need to ask again for names or attributes.
  cfg->entry_timeout = cfg->attr_timeout = cfg->negative_timeout = 3600;
  conn->max_background = s.options.threads;  // see the top of the file
  return &s;
}

int fs_getattr(const char* path, struct stat* st, fuse_file_info*) {
  std::memset(st, 0, sizeof *st);
  st->st_uid = ::getuid();
  st->st_gid = ::getgid();
  if (std::strcmp(path, "/") == 0) {
    st->st_mode = S_IFDIR | 0555;
    st->st_nlink = 2;
  } else if (std::strcmp(path, kDataPath) == 0) {
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = static_cast<off_t>(state().options.size);
  } else if (std::strcmp(path, kStatsPath) == 0) {
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = static_cast<off_t>(stats_json(state()).size());
  } else {
    return -ENOENT;
  }
  st->st_blksize = 4096;
  st->st_blocks = (st->st_size + 511) / 512;
  return 0;
}

int fs_readdir(const char* path, void* buf, fuse_fill_dir_t filler, off_t, fuse_file_info*,
               fuse_readdir_flags) {
  if (std::strcmp(path, "/") != 0) return -ENOTDIR;
  for (const char* name : {".", "..", kDataPath + 1, kStatsPath + 1}) {
    filler(buf, name, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  }
  return 0;
}

int fs_open(const char* path, fuse_file_info* fi) {
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return -EROFS;
  if (std::strcmp(path, kDataPath) == 0) {
    fi->fh = kDataHandle;
    fi->keep_cache = 1;  // buffered readers may keep what they read: data never changes
  } else if (std::strcmp(path, kStatsPath) == 0) {
    fi->fh = kStatsHandle;
    fi->direct_io = 1;  // counters of this moment, never a cached page
  } else {
    return -ENOENT;
  }
  return 0;
}

int fs_read(const char*, char* buf, size_t size, off_t offset, fuse_file_info* fi) {
  State& s = state();
  if (offset < 0) return -EINVAL;
  const auto at = static_cast<std::uint64_t>(offset);
  if (fi->fh == kStatsHandle) {
    const std::string j = stats_json(s);
    if (at >= j.size()) return 0;
    const std::size_t n = std::min<std::uint64_t>(size, j.size() - at);
    std::memcpy(buf, j.data() + at, n);
    return static_cast<int>(n);
  }
  if (fi->fh != kDataHandle) return -EBADF;
  InFlight counted(s);
  if (s.options.latency_us > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(s.options.latency_us));
  }
  if (at >= s.options.size) return 0;
  const std::uint64_t n = std::min<std::uint64_t>(size, s.options.size - at);
  pathbench::fill_pattern({reinterpret_cast<std::byte*>(buf), n}, s.options.seed, at);
  s.bytes.fetch_add(n);
  return static_cast<int>(n);
}

// The request loop: --threads workers, all started before the first request. libfuse's own
// multithreaded loop starts a worker only when a request finds none idle; a queue of 16 reads
// arriving at once would then wait on thread starts (milliseconds on two loaded cores under the
// sanitizers), and fewer than 16 would be seen in flight at once. A device has its queue ready.
struct Workers {
  std::atomic<unsigned> running{0};
  std::atomic<int> error{0};  // the first errno a worker's read of /dev/fuse failed with
};

void work(fuse_session* session, Workers& workers) {
  fuse_buf buf{};
  while (!fuse_session_exited(session)) {
    const int res = fuse_session_receive_buf(session, &buf);
    if (res == -EINTR) continue;  // SIGUSR1: look at fuse_session_exited again
    if (res < 0) {
      int none = 0;
      workers.error.compare_exchange_strong(none, -res);
      fuse_session_exit(session);
    }
    if (res <= 0) break;  // 0: unmounted (libfuse has marked the session exited)
    fuse_session_process_buf(session, &buf);
  }
  std::free(buf.mem);
  workers.running.fetch_sub(1);
}

void on_wake(int) {}  // only there to make a worker's read of /dev/fuse return EINTR

// Serves until the file system is unmounted or a signal (fuse_set_signal_handlers) ends the
// session; false after a failure, said on stderr.
bool serve(fuse_session* session, unsigned threads) {
  struct sigaction wake {};
  wake.sa_handler = on_wake;  // no SA_RESTART: the read must return
  sigemptyset(&wake.sa_mask);
  if (::sigaction(SIGUSR1, &wake, nullptr) != 0) {
    std::fprintf(stderr, "latency_fuse: sigaction(SIGUSR1): %s\n", std::strerror(errno));
    return false;
  }
  // The stop signals go to the main thread alone: its sleep below is what they must cut short.
  sigset_t stop_signals, old_mask;
  sigemptyset(&stop_signals);
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop_signals, sig);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &old_mask);
  Workers workers;
  std::vector<std::thread> pool;
  bool ok = true;
  try {
    pool.reserve(threads);
    for (unsigned i = 0; i < threads; ++i) {
      workers.running.fetch_add(1);
      try {
        pool.emplace_back(work, session, std::ref(workers));
      } catch (...) {
        workers.running.fetch_sub(1);
        throw;
      }
    }
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "latency_fuse: could not start worker %zu of %u: %s\n", pool.size() + 1,
                 threads, e.what());
    fuse_session_exit(session);
    ok = false;
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  while (!fuse_session_exited(session)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Workers blocked in their read of /dev/fuse see the session's end only when woken; a signal
  // that lands just before a read blocks is lost, hence again until all are out (bounded).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (workers.running.load() > 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "latency_fuse: %u workers still busy 5 s after the stop; exiting\n",
                   workers.running.load());
      std::_Exit(kExitFailure);  // joining would hang; the dead mount stays until unmounted
    }
    for (std::thread& t : pool) pthread_kill(t.native_handle(), SIGUSR1);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (std::thread& t : pool) t.join();
  if (const int err = workers.error.load()) {
    std::fprintf(stderr, "latency_fuse: reading /dev/fuse failed: %s\n", std::strerror(err));
    ok = false;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  State s;
  s.options = parse_options(argc, argv);

  fuse_operations ops{};
  ops.init = fs_init;
  ops.getattr = fs_getattr;
  ops.readdir = fs_readdir;
  ops.open = fs_open;
  ops.read = fs_read;

  // Mount options: read-only, and a type (fuse.latency_fuse in /proc/self/mountinfo) by which a
  // test tells this mount from any other.
  char arg0[] = "latency_fuse", dash_o[] = "-o";
  char mount_options[] = "ro,fsname=latency_fuse,subtype=latency_fuse";
  char* fuse_argv[] = {arg0, dash_o, mount_options, nullptr};
  fuse_args args = FUSE_ARGS_INIT(3, fuse_argv);
  fuse* f = fuse_new(&args, &ops, sizeof ops, &s);
  fuse_opt_free_args(&args);  // parsing copied them; the mount options live on in f
  if (f == nullptr) {
    std::fprintf(stderr, "latency_fuse: fuse_new failed (see above)\n");
    return kExitFailure;
  }
  fuse_session* session = fuse_get_session(f);
  if (fuse_set_signal_handlers(session) != 0) {
    std::fprintf(stderr, "latency_fuse: could not install the signal handlers\n");
    fuse_destroy(f);
    return kExitFailure;
  }
  if (s.options.exit_with_parent) {
    // SIGTERM takes the path of a regular stop (unmount, then exit) when the test that started it
    // is killed (a ctest timeout) before it could stop it; the check after catches a parent that
    // went before the prctl.
    const pid_t parent = ::getppid();
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != parent) {
      std::fprintf(stderr, "latency_fuse: the parent process is gone; not mounting\n");
      fuse_remove_signal_handlers(session);
      fuse_destroy(f);
      return kExitFailure;
    }
  }
  if (fuse_mount(f, s.options.mountpoint.c_str()) != 0) {
    std::fprintf(stderr,
                 "latency_fuse: could not mount on %s (libfuse's reason above; needs /dev/fuse "
                 "and root or fusermount3)\n",
                 s.options.mountpoint.c_str());
    fuse_remove_signal_handlers(session);
    fuse_destroy(f);
    return kExitMountFailed;
  }
  const bool served = serve(session, s.options.threads);
  fuse_unmount(f);
  fuse_remove_signal_handlers(session);
  fuse_destroy(f);
  return served ? 0 : kExitFailure;
}
