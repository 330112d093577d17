#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_check.hpp"

namespace pathbench {

// The driver's answer: may GPU `accessor` map GPU `peer`'s memory (cudaDeviceCanAccessPeer)?
inline bool can_access_peer(int accessor, int peer) {
  int can = 0;
  PB_CUDA(cudaDeviceCanAccessPeer(&can, accessor, peer));
  return can != 0;
}

// Peer access from `accessor` to `peer`'s memory set as asked for the owner's lifetime, then put
// back as it was. Peer access is process-wide state of the accessor's context, so a case that
// changed it must not leave it changed for the next one. The state is verified by asking the
// driver again rather than trusted: a second enable must answer cudaErrorPeerAccessAlreadyEnabled,
// a second disable cudaErrorPeerAccessNotEnabled. The current device is the caller's afterwards.
class PeerAccessSetting {
 public:
  PeerAccessSetting(int accessor, int peer, bool enable)
      : accessor_(accessor), peer_(peer), enable_(enable) {
    int previous = 0;
    PB_CUDA(cudaGetDevice(&previous));
    PB_CUDA(cudaSetDevice(accessor));
    const cudaError_t already =
        enable ? cudaErrorPeerAccessAlreadyEnabled : cudaErrorPeerAccessNotEnabled;
    const cudaError_t err = apply(enable);
    const cudaError_t again = err == cudaSuccess || err == already ? apply(enable) : err;
    cudaSetDevice(previous);
    if (err != cudaSuccess && err != already) {
      throw CudaError(enable ? "cudaDeviceEnablePeerAccess" : "cudaDeviceDisablePeerAccess", err);
    }
    changed_ = err == cudaSuccess;
    verified_ = again == already;
    answer_ = cudaGetErrorName(again);
  }
  PeerAccessSetting(const PeerAccessSetting&) = delete;
  PeerAccessSetting& operator=(const PeerAccessSetting&) = delete;
  ~PeerAccessSetting() {
    if (!changed_) return;
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return;
    if (cudaSetDevice(accessor_) == cudaSuccess) apply(!enable_);
    cudaSetDevice(previous);
  }

  bool changed() const { return changed_; }
  bool verified() const { return verified_; }
  // "GPU 1 -> GPU 0: enabled; asking again answered cudaErrorPeerAccessAlreadyEnabled"
  std::string describe() const {
    return "GPU " + std::to_string(accessor_) + " -> GPU " + std::to_string(peer_) + ": " +
           (enable_ ? "enabled" : "disabled") + (changed_ ? "" : " already") +
           "; asking again answered " + answer_;
  }

 private:
  // The call's result, cleared from the runtime's last-error slot (an expected "already" answer
  // must not surface as the error of a later, unrelated call).
  cudaError_t apply(bool enable) const {
    const cudaError_t err =
        enable ? cudaDeviceEnablePeerAccess(peer_, 0) : cudaDeviceDisablePeerAccess(peer_);
    cudaGetLastError();
    return err;
  }

  int accessor_, peer_;
  bool enable_;
  bool changed_ = false;
  bool verified_ = false;
  std::string answer_;
};

// The peer access of several (accessor, peer) pairs set as asked for the owner's lifetime. When
// disabling, a pair the driver offers no peer access at all is left alone: there is nothing to
// disable, and describe() says so.
class PeerAccessSettings {
 public:
  PeerAccessSettings(const std::vector<std::pair<int, int>>& pairs, bool enable) {
    for (const auto& [accessor, peer] : pairs) {
      detail_ += detail_.empty() ? "" : "; ";
      if (!enable && !can_access_peer(accessor, peer)) {
        detail_ += "GPU " + std::to_string(accessor) + " -> GPU " + std::to_string(peer) +
                   ": off (cudaDeviceCanAccessPeer = 0)";
        continue;
      }
      settings_.push_back(std::make_unique<PeerAccessSetting>(accessor, peer, enable));
      verified_ = verified_ && settings_.back()->verified();
      detail_ += settings_.back()->describe();
    }
  }

  // Every setting the driver confirmed when asked again.
  bool verified() const { return verified_; }
  const std::string& describe() const { return detail_; }

 private:
  std::vector<std::unique_ptr<PeerAccessSetting>> settings_;
  std::string detail_;
  bool verified_ = true;
};

}  // namespace pathbench
