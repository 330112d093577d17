// The ipc protocol (src/core/ipc_channel.hpp) over a real socket pair: every message type round
// trips (a descriptor really arrives), and EOF, junk, oversized records, wrong types and silence
// are IpcErrors of the right kind, within the timeout.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "core/ipc_channel.hpp"

namespace pathbench::test_ipc_channel {
namespace {

using namespace std::chrono_literals;
using Kind = IpcError::Kind;

// The error kind a receive on `ch` throws (and its text in `what`).
Kind receive_error(IpcChannel& ch, std::string& what, std::chrono::milliseconds t = 200ms) {
  try {
    ch.receive(t);
  } catch (const IpcError& e) {
    what = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "receive did not throw";
  return Kind::kSystem;
}

void send_raw(IpcChannel& ch, const std::string& bytes) {
  ASSERT_EQ(::send(ch.fd(), bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
}

TEST(IpcChannel, EveryMessageTypeRoundTrips) {
  auto [a, b] = IpcChannel::make_pair();
  const std::string handle(kCudaIpcHandleBytes, '\x5a');
  const std::pair<IpcMessageType, std::string> messages[] = {
      {IpcMessageType::kHello, R"({"protocol":1})"},
      {IpcMessageType::kIpcHandle, handle},
      {IpcMessageType::kCommand, R"({"op":"sample","accesses":4})"},
      {IpcMessageType::kResult, R"({"bandwidth":1.5})"},
      {IpcMessageType::kError, "it broke"},
      {IpcMessageType::kCommand, ""},
      {IpcMessageType::kResult, std::string(kMaxIpcPayload, 'x')},
  };
  for (const auto& [type, payload] : messages) {
    a.send(type, payload);
    const IpcMessage m = b.receive(1000ms);
    EXPECT_EQ(m.type, type) << to_string(type);
    EXPECT_EQ(m.payload, payload) << to_string(type);
    EXPECT_FALSE(m.fd) << to_string(type);
  }
}

TEST(IpcChannel, ADescriptorArrivesAsItsOwnWorkingFd) {
  auto [a, b] = IpcChannel::make_pair();
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  UniqueFd read_end(p[0]), write_end(p[1]);
  a.send(IpcMessageType::kDescriptor, R"({"kind":"pipe"})", write_end.get());
  write_end.reset();  // the receiver's copy must keep the pipe open
  IpcMessage m = b.receive(1000ms);
  ASSERT_EQ(m.type, IpcMessageType::kDescriptor);
  EXPECT_EQ(m.payload, R"({"kind":"pipe"})");
  ASSERT_TRUE(m.fd);
  ASSERT_EQ(::write(m.fd.get(), "hi", 2), 2);
  m.fd.reset();  // the last write end: the reader sees the bytes, then EOF
  char buf[4] = {};
  EXPECT_EQ(::read(read_end.get(), buf, sizeof(buf)), 2);
  EXPECT_EQ(std::string(buf, 2), "hi");
  EXPECT_EQ(::read(read_end.get(), buf, sizeof(buf)), 0);
}

TEST(IpcChannel, SilenceIsATimeoutWithinTheDeadline) {
  auto [a, b] = IpcChannel::make_pair();
  std::string what;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(receive_error(b, what, 100ms), Kind::kTimeout);
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, 90ms);
  EXPECT_LT(waited, 2s);
  EXPECT_NE(what.find("100 ms"), std::string::npos) << what;
}

TEST(IpcChannel, APeerThatClosedIsEofOnBothReceiveAndSend) {
  auto [a, b] = IpcChannel::make_pair();
  a.release_socket().reset();
  std::string what;
  EXPECT_EQ(receive_error(b, what), Kind::kEof);
  try {
    b.send(IpcMessageType::kCommand, "{}");
    ADD_FAILURE() << "send to a closed peer did not throw";
  } catch (const IpcError& e) {
    EXPECT_EQ(e.kind(), Kind::kEof) << e.what();
  }
}

TEST(IpcChannel, JunkIsGarbageNamingWhatIsWrong) {
  struct Junk {
    std::string bytes, says;
  };
  const Junk junks[] = {
      {"hello world, not a message", "magic"},
      {"PB", "shorter than the 8-byte header"},
      {ipc_header(IpcMessageType::kResult, 2, 9) + "{}", "protocol version 9"},
      {std::string("PB\x01\x63", 4) + std::string(4, '\0'), "unknown message type 99"},
      {ipc_header(IpcMessageType::kResult, 10) + "{}", "declares 10 payload bytes but carries 2"},
      {ipc_header(IpcMessageType::kIpcHandle, 3) + "abc", "64"},
  };
  for (const auto& junk : junks) {
    auto [a, b] = IpcChannel::make_pair();
    send_raw(a, junk.bytes);
    std::string what;
    EXPECT_EQ(receive_error(b, what), Kind::kGarbage) << what;
    EXPECT_NE(what.find(junk.says), std::string::npos) << what;
  }
}

TEST(IpcChannel, ADescriptorMessageWithoutADescriptorIsGarbage) {
  auto [a, b] = IpcChannel::make_pair();
  a.send(IpcMessageType::kDescriptor, "{}");
  std::string what;
  EXPECT_EQ(receive_error(b, what), Kind::kGarbage);
  EXPECT_NE(what.find("without a file descriptor"), std::string::npos) << what;
}

TEST(IpcChannel, OversizedRecordsAndDeclaredLengthsAreRefused) {
  {
    auto [a, b] = IpcChannel::make_pair();
    send_raw(a, ipc_header(IpcMessageType::kResult, 1u << 30));
    std::string what;
    EXPECT_EQ(receive_error(b, what), Kind::kOversized);
    EXPECT_NE(what.find("1073741824"), std::string::npos) << what;
  }
  {
    auto [a, b] = IpcChannel::make_pair();
    send_raw(a, ipc_header(IpcMessageType::kResult, kMaxIpcPayload + 1) +
                    std::string(kMaxIpcPayload + 1, 'x'));
    std::string what;
    EXPECT_EQ(receive_error(b, what), Kind::kOversized) << what;
  }
  {
    auto [a, b] = IpcChannel::make_pair();
    try {
      a.send(IpcMessageType::kResult, std::string(kMaxIpcPayload + 1, 'x'));
      ADD_FAILURE() << "an oversized send was not refused";
    } catch (const IpcError& e) {
      EXPECT_EQ(e.kind(), Kind::kOversized);
    }
  }
}

TEST(IpcChannel, ExpectRefusesAnotherTypeAndCarriesThePeersError) {
  auto [a, b] = IpcChannel::make_pair();
  a.send(IpcMessageType::kResult, "{}");
  try {
    b.expect(IpcMessageType::kHello, 500ms);
    ADD_FAILURE() << "expect accepted a result for a hello";
  } catch (const IpcError& e) {
    EXPECT_EQ(e.kind(), Kind::kUnexpected);
    EXPECT_NE(std::string(e.what()).find("expected a hello message, got result"), std::string::npos)
        << e.what();
  }
  a.send(IpcMessageType::kError, "no device");
  try {
    b.expect(IpcMessageType::kResult, 500ms);
    ADD_FAILURE() << "expect accepted an error for a result";
  } catch (const IpcError& e) {
    EXPECT_EQ(e.kind(), Kind::kUnexpected);
    EXPECT_NE(std::string(e.what()).find("no device"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pathbench::test_ipc_channel
