#include "result/run_record.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/json_reader.hpp"
#include "core/units.hpp"
#include "core/text.hpp"

namespace pathbench {

namespace {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr const char* kJournalFormat = "pathbench.journal/v1";

// A save costs at most about 1/20 of the run's time, and happens at least every few seconds
// while cases finish: the result file lags the journal by little, and a sweep stays linear.
constexpr auto kMinSaveInterval = std::chrono::seconds(2);
constexpr int kSaveCostShare = 20;

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// One line of a journal, read as strictly as every JSON input (core/json_reader.hpp: a repeated
// key, too deep a nesting); discarded when it is not valid.
ojson journal_json(std::string_view line) {
  try {
    return parse_json_text(line, "journal");
  } catch (const InputError&) {
    return ojson(ojson::value_t::discarded);
  }
}

// The first line of a journal: which run wrote it.
ojson journal_header(int fd) {
  char buf[4096];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  if (n <= 0) return nullptr;
  const std::string_view text(buf, static_cast<std::size_t>(n));
  const auto end = text.find('\n');
  if (end == std::string_view::npos) return nullptr;
  return journal_json(text.substr(0, end));
}

void write_all(int fd, std::string_view data, const fs::path& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_write_error("write(" + path.string() + ")", errno);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

fs::path journal_path(const fs::path& result_path) {
  // Absolute first: weakly_canonical leaves a bare relative name ("out.json") without a folder.
  std::error_code ec;
  fs::path target = fs::weakly_canonical(fs::absolute(result_path, ec), ec);
  if (ec) target = fs::absolute(result_path);
  return target.parent_path() / concat(".", target.filename().string(), ".journal");
}

RunRecord::RunRecord(fs::path out, Result header)
    : out_(std::move(out)), journal_(journal_path(out_)), result_(std::move(header)) {
  const auto refuse = [&](const std::string& what) { throw InputError(out_.string(), "", what); };
  // Before anything is created beside it: an output that can never be written (a device, a FIFO,
  // a symbolic link loop) is refused with nothing left behind.
  try {
    check_output_target(out_);
  } catch (const std::exception& e) {
    refuse(std::string("cannot write the result: ") + e.what());
  }
  std::error_code ec;
  fs::create_directories(journal_.parent_path(), ec);
  if (ec) refuse("cannot write the result: cannot create its folder: " + ec.message());
  journal_fd_ = ::open(journal_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (journal_fd_ < 0) {
    const int err = errno;
    if (err == ENOSPC || err == EDQUOT) throw_write_error("open(" + journal_.string() + ")", err);
    refuse("cannot write the result: cannot create the run's journal " + journal_.string() + ": " +
           std::strerror(err));
  }
  struct stat st {};
  if (::fstat(journal_fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(journal_fd_);
    journal_fd_ = -1;
    refuse(journal_.string() + " (the run's journal) exists and is not a regular file");
  }
  if (::flock(journal_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const ojson holder = journal_header(journal_fd_);
    ::close(journal_fd_);
    journal_fd_ = -1;
    if (err != EWOULDBLOCK) refuse("cannot lock " + journal_.string() + ": " + std::strerror(err));
    std::string who = "another pathbench run";
    if (holder.is_object() && holder.value("pid", ojson()).is_number_integer()) {
      who += " (PID " + std::to_string(holder["pid"].get<long long>());
      if (const auto h = holder.value("host", ojson()); h.is_string()) {
        who += " on " + h.get<std::string>();
      }
      who += ")";
    }
    refuse(who + " is writing this result; wait for it to end or choose another --out");
  }
  result_.complete = false;
  result_.incomplete_reason.clear();
  // A journal this run created goes again when the run cannot start; a killed run's stays until
  // this run's first save holds (or replaces) its cases.
  const bool created = st.st_size == 0;
  const auto give_up = [&] {
    if (created) ::unlink(journal_.c_str());
    ::close(journal_fd_);
    journal_fd_ = -1;
  };
  try {
    remove_stale_temporary_files(out_);
    save();  // fails early, before any measurement, when the output cannot be written
  } catch (const DiskFull&) {
    give_up();
    throw;
  } catch (const std::exception& e) {
    give_up();
    refuse(std::string("cannot write the result: ") + e.what());
  }
  try {
    if (::ftruncate(journal_fd_, 0) != 0) {
      throw_write_error("ftruncate(" + journal_.string() + ")", errno);
    }
    ojson head = ojson::object();
    head["journal"] = kJournalFormat;
    head["result"] = out_.filename().string();
    head["start_time"] = result_.start_time;
    head["pid"] = static_cast<long long>(::getpid());
    head["host"] = host_name();
    append_to_journal(head.dump(-1, ' ', false, ojson::error_handler_t::replace) + "\n");
  } catch (...) {
    ::unlink(journal_.c_str());  // the saved result holds every case there is so far
    ::close(journal_fd_);
    journal_fd_ = -1;
    throw;
  }
}

RunRecord::~RunRecord() {
  if (journal_fd_ >= 0) ::close(journal_fd_);  // releases the lock
}

void RunRecord::append_to_journal(const std::string& line) {
  // O_APPEND is not set (the lock's descriptor also truncates); seek to the end each time.
  if (::lseek(journal_fd_, 0, SEEK_END) < 0)
    throw SystemError("lseek(" + journal_.string() + ")", errno);
  write_all(journal_fd_, line, journal_);
}

void RunRecord::save() {
  const auto t0 = std::chrono::steady_clock::now();
  save_result(out_, result_);
  last_save_ = std::chrono::steady_clock::now();
  last_save_cost_ = last_save_ - t0;
}

void RunRecord::add(CaseResult c) {
  // One write of one line: a kill leaves at most a last line cut short, which readers ignore.
  append_to_journal(to_json(c).dump(-1, ' ', false, ojson::error_handler_t::replace) + "\n");
  result_.cases.push_back(std::move(c));
  const auto since = std::chrono::steady_clock::now() - last_save_;
  if (since >= std::max<std::chrono::steady_clock::duration>(kMinSaveInterval,
                                                             kSaveCostShare * last_save_cost_)) {
    save();
  }
}

void RunRecord::finish(bool complete, const std::string& incomplete_reason) {
  result_.complete = complete;
  result_.incomplete_reason = complete ? std::string() : incomplete_reason;
  result_.end_time = iso8601_utc_now();
  save();
  ::unlink(journal_.c_str());
  finished_ = true;
}

void for_each_journal_case(const Result& header, const fs::path& result_path,
                           const std::function<void(CaseResult&&)>& on_case) {
  if (header.complete) return;
  const fs::path journal = journal_path(result_path);
  // Every refusal names the journal and the result it belongs to, and says how to go on.
  const std::string label = concat(journal.string(), " (the journal of ", result_path.string(), ")");
  const auto refuse = [&](const std::string& what) {
    throw InputError(label, "",
                     what + "; move the journal away to read the result without the cases it "
                            "holds");
  };
  int raw_fd = -1;
  try {
    raw_fd = open_regular_file(journal);
  } catch (const SystemError& e) {
    if (e.error_number() == ENOENT) return;  // no journal: the usual case
    refuse(std::string("cannot read: ") + std::strerror(e.error_number()));
  } catch (const std::exception& e) {
    refuse(std::string("cannot read: ") + e.what());  // a FIFO, a device, a directory
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{raw_fd};

  // Line by line, never the whole file: a line may hold at most kMaxJournalLineBytes, and the
  // journal is read in chunks, so a journal of any size costs one line of memory.
  std::size_t line_number = 0;
  const auto line_label = [&] { return concat(label, " line ", std::to_string(line_number)); };
  // False: another run's journal (nothing of it belongs to this result).
  const auto take = [&](std::string_view line) -> bool {
    const ojson j = parse_json_text(line, line_label());
    if (line_number == 1) {
      if (!j.is_object() || !j.contains("journal") || j["journal"] != kJournalFormat) {
        throw InputError(line_label(), "",
                         concat("not a journal header (expected {\"journal\": \"", kJournalFormat,
                                "\", ...})"));
      }
      return j.value("start_time", "") == header.start_time;
    }
    on_case(case_result_from_json(j, line_label(), ""));
    return true;
  };
  std::string line;
  std::vector<char> buffer(std::size_t{1} << 20);
  for (;;) {
    const ssize_t n = ::read(raw_fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      refuse(std::string("cannot read: ") + std::strerror(errno));
    }
    if (n == 0) break;
    std::string_view chunk(buffer.data(), static_cast<std::size_t>(n));
    while (!chunk.empty()) {
      const auto end = chunk.find('\n');
      const std::string_view part = chunk.substr(0, end);
      if (line.size() + part.size() > kMaxJournalLineBytes) {
        line_number += 1;
        throw InputError(line_label(), "",
                         concat("longer than ", std::to_string(kMaxJournalLineBytes),
                                " bytes, the most one journal line may hold (pathbench writes one "
                                "case per line); move the journal away to read the result "
                                "without the cases it holds"));
      }
      line.append(part);
      if (end == std::string_view::npos) break;
      chunk.remove_prefix(end + 1);
      ++line_number;
      if (!take(line)) return;
      line.clear();
    }
  }
  // What is left without its newline is the last line cut short by a kill: ignored. (Only whole
  // lines were ever reported finished.)
}

std::size_t fold_journal(Result& r, const fs::path& result_path) {
  std::unordered_set<std::string> ids;
  for (const auto& c : r.cases) ids.insert(c.id);
  std::size_t added = 0;
  for_each_journal_case(r, result_path, [&](CaseResult&& c) {
    if (!ids.insert(c.id).second) return;
    r.cases.push_back(std::move(c));
    ++added;
  });
  return added;
}

}  // namespace pathbench
