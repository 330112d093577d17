#pragma once

// A helper process that a case starts and talks to over an IpcChannel: spawned with an argument
// vector (no shell) in its own process group, the child's end of the socket pair as descriptor
// kIpcChildFd, "--fd 3" appended to its arguments. Whatever goes wrong with the child is a
// CaseFailure whose reason says what: it exited (status), it was killed (signal), it did not
// answer in time (it is killed), or it broke the protocol (garbage, oversized, unexpected
// message). The destructor asks the child to exit, waits a bounded time, then kills its group and
// reaps it: no child outlives its owner, none is left a zombie.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/ipc_channel.hpp"

namespace pathbench {

inline constexpr int kIpcChildFd = 3;

struct IpcChildOptions {
  std::chrono::milliseconds hello_timeout{10'000};  // start-up to the child's hello
  std::chrono::milliseconds reply_timeout{60'000};  // one command to its reply
  std::chrono::milliseconds exit_timeout{3'000};    // "exit" to the child's end, then SIGKILL
};

class IpcChild {
 public:
  // Starts argv (argv[0] an executable path, not looked up on PATH) and waits for its hello.
  IpcChild(std::vector<std::string> argv, IpcChildOptions options = {});
  IpcChild(const IpcChild&) = delete;
  IpcChild& operator=(const IpcChild&) = delete;
  ~IpcChild();

  // Sends a message (an attachment, a command). A child that is gone is a CaseFailure.
  void send(IpcMessageType type, const std::string& payload, int fd = -1);
  // Sends a command and waits for its kResult; returns the result's payload. The child's kError
  // reply is a CaseFailure with its text.
  std::string request(const std::string& command);
  // Tells the child to exit and reaps it; true when it exited with status 0 in time.
  bool stop();

  pid_t pid() const { return pid_; }
  const std::string& hello() const { return hello_; }

 private:
  // Turns a channel error into a CaseFailure that says what happened to the child (reaping it
  // when it has ended or killing it when it hangs). `doing`: what the parent was doing.
  [[noreturn]] void fail(const IpcError& e, const std::string& doing);
  // The child's end as words ("exited with status 3"), after waiting up to `wait` for it; empty
  // when it is still running.
  std::string reap(std::chrono::milliseconds wait);
  void kill_and_reap();

  std::string program_;
  IpcChildOptions options_;
  IpcChannel channel_;
  pid_t pid_ = -1;
  std::string hello_;
};

// "exited with status 3", "was killed by signal 11 (Segmentation fault)".
std::string describe_wait_status(int status);

}  // namespace pathbench
