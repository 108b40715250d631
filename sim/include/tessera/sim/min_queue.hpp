#pragma once
// The simulator's priority-queue types, so that every ordering rule of the simulation is read
// in one place:
//  - MinQueue: the smallest entry (by the entry's operator>) on top; the flow network's
//    fair-share heap and the shared devices' completions. Entries that compare equal leave in
//    an order fixed by the sequence of pushes and pops;
//  - InstantQueue: the engine's event queue. Items keyed by a time leave smallest time first
//    and, at one instant, by class (0 first), first in first out within a class: the order of
//    a MinQueue over (time, class, push sequence);
//  - SortedInstantQueue: the flow network's predicted completions. Items keyed by a time leave
//    smallest time first and, at one instant, smallest item first (by operator>): a MinQueue
//    over (time, item), with an instant's items sorted once, when the first of them is taken.
// The two instant queues keep one heap entry per distinct time, not per item, and the items of
// one instant together: the events of a collective's step (every rank at once) cost a hash
// look-up (none for a run of pushes at one time) rather than a push and pop on a heap of
// every pending event, and the 24-byte events with a sequence number become 8-byte items.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tessera::sim {

template <typename Entry>
using MinQueue = std::priority_queue<Entry, std::vector<Entry>, std::greater<>>;

// Distinct instants, earliest first, each with a bucket (an index into the caller's buckets).
class Instants {
 public:
  bool empty() const { return earliest_.empty(); }
  double earliest_s() const { return earliest_.top().first; }
  int32_t earliest_bucket() const { return earliest_.top().second; }
  // The bucket of `time_s`, new (from the free list, or `bucket_count`) if the instant is not
  // queued yet.
  int32_t bucket_at(double time_s, int32_t bucket_count) {
    time_s += 0.0;  // -0 and +0 are one instant
    const auto bits = std::bit_cast<uint64_t>(time_s);
    if (last_bucket_ >= 0 && bits == last_bits_) return last_bucket_;  // pushes come in runs at one time
    auto [at, inserted] = bucket_of_.try_emplace(bits, 0);
    last_bits_ = bits;
    if (inserted) {
      if (free_.empty()) {
        at->second = bucket_count;
      } else {
        at->second = free_.back();
        free_.pop_back();
      }
      earliest_.push({time_s, at->second});
    }
    last_bucket_ = at->second;
    return at->second;
  }
  // The earliest instant is over; its bucket (emptied by the caller) is free for another.
  void pop_earliest() {
    if (earliest_.top().second == last_bucket_) last_bucket_ = -1;
    bucket_of_.erase(std::bit_cast<uint64_t>(earliest_.top().first));
    free_.push_back(earliest_.top().second);
    earliest_.pop();
  }

 private:
  MinQueue<std::pair<double, int32_t>> earliest_;  // (time, bucket), one per distinct time
  std::unordered_map<uint64_t, int32_t> bucket_of_;  // a time's bits -> its bucket
  std::vector<int32_t> free_;
  uint64_t last_bits_ = 0;  // the time of the last bucket_at(), while its bucket is queued
  int32_t last_bucket_ = -1;
};

template <typename Item, int Classes>
class InstantQueue {
 public:
  bool empty() const { return instants_.empty(); }
  double top_time_s() const { return instants_.earliest_s(); }
  int top_class() const { return front().next_class(); }
  const Item& top() const {
    const Bucket& bucket = front();
    const auto c = static_cast<size_t>(bucket.next_class());
    return bucket.items[c][bucket.taken[c]];
  }
  void push(double time_s, int item_class, Item item) {
    const int32_t index = instants_.bucket_at(time_s, static_cast<int32_t>(buckets_.size()));
    if (static_cast<size_t>(index) == buckets_.size()) buckets_.emplace_back();
    Bucket& bucket = buckets_[static_cast<size_t>(index)];
    bucket.items[static_cast<size_t>(item_class)].push_back(std::move(item));
    ++bucket.left;
  }
  void pop() {
    Bucket& bucket = buckets_[static_cast<size_t>(instants_.earliest_bucket())];
    ++bucket.taken[static_cast<size_t>(bucket.next_class())];
    if (--bucket.left > 0) return;
    for (size_t c = 0; c < Classes; ++c) {  // emptied, keeping its storage for a later instant
      bucket.items[c].clear();
      bucket.taken[c] = 0;
    }
    instants_.pop_earliest();
  }

 private:
  struct Bucket {
    std::array<std::vector<Item>, Classes> items;
    std::array<size_t, Classes> taken{};  // items already popped, per class
    size_t left = 0;
    int next_class() const {
      int c = 0;
      while (taken[static_cast<size_t>(c)] == items[static_cast<size_t>(c)].size()) ++c;
      return c;
    }
  };
  const Bucket& front() const { return buckets_[static_cast<size_t>(instants_.earliest_bucket())]; }

  Instants instants_;
  std::vector<Bucket> buckets_;
};

template <typename Item>
class SortedInstantQueue {
 public:
  bool empty() const { return instants_.empty(); }
  double top_time_s() const { return instants_.earliest_s(); }
  const Item& top() const {
    const Bucket& bucket = buckets_[static_cast<size_t>(instants_.earliest_bucket())];
    return bucket.sorted ? bucket.items.back() : bucket.items[bucket.smallest];
  }
  void push(double time_s, Item item) {
    const int32_t index = instants_.bucket_at(time_s, static_cast<int32_t>(buckets_.size()));
    if (static_cast<size_t>(index) == buckets_.size()) buckets_.emplace_back();
    Bucket& bucket = buckets_[static_cast<size_t>(index)];
    if (bucket.sorted) {  // an instant already being taken: in place, largest first
      bucket.items.insert(std::lower_bound(bucket.items.begin(), bucket.items.end(), item, std::greater<>()), item);
      return;
    }
    if (!bucket.items.empty() && bucket.items[bucket.smallest] > item) bucket.smallest = bucket.items.size();
    if (bucket.items.empty()) bucket.smallest = 0;
    bucket.items.push_back(std::move(item));
  }
  void pop() {
    Bucket& bucket = buckets_[static_cast<size_t>(instants_.earliest_bucket())];
    if (!bucket.sorted) {  // the instant's first item taken: sorted once, then taken from the back
      std::sort(bucket.items.begin(), bucket.items.end(), std::greater<>());
      bucket.sorted = true;
    }
    bucket.items.pop_back();
    if (!bucket.items.empty()) return;
    bucket.sorted = false;  // emptied, keeping its storage for a later instant
    instants_.pop_earliest();
  }

 private:
  // Until its first item is taken, an instant's items are kept as pushed, with the smallest
  // marked; pushes at one time mostly come before any is taken (a step's flows are shared out
  // before the first of them ends), so one sort replaces a heap push and pop per item.
  struct Bucket {
    std::vector<Item> items;
    size_t smallest = 0;
    bool sorted = false;
  };
  Instants instants_;
  std::vector<Bucket> buckets_;
};

}  // namespace tessera::sim
