#include <string>

#include <gtest/gtest.h>

#include "core/sha256.hpp"

namespace pathbench::test_sha256 {
namespace {

TEST(Sha256, EmptyString) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Abc) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, TwoBlockMessage448Bits) {
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, FourBlockMessage896Bits) {
  EXPECT_EQ(
      sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmno"
                 "pqklmnopqrlmnopqrsmnopqrstnopqrstu"),
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, OneMillionAInChunks) {
  Sha256 h;
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(chunk);
  EXPECT_EQ(h.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, ChunkingDoesNotMatter) {
  // Odd chunk sizes cross block boundaries at every offset, including the padding edge at 55/56.
  std::string message;
  for (int i = 0; i < 1000; ++i) message.push_back(static_cast<char>(i * 31 + 7));
  const std::string whole = sha256_hex(message);
  for (std::size_t chunk : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 127u}) {
    Sha256 h;
    for (std::size_t pos = 0; pos < message.size(); pos += chunk) {
      h.update(std::string_view(message).substr(pos, chunk));
    }
    EXPECT_EQ(h.hex_digest(), whole) << "chunk size " << chunk;
  }
}

TEST(Sha256, PaddingBoundaries) {
  // Lengths 55, 56 and 64 need one, two and two padding blocks (digests from coreutils sha256sum).
  EXPECT_EQ(sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256, DigestResetsForTheNextMessage) {
  Sha256 h;
  h.update("abc");
  const auto first = h.hex_digest();
  h.update("abc");
  EXPECT_EQ(h.hex_digest(), first);
}

TEST(Sha256, BinaryDigest) {
  Sha256 h;
  h.update("abc");
  const auto d = h.digest();
  EXPECT_EQ(d[0], 0xba);
  EXPECT_EQ(d[31], 0xad);
}

}  // namespace
}  // namespace pathbench::test_sha256
