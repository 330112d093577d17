#pragma once

// A parent and the child it started talk over one AF_UNIX SOCK_SEQPACKET socket pair: every
// message is one record (the kernel keeps the boundaries), made of an 8-byte header (magic "PB",
// protocol version, type, payload length) and at most kMaxIpcPayload bytes of payload, with at
// most one file descriptor attached (SCM_RIGHTS). Every receive waits with a deadline (poll), so
// a peer that hangs, dies, or writes junk is an IpcError naming what went wrong, never a hang.
// Host only: no CUDA here, so the protocol is unit-tested on any machine.

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "core/unique_fd.hpp"

namespace pathbench {

inline constexpr std::uint8_t kIpcProtocolVersion = 1;
inline constexpr std::size_t kIpcHeaderBytes = 8;
inline constexpr std::size_t kMaxIpcPayload = 64 * 1024;  // JSON results stay far below
inline constexpr std::size_t kCudaIpcHandleBytes = 64;    // sizeof(cudaIpcMemHandle_t)

enum class IpcMessageType : std::uint8_t {
  kHello = 1,       // JSON {"protocol":1,"pid":N}: the child is up (first message it sends)
  kIpcHandle = 2,   // exactly 64 bytes: a cudaIpcMemHandle_t
  kDescriptor = 3,  // JSON saying what the attached fd is (VMM export, shared memory)
  kCommand = 4,     // JSON {"op": ...}: setup, sample, exit
  kResult = 5,      // JSON: what a command measured
  kError = 6,       // text: why the peer could not do what it was asked
};
std::string_view to_string(IpcMessageType t);

struct IpcMessage {
  IpcMessageType type = IpcMessageType::kError;
  std::string payload;
  UniqueFd fd;  // the attached descriptor, if any
};

class IpcError : public std::runtime_error {
 public:
  enum class Kind {
    kEof,         // the peer closed its end (exited, crashed)
    kTimeout,     // nothing arrived before the deadline
    kGarbage,     // a record that is not a message of this protocol
    kOversized,   // a record or a declared length beyond kMaxIpcPayload
    kUnexpected,  // a valid message of another type than the one expected
    kSystem,      // a socket call failed
  };
  IpcError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

class IpcChannel {
 public:
  IpcChannel() = default;
  explicit IpcChannel(UniqueFd socket) : socket_(std::move(socket)) {}
  // Both ends, close-on-exec (the launcher hands one end to the child explicitly).
  static std::pair<IpcChannel, IpcChannel> make_pair();

  // One message; `fd` >= 0 is attached (the receiver gets its own descriptor; ours stays open).
  // A peer that is gone is IpcError kEof (SIGPIPE is never raised: MSG_NOSIGNAL). A full socket
  // buffer waits at most `timeout`.
  void send(IpcMessageType type, std::string_view payload, int fd = -1,
            std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  // The next message, waiting at most `timeout`.
  IpcMessage receive(std::chrono::milliseconds timeout);
  // The next message, which must be of `type` (a kError from the peer is IpcError kUnexpected
  // carrying the peer's text).
  IpcMessage expect(IpcMessageType type, std::chrono::milliseconds timeout);

  int fd() const { return socket_.get(); }
  UniqueFd release_socket() { return std::move(socket_); }

 private:
  UniqueFd socket_;
};

// The header bytes of a message of `type` carrying `payload_bytes` (for tests that forge records).
std::string ipc_header(IpcMessageType type, std::uint32_t payload_bytes,
                       std::uint8_t version = kIpcProtocolVersion);

}  // namespace pathbench
