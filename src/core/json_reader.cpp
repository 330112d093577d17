#include "core/json_reader.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/json_text.hpp"

namespace pathbench {

namespace {

using ojson = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// Input: bytes in chunks, behind an input iterator that nlohmann's iterator adapter reads one
// character at a time. The iterator is a handle on the shared source; the end iterator has none.
//
// The source also guards the lexer against two quirks of nlohmann's (3.11):
//   - it takes a NUL byte for the end of the input (for C strings), so "{...}\0garbage" would read
//     as "{...}": a raw NUL is never part of JSON text (inside a string it must be escaped), so the
//     source refuses it wherever it is, naming its byte offset;
//   - it keeps every character it reads since the last string or number in a buffer (for error
//     messages), white space included, so a file padded with a GB of spaces cost a GB of memory:
//     outside strings the source hands the lexer one character of a run of white space and skips
//     the rest (counted in skipped(), so that positions in messages stay byte offsets).

class ByteSource {
 public:
  explicit ByteSource(std::string file) : file_(std::move(file)) {}
  virtual ~ByteSource() = default;
  // Bytes of the input before the current character: what the parser has consumed.
  std::uint64_t consumed() const { return base_ + pos_; }
  // White space never handed to the lexer: its positions plus this are byte offsets.
  std::uint64_t skipped() const { return skipped_; }

  bool at_end() {
    if (pos_ < len_) return false;
    return !next_chunk();
  }
  char current() const { return data_[pos_]; }
  void advance() {
    const char c = data_[pos_++];
    if (in_string_) {
      // A raw NUL in a string is refused by the lexer itself (control characters must be
      // escaped), with its own message.
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      return;
    }
    switch (c) {
      case '"':
        in_string_ = true;
        break;
      case '\0':
        throw InputError(file_, "",
                         "not valid JSON (byte " + std::to_string(consumed() - 1) +
                             "): a NUL byte; JSON text never holds one (nlohmann would read it as "
                             "the end of the document and ignore the rest)");
      case ' ':
      case '\t':
      case '\n':
      case '\r':
        skip_white_space();
        break;
      default:
        break;
    }
  }

 protected:
  // Makes the next chunk current (data_, len_); false at the end of the input.
  virtual bool refill() { return false; }
  const char* data_ = nullptr;
  std::size_t pos_ = 0, len_ = 0;
  std::uint64_t base_ = 0;  // bytes before the current chunk
  std::string file_;

 private:
  bool next_chunk() {
    base_ += len_;
    pos_ = 0;
    len_ = 0;
    return refill();
  }
  static bool white(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  // After a white-space character outside a string: the rest of its run, across chunks. A run
  // longer than kMaxJsonWhiteSpaceRun is refused: no pathbench document holds one, and a file
  // padded with a GB of spaces is then refused at once instead of read to its end.
  void skip_white_space() {
    const std::uint64_t run_start = consumed() - 1;
    for (;;) {
      const std::size_t from = pos_;
      // Eight spaces at a time (padding is spaces), then byte by byte.
      std::uint64_t word = 0;
      while (pos_ + 8 <= len_ && (std::memcpy(&word, data_ + pos_, 8), word == kEightSpaces)) {
        pos_ += 8;
      }
      while (pos_ < len_ && white(data_[pos_])) ++pos_;
      skipped_ += pos_ - from;
      if (consumed() - run_start > kMaxJsonWhiteSpaceRun) {
        throw InputError(file_, "",
                         "not valid JSON (byte " + std::to_string(run_start) + "): more than " +
                             std::to_string(kMaxJsonWhiteSpaceRun) +
                             " bytes of white space in a row; a pathbench document never holds "
                             "that much");
      }
      if (pos_ < len_ || !next_chunk()) return;
    }
  }
  static constexpr std::uint64_t kEightSpaces = 0x2020202020202020ULL;
  std::uint64_t skipped_ = 0;
  bool in_string_ = false, escaped_ = false;
};

class TextSource : public ByteSource {
 public:
  TextSource(std::string_view text, std::string file) : ByteSource(std::move(file)) {
    data_ = text.data();
    len_ = text.size();
  }
};

class FileSource : public ByteSource {
 public:
  FileSource(int fd, std::string path, std::uint64_t max_bytes)
      : ByteSource(std::move(path)), fd_(fd), max_bytes_(max_bytes), buffer_(kChunk) {}
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  ~FileSource() override { ::close(fd_); }

 protected:
  bool refill() override {
    for (;;) {
      const ssize_t n = ::read(fd_, buffer_.data(), buffer_.size());
      if (n == 0) return false;
      if (n < 0) {
        if (errno == EINTR) continue;
        throw InputError(file_, "", std::string("cannot read: ") + std::strerror(errno));
      }
      if (base_ + static_cast<std::uint64_t>(n) > max_bytes_) {
        throw InputError(
            file_, "",
            "cannot read: grew beyond " + std::to_string(max_bytes_) + " bytes while being read");
      }
      data_ = buffer_.data();
      len_ = static_cast<std::size_t>(n);
      return true;
    }
  }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 20;
  int fd_;
  std::uint64_t max_bytes_;
  std::vector<char> buffer_;
};

class SourceIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;

  SourceIterator() = default;
  explicit SourceIterator(ByteSource* source) : source_(source) {}
  char operator*() const { return source_->current(); }
  SourceIterator& operator++() {
    source_->advance();
    return *this;
  }
  SourceIterator operator++(int) {
    SourceIterator before = *this;
    source_->advance();
    return before;
  }
  // Only "at the end or not" is ever compared (nlohmann: current != end).
  friend bool operator==(const SourceIterator& a, const SourceIterator& b) {
    return a.done() == b.done();
  }
  friend bool operator!=(const SourceIterator& a, const SourceIterator& b) { return !(a == b); }

 private:
  bool done() const { return source_ == nullptr || source_->at_end(); }
  ByteSource* source_ = nullptr;
};

// "[json.exception.parse_error.101] parse error at ..." -> "parse error at ...".
std::string without_prefix(std::string message) {
  if (const auto end = message.find("] "); message.starts_with("[") && end != std::string::npos) {
    message.erase(0, end + 2);
  }
  return message;
}

// A pointer as messages show it: the root ("") as "/", as InputError does.
std::string shown(std::string pointer) { return pointer.empty() ? "/" : pointer; }

std::string quoted(const std::string& s) {
  return ojson(s).dump(-1, ' ', false, ojson::error_handler_t::replace);
}

// The unescaped tokens of a JSON pointer ("/a~1b/0" -> {"a/b", "0"}).
std::vector<std::string> pointer_tokens(const std::string& pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') {
    throw std::invalid_argument("JSON pointer \"" + pointer + "\" does not start with '/'");
  }
  std::string token;
  for (std::size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
    } else if (pointer[i] == '~' && i + 1 < pointer.size() &&
               (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
      token += pointer[i + 1] == '0' ? '~' : '/';
      ++i;
    } else {
      token += pointer[i];
    }
  }
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// The SAX handler: builds the document, checking as it goes.

class StrictBuilder {
 public:
  using number_integer_t = ojson::number_integer_t;
  using number_unsigned_t = ojson::number_unsigned_t;
  using number_float_t = ojson::number_float_t;
  using string_t = ojson::string_t;
  using binary_t = ojson::binary_t;

  StrictBuilder(std::string file, const ByteSource& source, const JsonReadOptions& options)
      : file_(std::move(file)),
        source_(source),
        options_(options),
        stream_tokens_(pointer_tokens(options.stream_array)),
        streaming_(!options.stream_array.empty() && options.on_element) {}

  ojson take() { return std::move(root_); }

  bool null() { return scalar(ojson(nullptr)); }
  bool boolean(bool v) { return scalar(ojson(v)); }
  bool number_integer(number_integer_t v) { return scalar(ojson(v)); }
  bool number_unsigned(number_unsigned_t v) { return scalar(ojson(v)); }
  bool number_float(number_float_t v, const string_t& /*text*/) { return scalar(ojson(v)); }
  // Copied, not moved: the lexer's buffer keeps its capacity for the next token.
  bool string(string_t& v) { return scalar(ojson(v)); }
  bool binary(binary_t& v) { return scalar(ojson(std::move(v))); }

  bool start_object(std::size_t /*elements*/) {
    open(ojson::value_t::object, false);
    return true;
  }
  bool start_array(std::size_t /*elements*/) {
    open(ojson::value_t::array, streaming_ && depth_ == stream_tokens_.size() && at_stream_path());
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& k) {
    Frame& f = frames_[depth_ - 1];
    const auto& members =
        static_cast<const ObjectBase&>(f.value->get_ref<const ojson::object_t&>());
    const std::uint64_t here = source_.consumed();
    // Members so far each have their value: as many as keys seen.
    if (members.size() < kIndexedFrom) {
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (members[i].first == k) duplicate(f, k, f.key_ends[i], here);
      }
    } else {
      if (f.key_index.empty()) {
        f.key_index.reserve(members.size() * 2);
        for (std::size_t i = 0; i < members.size(); ++i) {
          f.key_index.emplace(members[i].first, f.key_ends[i]);
        }
      }
      const auto [it, inserted] = f.key_index.emplace(k, here);
      if (!inserted) duplicate(f, k, it->second, here);
    }
    f.key_ends.push_back(here);
    f.key.assign(k);  // a copy: both buffers keep their capacity
    return true;
  }

  [[noreturn]] bool parse_error(std::size_t lexer_position, const std::string& last_token,
                                const ojson::exception& e) {
    // The lexer counts what it was handed; the source skipped some white space.
    const std::uint64_t position = lexer_position + source_.skipped();
    if (e.id == 406) {
      // The lexer read a number that does not fit a double ("1e999"). The document as a whole
      // is malformed (pointer ""), like any other JSON error; the message says where.
      throw InputError(file_, "",
                       "not valid JSON (byte " + std::to_string(position) + "): the number " +
                           last_token + " at " + shown(pointer_of(depth_)) +
                           " is beyond the range of a double");
    }
    std::string where;
    if (depth_ > 0) where = " (inside " + shown(pointer_of(depth_)) + ")";
    throw InputError(file_, "",
                     "not valid JSON (byte " + std::to_string(position) + ")" + where + ": " +
                         without_prefix(e.what()));
  }

 private:
  using ObjectBase = ojson::object_t::Container;
  // Objects with more members than this find a repeated key through a hash index.
  static constexpr std::size_t kIndexedFrom = 16;

  struct Frame {
    ojson* value = nullptr;  // the container being filled
    bool is_object = false;
    bool streamed = false;                // the elements go to on_element, not into *value
    std::string key;                      // objects: the member being read
    std::size_t index = 0;                // arrays: the element being read
    std::vector<std::uint64_t> key_ends;  // objects: where each member's key ended, in order
    std::unordered_map<std::string, std::uint64_t> key_index;  // objects with many members
  };

  // Whether the array about to open sits at options_.stream_array.
  bool at_stream_path() const {
    for (std::size_t i = 0; i < depth_; ++i) {
      const Frame& f = frames_[i];
      if (f.streamed) return false;
      if (f.is_object ? f.key != stream_tokens_[i] : std::to_string(f.index) != stream_tokens_[i]) {
        return false;
      }
    }
    return true;
  }

  std::string pointer_of(std::size_t frames) const {
    std::string p;
    for (std::size_t i = 0; i < frames; ++i) {
      const Frame& f = frames_[i];
      p += '/';
      p += f.is_object ? pointer_token(f.key) : std::to_string(f.index);
    }
    return p;
  }

  [[noreturn]] void duplicate(Frame& f, const std::string& k, std::uint64_t first,
                              std::uint64_t again) {
    f.key = k;
    throw InputError(file_, pointer_of(depth_),
                     "duplicate key " + quoted(k) + " (first near byte " + std::to_string(first) +
                         ", again near byte " + std::to_string(again) +
                         "): JSON readers differ in which one they keep, so the document is "
                         "refused");
  }

  // Puts a new value where the parser is: the root, the next member or element, or the element
  // being streamed.
  ojson* place(ojson&& v) {
    if (depth_ == 0) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = frames_[depth_ - 1];
    if (f.streamed) {
      element_ = std::move(v);
      return &element_;
    }
    if (f.is_object) {
      // Straight to the member vector: the key is known to be new (checked in key()), and
      // ordered_map's own insertion would search the members again.
      auto& members = static_cast<ObjectBase&>(f.value->get_ref<ojson::object_t&>());
      members.emplace_back(f.key, std::move(v));
      return &members.back().second;
    }
    auto& elements = f.value->get_ref<ojson::array_t&>();
    elements.push_back(std::move(v));
    return &elements.back();
  }

  // A value at the current position is complete.
  void done() {
    if (depth_ == 0) return;
    Frame& f = frames_[depth_ - 1];
    if (f.is_object) return;
    if (f.streamed) {
      ojson element = std::move(element_);
      element_ = ojson();
      options_.on_element(std::move(element), f.index, root_);
    }
    ++f.index;
  }

  bool scalar(ojson&& v) {
    place(std::move(v));
    done();
    return true;
  }

  void open(ojson::value_t type, bool streamed) {
    if (depth_ + 1 > kMaxJsonDepth) {
      throw InputError(file_, pointer_of(depth_),
                       "nesting deeper than " + std::to_string(kMaxJsonDepth) +
                           " levels; a pathbench document is never that deep");
    }
    ojson* value = place(ojson(type));
    if (depth_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[depth_++];
    f.value = value;
    f.is_object = type == ojson::value_t::object;
    f.streamed = streamed;
    f.key.clear();
    f.index = 0;
    f.key_ends.clear();
    if (!f.key_index.empty()) f.key_index = {};  // clear() would walk a large bucket array
  }

  bool close() {
    --depth_;
    done();
    return true;
  }

  std::string file_;
  const ByteSource& source_;
  const JsonReadOptions& options_;
  std::vector<std::string> stream_tokens_;
  bool streaming_;
  ojson root_;
  ojson element_;              // the element of the streamed array being read
  std::vector<Frame> frames_;  // reused: frames_[0, depth_) are open
  std::size_t depth_ = 0;
};

ojson parse_source(ByteSource& source, const std::string& file, const JsonReadOptions& options) {
  StrictBuilder builder(file, source, options);
  // strict: nothing but white space may follow the value.
  const bool ok = ojson::sax_parse(SourceIterator(&source), SourceIterator(), &builder,
                                   ojson::input_format_t::json, true);
  if (!ok) throw InputError(file, "", "not valid JSON");  // unreachable: errors throw
  return builder.take();
}

}  // namespace

ojson read_json_file(const std::filesystem::path& path, const JsonReadOptions& options) {
  int fd = -1;
  try {
    fd = open_regular_file(path, options.max_bytes);
  } catch (const SystemError& e) {
    throw InputError(path.string(), "",
                     std::string("cannot read: ") + std::strerror(e.error_number()));
  } catch (const std::exception& e) {
    throw InputError(path.string(), "", std::string("cannot read: ") + e.what());
  }
  FileSource source(fd, path.string(), options.max_bytes);
  return parse_source(source, path.string(), options);
}

ojson parse_json_text(std::string_view text, const std::string& file,
                      const JsonReadOptions& options) {
  TextSource source(text, file);
  return parse_source(source, file, options);
}

}  // namespace pathbench
