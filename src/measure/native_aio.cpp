#include "measure/native_aio.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.hpp"

namespace pathbench {

NativeAio::NativeAio(unsigned max_events) : events_(max_events) {
  completed_.reserve(max_events);
  if (::syscall(SYS_io_setup, max_events, &context_) != 0) {
    throw SystemError("io_setup for " + std::to_string(max_events) + " reads in flight", errno);
  }
}

NativeAio::~NativeAio() { ::syscall(SYS_io_destroy, context_); }

void NativeAio::submit_read(int fd, std::byte* dst, std::uint64_t length, std::uint64_t offset,
                            std::uint64_t tag) {
  // The kernel copies the control block at submission; only its fields come back.
  iocb block{};
  block.aio_data = tag;
  block.aio_lio_opcode = IOCB_CMD_PREAD;
  block.aio_fildes = static_cast<std::uint32_t>(fd);
  block.aio_buf = reinterpret_cast<std::uint64_t>(dst);
  block.aio_nbytes = length;
  block.aio_offset = static_cast<std::int64_t>(offset);
  iocb* blocks[1] = {&block};
  while (true) {
    const long n = ::syscall(SYS_io_submit, context_, 1, blocks);
    if (n == 1) return;
    if (n < 0 && errno == EINTR) continue;
    throw SystemError("io_submit of a read of " + std::to_string(length) + " bytes at offset " +
                          std::to_string(offset),
                      n < 0 ? errno : EAGAIN);
  }
}

const std::vector<NativeAio::Event>& NativeAio::wait() {
  long n = 0;
  do {
    n = ::syscall(SYS_io_getevents, context_, 1, static_cast<long>(events_.size()), events_.data(),
                  nullptr);
  } while (n < 0 && errno == EINTR);
  if (n < 0) throw SystemError("io_getevents", errno);
  completed_.clear();
  for (long i = 0; i < n; ++i) completed_.push_back({events_[i].data, events_[i].res});
  return completed_;
}

}  // namespace pathbench
