#pragma once
// std::allocator, except that an element made without a value (resize(n), vector(n)) is left
// default-initialised: for ints, not written at all.
//
// Why: a large array filled out of order (the dependency lists of a schedule at 1,024 GPUs,
// copied into op order as their GPU-by-GPU copy is freed block by block) would otherwise be
// zeroed whole first, which makes every one of its pages resident at once. Left unwritten, a
// page of a fresh mapping costs memory only once the fill reaches it.
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace tessera {

template <class T>
struct UninitializedAllocator : std::allocator<T> {
  using value_type = T;
  UninitializedAllocator() noexcept = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };

  template <class U>
  void construct(U* at) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(at)) U;
  }
  template <class U, class... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};

template <class T, class U>
bool operator==(const UninitializedAllocator<T>&, const UninitializedAllocator<U>&) noexcept {
  return true;
}

}  // namespace tessera
