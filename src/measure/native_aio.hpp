#pragma once

// Linux native AIO (io_setup, io_submit, io_getevents, io_destroy) through the raw system calls,
// as fio's libaio engine uses it: one thread keeps many O_DIRECT reads in flight without a
// thread per read. No libaio: the four calls are all it needs.

#include <linux/aio_abi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pathbench {

class NativeAio {
 public:
  // A context for up to `max_events` reads in flight. Throws SystemError naming io_setup (e.g.
  // EAGAIN when /proc/sys/fs/aio-max-nr is exhausted, ENOSYS where the kernel has no AIO).
  explicit NativeAio(unsigned max_events);
  // io_destroy: the kernel waits for reads still in flight before it returns.
  ~NativeAio();
  NativeAio(const NativeAio&) = delete;
  NativeAio& operator=(const NativeAio&) = delete;

  // Queues one read of `length` bytes at `offset` of `fd` into `dst`; `tag` comes back with its
  // event. Throws SystemError naming io_submit when the kernel refuses it (then nothing is
  // queued).
  void submit_read(int fd, std::byte* dst, std::uint64_t length, std::uint64_t offset,
                   std::uint64_t tag);

  struct Event {
    std::uint64_t tag = 0;
    std::int64_t result = 0;  // bytes read, or -errno
  };
  // Waits until at least one read has completed and returns every completed one (at most
  // max_events), again after EINTR; valid until the next wait. Throws SystemError naming
  // io_getevents.
  const std::vector<Event>& wait();

 private:
  aio_context_t context_ = 0;
  // Made once: a wait in the timed region allocates nothing.
  std::vector<io_event> events_;
  std::vector<Event> completed_;
};

}  // namespace pathbench
