// Storage: the bytes behind one or more Tensors. It is regular (heap) or
// symmetric: a slice of a group's symmetric heap, at the same offset on every
// rank, whose peers' copies are reachable through peer_ptr(). Views share a Storage.
//
// The runtime implements SymmetricRegion and a symmetric Allocator; core only
// provides the seam (AllocatorGuard swaps the thread's allocator, which is how
// sf::symm::Scope makes every allocation inside it symmetric).
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace symmflow {

// The runtime's description of where a symmetric storage lives on every rank.
class SymmetricRegion {
 public:
  virtual ~SymmetricRegion() = default;
  virtual const std::string& group_name() const = 0;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Offset of this region inside the group's symmetric heap (same on all ranks).
  virtual size_t heap_offset() const = 0;
  // Address of the peer's copy of byte 0 of this region, or nullptr when the peer
  // is not directly addressable (another node), like nvshmem_ptr.
  virtual void* peer_ptr(int peer) const = 0;
};

class Storage {
 public:
  using Deleter = std::function<void(void*)>;
  Storage(void* data, size_t nbytes, Deleter deleter,
          std::shared_ptr<SymmetricRegion> symmetric = nullptr);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  bool is_symmetric() const { return symmetric_ != nullptr; }
  SymmetricRegion* symmetric() const { return symmetric_.get(); }
  // The peer's copy of this storage's byte `byte_offset`; nullptr if unreachable
  // or if this storage is not symmetric.
  void* peer_ptr(int peer, size_t byte_offset = 0) const;

 private:
  void* data_;
  size_t nbytes_;
  Deleter deleter_;
  std::shared_ptr<SymmetricRegion> symmetric_;
};

// Allocates storages. The thread's current allocator serves Tensor::empty and
// every kernel output.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::shared_ptr<Storage> allocate(size_t nbytes) = 0;
};

// 64-byte aligned heap memory.
Allocator& regular_allocator();
Allocator& current_allocator();

// Makes `a` the thread's allocator for its lifetime, then restores the previous one.
class AllocatorGuard {
 public:
  explicit AllocatorGuard(Allocator& a);
  ~AllocatorGuard();
  AllocatorGuard(const AllocatorGuard&) = delete;
  AllocatorGuard& operator=(const AllocatorGuard&) = delete;

 private:
  Allocator* previous_;
};

}  // namespace symmflow
