// SmallVec<T, N>: a vector of trivially copyable T whose first N elements live
// inside the object. What a Node and a Value keep per node (results, what it
// writes, def-use lists) is one to three entries almost always; as
// std::vectors each was a heap block of its own, made and freed in between
// other allocations, so walking 100k nodes in program order touched several
// scattered cache lines per node besides the node itself (docs/performance.md,
// compile time). Inline, they sit in the node's own lines, which the pool lays
// out in creation order.
//
//   SmallVec<Value*, 2> outs;   // no allocation up to 2 entries
//   outs.push_back(v);
//   for (Value* o : outs) ...
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace symmflow::ir {

template <class T, unsigned N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVec moves its elements with memcpy");
  static_assert(N > 0);

 public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  SmallVec() = default;
  SmallVec(size_t n, const T& v) { assign(n, v); }
  explicit SmallVec(size_t n) { assign(n, T{}); }
  SmallVec(std::initializer_list<T> l) { assign(l.begin(), l.end()); }
  template <class It, class = decltype(*std::declval<It>())>
  SmallVec(It first, It last) {
    assign(first, last);
  }
  SmallVec(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit, as the vector it replaces
  SmallVec(const SmallVec& o) { assign(o.begin(), o.end()); }
  SmallVec(SmallVec&& o) noexcept { take(o); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~SmallVec() { release(); }

  // A copy as a std::vector (for the APIs that take one; nothing converts implicitly).
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  T* data() { return ptr(); }
  const T* data() const { return ptr(); }
  T* begin() { return ptr(); }
  T* end() { return ptr() + size_; }
  const T* begin() const { return ptr(); }
  const T* end() const { return ptr() + size_; }
  T& operator[](size_t i) { return ptr()[i]; }
  const T& operator[](size_t i) const { return ptr()[i]; }
  T& at(size_t i) {
    check(i);
    return ptr()[i];
  }
  const T& at(size_t i) const {
    check(i);
    return ptr()[i];
  }
  T& front() { return ptr()[0]; }
  const T& front() const { return ptr()[0]; }
  T& back() { return ptr()[size_ - 1]; }
  const T& back() const { return ptr()[size_ - 1]; }

  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }
  void clear() { size_ = 0; }
  void push_back(const T& v) {
    if (size_ == cap_) {
      // v may be one of the elements: find it again after they moved.
      const T* p = &v;
      const bool own = p >= begin() && p < end();
      const size_t at = own ? size_t(p - begin()) : 0;
      grow(size_t(cap_) * 2);
      if (own) p = begin() + at;
      std::memcpy(static_cast<void*>(ptr() + size_++), p, sizeof(T));
      return;
    }
    ptr()[size_++] = v;
  }
  void pop_back() { --size_; }
  void resize(size_t n, const T& v = T{}) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) ptr()[i] = v;
    size_ = uint32_t(n);
  }
  void assign(size_t n, const T& v) {
    const T copy = v;
    size_ = 0;
    resize(n, copy);
  }
  template <class It, class = decltype(*std::declval<It>())>
  void assign(It first, It last) {
    size_ = 0;
    for (; first != last; ++first) push_back(*first);
  }
  T* insert(const T* pos, const T& v) {
    const size_t at = size_t(pos - ptr());
    const T copy = v;
    reserve(size_t(size_) + 1);
    std::memmove(ptr() + at + 1, ptr() + at, (size_ - at) * sizeof(T));
    ptr()[at] = copy;
    ++size_;
    return ptr() + at;
  }
  T* erase(const T* pos) { return erase(pos, pos + 1); }
  T* erase(const T* first, const T* last) {
    const size_t a = size_t(first - ptr()), b = size_t(last - ptr());
    std::memmove(ptr() + a, ptr() + b, (size_ - b) * sizeof(T));
    size_ -= uint32_t(b - a);
    return ptr() + a;
  }

  friend bool operator==(const SmallVec& a, const SmallVec& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  T* ptr() { return heap_ ? heap_ : reinterpret_cast<T*>(inline_); }
  const T* ptr() const { return heap_ ? heap_ : reinterpret_cast<const T*>(inline_); }
  void check(size_t i) const {
    if (i >= size_) throw std::out_of_range("SmallVec::at");
  }
  void grow(size_t n) {
    n = std::max<size_t>(n, 2 * size_t(N));
    T* p = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (!p) throw std::bad_alloc();
    std::memcpy(static_cast<void*>(p), ptr(), size_ * sizeof(T));
    std::free(heap_);
    heap_ = p;
    cap_ = uint32_t(n);
  }
  void release() {
    std::free(heap_);
    heap_ = nullptr;
    size_ = 0;
    cap_ = N;
  }
  void take(SmallVec& o) {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
    } else {
      std::memcpy(inline_, o.inline_, size_ * sizeof(T));
    }
    o.size_ = 0;
    o.cap_ = N;
  }

  T* heap_ = nullptr;
  uint32_t size_ = 0, cap_ = N;
  alignas(T) unsigned char inline_[N * sizeof(T)];
};

}  // namespace symmflow::ir
