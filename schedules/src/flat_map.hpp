#pragma once
// A small open-addressing hash map from 64-bit keys to 64-bit values, for the hot loops of the
// checker (std::unordered_map allocates a node per entry). Each slot holds its key and value
// side by side, so a probe touches one cache line: at 1,024 GPUs the checker's map of partial
// sums holds millions of entries, and with keys, values and flags in three arrays every probe
// missed the cache three times (check_outputs was 16 % of `plan --gpus 1024 --model analytic`).
// The key kEmpty (all ones) marks a free slot and is never a key: the checker's keys
// (checker.cpp, place) leave the data kind's top bit clear.
#include <cstdint>
#include <vector>

namespace tessera::schedules::detail {

class FlatMap {
 public:
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  explicit FlatMap(size_t expected = 1024) { rehash(capacity_for(expected)); }

  int64_t& operator[](uint64_t key) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    Slot& slot = slots_[find_slot(key)];
    if (slot.key == kEmpty) {
      slot.key = key;
      slot.value = 0;
      ++size_;
    }
    return slot.value;
  }
  // Pointer to the value, or nullptr.
  int64_t* find(uint64_t key) {
    Slot& slot = slots_[find_slot(key)];
    return slot.key == kEmpty ? nullptr : &slot.value;
  }
  // Removes the key if present (backward-shift deletion keeps probing chains intact).
  void erase(uint64_t key) {
    size_t slot = find_slot(key);
    if (slots_[slot].key == kEmpty) return;
    slots_[slot].key = kEmpty;
    --size_;
    size_t next = (slot + 1) & mask_;
    while (slots_[next].key != kEmpty) {
      size_t home = hash(slots_[next].key) & mask_;
      // Move the entry back if its home is not in (slot, next].
      bool move = slot <= next ? (home <= slot || home > next) : (home <= slot && home > next);
      if (move) {
        slots_[slot] = slots_[next];
        slots_[next].key = kEmpty;
        slot = next;
      }
      next = (next + 1) & mask_;
    }
  }
  // A hint that `key` will be looked up soon: its home slot is fetched into the cache. The walks
  // over millions of keys know their next keys ahead, and without it each probe waited for
  // memory in turn. Never faults: where the map rehashes before the lookup, the hint was wasted.
  void prefetch(uint64_t key) const { __builtin_prefetch(slots_.data() + (hash(key) & mask_)); }
  size_t size() const { return size_; }
  template <typename Visit>
  void for_each(Visit visit) const {
    for (const Slot& slot : slots_)
      if (slot.key != kEmpty) visit(slot.key, slot.value);
  }

 private:
  struct Slot {
    uint64_t key = kEmpty;
    int64_t value = 0;
  };
  static size_t capacity_for(size_t expected) {
    size_t capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    return capacity;
  }
  static uint64_t hash(uint64_t key) {  // splitmix64 finaliser
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ULL;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebULL;
    return key ^ (key >> 31);
  }
  size_t find_slot(uint64_t key) const {
    size_t slot = hash(key) & mask_;
    while (slots_[slot].key != kEmpty && slots_[slot].key != key) slot = (slot + 1) & mask_;
    return slot;
  }
  void rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    size_ = 0;
    for (const Slot& slot : old)
      if (slot.key != kEmpty) (*this)[slot.key] = slot.value;
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace tessera::schedules::detail
