#include "core/ipc_channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/errors.hpp"

namespace pathbench {

namespace {

constexpr char kMagic0 = 'P', kMagic1 = 'B';

bool known_type(std::uint8_t t) {
  return t >= static_cast<std::uint8_t>(IpcMessageType::kHello) &&
         t <= static_cast<std::uint8_t>(IpcMessageType::kError);
}

std::string ms_text(std::chrono::milliseconds t) {
  const auto ms = t.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

// Waits for `events` on `fd` until `timeout`; returns the revents (0: timed out).
short wait_for(int fd, short events, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::max<long long>(left.count(), 0)));
    if (rc > 0) return p.revents;
    if (rc == 0) return 0;
    if (errno != EINTR) throw IpcError(IpcError::Kind::kSystem, SystemError("poll", errno).what());
  }
}

}  // namespace

std::string_view to_string(IpcMessageType t) {
  switch (t) {
    case IpcMessageType::kHello:
      return "hello";
    case IpcMessageType::kIpcHandle:
      return "ipc_handle";
    case IpcMessageType::kDescriptor:
      return "descriptor";
    case IpcMessageType::kCommand:
      return "command";
    case IpcMessageType::kResult:
      return "result";
    case IpcMessageType::kError:
      return "error";
  }
  return "unknown";
}

std::string ipc_header(IpcMessageType type, std::uint32_t payload_bytes, std::uint8_t version) {
  std::string h(kIpcHeaderBytes, '\0');
  h[0] = kMagic0;
  h[1] = kMagic1;
  h[2] = static_cast<char>(version);
  h[3] = static_cast<char>(type);
  for (int i = 0; i < 4; ++i) h[4 + i] = static_cast<char>((payload_bytes >> (8 * i)) & 0xff);
  return h;
}

std::pair<IpcChannel, IpcChannel> IpcChannel::make_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    throw SystemError("socketpair(AF_UNIX, SOCK_SEQPACKET)", errno);
  }
  return {IpcChannel(UniqueFd(fds[0])), IpcChannel(UniqueFd(fds[1]))};
}

void IpcChannel::send(IpcMessageType type, std::string_view payload, int fd,
                      std::chrono::milliseconds timeout) {
  if (payload.size() > kMaxIpcPayload) {
    throw IpcError(IpcError::Kind::kOversized,
                   std::string(to_string(type)) + " message of " + std::to_string(payload.size()) +
                       " bytes exceeds the protocol's " + std::to_string(kMaxIpcPayload));
  }
  const std::string header = ipc_header(type, static_cast<std::uint32_t>(payload.size()));
  std::array<iovec, 2> iov{iovec{const_cast<char*>(header.data()), header.size()},
                           iovec{const_cast<char*>(payload.data()), payload.size()}};
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = payload.empty() ? 1 : 2;
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> control{};
  if (fd >= 0) {
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  const short ready = wait_for(socket_.get(), POLLOUT, timeout);
  if (ready == 0) {
    throw IpcError(IpcError::Kind::kTimeout, "the peer did not take a " +
                                                 std::string(to_string(type)) + " message within " +
                                                 ms_text(timeout));
  }
  for (;;) {
    if (::sendmsg(socket_.get(), &msg, MSG_NOSIGNAL) >= 0) return;
    if (errno == EINTR) continue;
    if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN) {
      throw IpcError(IpcError::Kind::kEof,
                     "the peer closed the channel (sending " + std::string(to_string(type)) + ")");
    }
    throw IpcError(IpcError::Kind::kSystem, SystemError("sendmsg", errno).what());
  }
}

IpcMessage IpcChannel::receive(std::chrono::milliseconds timeout) {
  const short ready = wait_for(socket_.get(), POLLIN, timeout);
  if (ready == 0) {
    throw IpcError(IpcError::Kind::kTimeout, "no message within " + ms_text(timeout));
  }
  // One byte more than the largest record, so that MSG_TRUNC (or the length) shows an oversized
  // one.
  std::vector<char> buffer(kIpcHeaderBytes + kMaxIpcPayload + 1);
  iovec iov{buffer.data(), buffer.size()};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(4 * sizeof(int))> control{};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  ssize_t n;
  do {
    n = ::recvmsg(socket_.get(), &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == ECONNRESET) throw IpcError(IpcError::Kind::kEof, "the peer closed the channel");
    throw IpcError(IpcError::Kind::kSystem, SystemError("recvmsg", errno).what());
  }
  // Descriptors first: every one received is owned (and closed) whatever else is wrong.
  IpcMessage m;
  int attached = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      UniqueFd owned(fd);
      if (++attached == 1) m.fd = std::move(owned);
    }
  }
  if (n == 0) throw IpcError(IpcError::Kind::kEof, "the peer closed the channel");
  if ((msg.msg_flags & MSG_TRUNC) ||
      static_cast<std::size_t>(n) > kIpcHeaderBytes + kMaxIpcPayload) {
    throw IpcError(IpcError::Kind::kOversized, "a record larger than the protocol's " +
                                                   std::to_string(kMaxIpcPayload) +
                                                   "-byte payload limit arrived");
  }
  if (attached > 1 || (msg.msg_flags & MSG_CTRUNC)) {
    throw IpcError(IpcError::Kind::kGarbage, "a message carried more than one file descriptor");
  }
  const auto size = static_cast<std::size_t>(n);
  if (size < kIpcHeaderBytes) {
    throw IpcError(IpcError::Kind::kGarbage, "a record of " + std::to_string(size) +
                                                 " bytes is shorter than the 8-byte header");
  }
  if (buffer[0] != kMagic0 || buffer[1] != kMagic1) {
    throw IpcError(IpcError::Kind::kGarbage, "a record does not start with the protocol's magic");
  }
  const auto version = static_cast<std::uint8_t>(buffer[2]);
  if (version != kIpcProtocolVersion) {
    throw IpcError(IpcError::Kind::kGarbage, "protocol version " + std::to_string(version) +
                                                 ", expected " +
                                                 std::to_string(kIpcProtocolVersion));
  }
  const auto type = static_cast<std::uint8_t>(buffer[3]);
  if (!known_type(type)) {
    throw IpcError(IpcError::Kind::kGarbage, "unknown message type " + std::to_string(type));
  }
  std::uint32_t length = 0;
  for (int i = 0; i < 4; ++i) {
    length |= static_cast<std::uint32_t>(static_cast<unsigned char>(buffer[4 + i])) << (8 * i);
  }
  if (length > kMaxIpcPayload) {
    throw IpcError(IpcError::Kind::kOversized, "a message declares " + std::to_string(length) +
                                                   " payload bytes, beyond the " +
                                                   std::to_string(kMaxIpcPayload) + "-byte limit");
  }
  if (length != size - kIpcHeaderBytes) {
    throw IpcError(IpcError::Kind::kGarbage, "a message declares " + std::to_string(length) +
                                                 " payload bytes but carries " +
                                                 std::to_string(size - kIpcHeaderBytes));
  }
  m.type = static_cast<IpcMessageType>(type);
  m.payload.assign(buffer.data() + kIpcHeaderBytes, length);
  if (m.type == IpcMessageType::kIpcHandle && m.payload.size() != kCudaIpcHandleBytes) {
    throw IpcError(IpcError::Kind::kGarbage, "an ipc_handle message of " +
                                                 std::to_string(m.payload.size()) +
                                                 " bytes (a CUDA IPC handle has 64)");
  }
  if (m.type == IpcMessageType::kDescriptor && !m.fd) {
    throw IpcError(IpcError::Kind::kGarbage, "a descriptor message without a file descriptor");
  }
  return m;
}

IpcMessage IpcChannel::expect(IpcMessageType type, std::chrono::milliseconds timeout) {
  IpcMessage m = receive(timeout);
  if (m.type == type) return m;
  if (m.type == IpcMessageType::kError) {
    throw IpcError(IpcError::Kind::kUnexpected, "the peer reported: " + m.payload);
  }
  throw IpcError(IpcError::Kind::kUnexpected, "expected a " + std::string(to_string(type)) +
                                                  " message, got " +
                                                  std::string(to_string(m.type)));
}

}  // namespace pathbench
