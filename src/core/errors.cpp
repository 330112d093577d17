#include "core/errors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pathbench {

namespace {

// The length of the UTF-8 sequence starting at text[i] and its code point, or 0 when the bytes
// there are not one (a stray continuation byte, an overlong form, a surrogate, a cut sequence).
std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  std::size_t n = 0;
  char32_t cp = 0, min = 0;
  if (b0 < 0x80) {
    code_point = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  code_point = cp;
  return n;
}

void append_hex(std::string& out, const char* prefix, unsigned value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  for (int d = digits - 1; d >= 0; --d) out += kHex[(value >> (4 * d)) & 0xF];
}

// How many bytes of `text` make its first `chars` characters (UTF-8; a stray byte counts one).
std::size_t prefix_bytes(std::string_view text, std::size_t chars) {
  std::size_t i = 0;
  for (std::size_t c = 0; c < chars && i < text.size(); ++c) {
    char32_t cp = 0;
    const std::size_t n = utf8_sequence(text, i, cp);
    i += n == 0 ? 1 : n;
  }
  return i;
}

std::size_t char_count(std::string_view text) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++chars) {
    char32_t cp = 0;
    const std::size_t n = utf8_sequence(text, i, cp);
    i += n == 0 ? 1 : n;
  }
  return chars;
}

// The longest prefix of `text` of at most `max_bytes` bytes that does not cut a UTF-8 sequence.
std::size_t utf8_floor(std::string_view text, std::size_t max_bytes) {
  std::size_t i = 0;
  while (i < text.size()) {
    char32_t cp = 0;
    const std::size_t n = utf8_sequence(text, i, cp);
    const std::size_t step = n == 0 ? 1 : n;
    if (i + step > max_bytes) break;
    i += step;
  }
  return i;
}

// Appends `part`, or, when longer than kMaxEchoedChars characters, its first kMaxEchoedChars,
// "…", `closing` and how long it was; returns whether it was shortened.
bool append_shortened(std::string& out, std::string_view part, std::string_view closing) {
  if (part.size() <= kMaxEchoedChars || char_count(part) <= kMaxEchoedChars) {
    out.append(part);
    out.append(closing);
    return false;
  }
  out.append(part.substr(0, prefix_bytes(part, kMaxEchoedChars)));
  out += "\u2026";  // …
  out.append(closing);
  out += " (" + std::to_string(part.size()) + " bytes)";
  return true;
}

}  // namespace

std::string printable_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t n = utf8_sequence(text, i, cp);
    if (n == 0) {
      append_hex(out, "\\x", static_cast<unsigned char>(text[i]), 2);
      ++i;
      continue;
    }
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
      append_hex(out, "\\u", static_cast<unsigned>(cp), 4);
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string printable_lines(std::string_view text, const std::vector<std::string_view>& keep) {
  std::string out;
  out.reserve(text.size());
  std::size_t run = 0;  // start of the text not yet copied
  const auto flush = [&](std::size_t end) {
    out += printable_text(text.substr(run, end - run));
  };
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\n') {
      flush(i);
      out += '\n';
      run = ++i;
      continue;
    }
    if (text[i] == '\033') {
      bool kept = false;
      for (const auto k : keep) {
        if (text.substr(i).starts_with(k)) {
          flush(i);
          out.append(k);
          i += k.size();
          run = i;
          kept = true;
          break;
        }
      }
      if (kept) continue;
    }
    ++i;
  }
  flush(text.size());
  return out;
}

std::string shortened_text(std::string_view text) {
  // Each "quoted" part (a value the message echoes, as JSON or between plain quotes), shortened.
  std::string out;
  out.reserve(std::min(text.size(), kMaxMessageBytes + 64));
  std::size_t i = 0;
  while (i < text.size() && out.size() <= kMaxMessageBytes) {
    const std::size_t open = text.find('"', i);
    if (open == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, open + 1 - i));
    std::size_t close = open + 1;
    while (close < text.size() && text[close] != '"') close += text[close] == '\\' ? 2 : 1;
    if (close >= text.size()) {  // no closing quote: the rest is one part
      append_shortened(out, text.substr(open + 1), "");
      break;
    }
    append_shortened(out, text.substr(open + 1, close - open - 1), "\"");
    i = close + 1;
  }
  if (out.size() > kMaxMessageBytes) {
    out.resize(utf8_floor(out, kMaxMessageBytes));
    out += "\u2026 (message cut: " + std::to_string(text.size()) + " bytes)";
  }
  return out;
}

std::string printable_pointer(std::string_view pointer) {
  std::string out;
  std::size_t i = 0;
  while (i < pointer.size()) {
    std::size_t next = pointer.find('/', i + 1);
    if (next == std::string_view::npos) next = pointer.size();
    const std::string_view token = pointer.substr(i, next - i);  // with its leading '/'
    if (token.starts_with('/')) {
      out += '/';
      append_shortened(out, token.substr(1), "");
    } else {
      append_shortened(out, token, "");
    }
    i = next;
  }
  return printable_text(out);
}

SystemError::SystemError(const std::string& call, int err)
    : std::runtime_error(call + " failed: " + std::strerror(err)), errno_(err) {}

void throw_write_error(const std::string& call, int err) {
  if (err == ENOSPC || err == EDQUOT) throw DiskFull(call, err);
  throw SystemError(call, err);
}

}  // namespace pathbench
