#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "cuda/cuda_check.hpp"

namespace pathbench {

// RAII owners for CUDA resources. Destructors never throw: a failing free during unwinding must
// not hide the error that caused the unwinding.

class DeviceMemory {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(std::size_t bytes) : bytes_(bytes) {
    PB_CUDA(cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes));
  }
  DeviceMemory(DeviceMemory&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DeviceMemory() {
    if (ptr_) cudaFree(ptr_);
  }
  std::byte* get() const { return static_cast<std::byte*>(ptr_); }
  std::size_t size() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// cudaMallocHost: page-locked and mapped for the device.
class PinnedHostMemory {
 public:
  PinnedHostMemory() = default;
  explicit PinnedHostMemory(std::size_t bytes, unsigned flags = cudaHostAllocDefault)
      : bytes_(bytes) {
    PB_CUDA(cudaHostAlloc(&ptr_, bytes == 0 ? 1 : bytes, flags));
  }
  PinnedHostMemory(PinnedHostMemory&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedHostMemory& operator=(PinnedHostMemory&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~PinnedHostMemory() {
    if (ptr_) cudaFreeHost(ptr_);
  }
  std::byte* get() const { return static_cast<std::byte*>(ptr_); }
  std::size_t size() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// cudaHostRegister over memory someone else owns; unregisters before that memory goes away.
class HostRegistration {
 public:
  HostRegistration() = default;
  HostRegistration(void* ptr, std::size_t bytes, unsigned flags = cudaHostRegisterDefault)
      : ptr_(ptr) {
    PB_CUDA(cudaHostRegister(ptr, bytes, flags));
  }
  HostRegistration(HostRegistration&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  HostRegistration& operator=(HostRegistration&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    return *this;
  }
  ~HostRegistration() {
    if (ptr_) cudaHostUnregister(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

class Stream {
 public:
  Stream() { PB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  // Lower numbers are higher priorities; cudaDeviceGetStreamPriorityRange gives the device's.
  explicit Stream(int priority) {
    PB_CUDA(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority));
  }
  Stream(Stream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    std::swap(stream_, o.stream_);
    return *this;
  }
  ~Stream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaStream_t get() const { return stream_; }
  void synchronize() const { PB_CUDA(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  explicit Event(unsigned flags = cudaEventDefault) {
    PB_CUDA(cudaEventCreateWithFlags(&event_, flags));
  }
  Event(Event&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    std::swap(event_, o.event_);
    return *this;
  }
  ~Event() {
    if (event_) cudaEventDestroy(event_);
  }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// The calling thread's current device.
inline int current_device() {
  int device = 0;
  PB_CUDA(cudaGetDevice(&device));
  return device;
}
// Makes `device` current and returns it (for a member initialised before the rest of a case).
inline int make_current(int device) {
  PB_CUDA(cudaSetDevice(device));
  return device;
}

// Makes `device` current for the scope and restores the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device) : previous_(current_device()) { make_current(device); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  ~DeviceScope() { cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

}  // namespace pathbench
