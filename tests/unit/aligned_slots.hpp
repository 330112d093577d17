#pragma once

// Aligned host memory standing in for the storage reader's pinned staging slots in tests without
// a GPU: `count` buffers of `bytes`, each aligned to kDirectIoAlignment (O_DIRECT reads into
// them).
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>
#include <vector>

#include "placement/direct_io.hpp"

namespace pathbench::testing {

class AlignedSlots {
 public:
  AlignedSlots(std::size_t count, std::size_t bytes) {
    for (std::size_t i = 0; i < count; ++i) {
      memory_.emplace_back(static_cast<std::byte*>(std::aligned_alloc(kDirectIoAlignment, bytes)));
      if (!memory_.back()) throw std::bad_alloc();
      spans_.emplace_back(memory_.back().get(), bytes);
    }
  }
  const std::vector<std::span<std::byte>>& spans() const { return spans_; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<std::byte, Free>> memory_;
  std::vector<std::span<std::byte>> spans_;
};

}  // namespace pathbench::testing
