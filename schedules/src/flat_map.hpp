#pragma once
// A small open-addressing hash map from nonzero-ish 64-bit keys to 64-bit values, for the hot
// loops of the checker and the cost model (std::unordered_map allocates a node per entry).
#include <cstdint>
#include <vector>

namespace tessera::schedules::detail {

class FlatMap {
 public:
  explicit FlatMap(size_t expected = 1024) { rehash(capacity_for(expected)); }

  int64_t& operator[](uint64_t key) {
    if ((size_ + 1) * 2 > keys_.size()) rehash(keys_.size() * 2);
    size_t slot = find_slot(key);
    if (!used_[slot]) {
      used_[slot] = 1;
      keys_[slot] = key;
      values_[slot] = 0;
      ++size_;
    }
    return values_[slot];
  }
  // Pointer to the value, or nullptr.
  int64_t* find(uint64_t key) {
    size_t slot = find_slot(key);
    return used_[slot] ? &values_[slot] : nullptr;
  }
  // Removes the key if present (backward-shift deletion keeps probing chains intact).
  void erase(uint64_t key) {
    size_t slot = find_slot(key);
    if (!used_[slot]) return;
    used_[slot] = 0;
    --size_;
    size_t next = (slot + 1) & mask_;
    while (used_[next]) {
      size_t home = hash(keys_[next]) & mask_;
      // Move the entry back if its home is not in (slot, next].
      bool move = slot <= next ? (home <= slot || home > next) : (home <= slot && home > next);
      if (move) {
        keys_[slot] = keys_[next];
        values_[slot] = values_[next];
        used_[slot] = 1;
        used_[next] = 0;
        slot = next;
      }
      next = (next + 1) & mask_;
    }
  }
  size_t size() const { return size_; }
  template <typename Visit>
  void for_each(Visit visit) const {
    for (size_t slot = 0; slot < keys_.size(); ++slot)
      if (used_[slot]) visit(keys_[slot], values_[slot]);
  }

 private:
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
    while (used_[slot] && keys_[slot] != key) slot = (slot + 1) & mask_;
    return slot;
  }
  void rehash(size_t capacity) {
    std::vector<uint64_t> keys = std::move(keys_);
    std::vector<int64_t> values = std::move(values_);
    std::vector<uint8_t> used = std::move(used_);
    keys_.assign(capacity, 0);
    values_.assign(capacity, 0);
    used_.assign(capacity, 0);
    mask_ = capacity - 1;
    size_ = 0;
    for (size_t slot = 0; slot < used.size(); ++slot)
      if (used[slot]) (*this)[keys[slot]] = values[slot];
  }

  std::vector<uint64_t> keys_;
  std::vector<int64_t> values_;
  std::vector<uint8_t> used_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace tessera::schedules::detail
