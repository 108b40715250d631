#pragma once
// Values appended in blocks of a fixed count and read back once, in order, each block freed as
// soon as its last value is read.
//
// Why: the checker finds a schedule's dependency lists GPU by GPU and copies them into op order.
// Held whole beside the copy, they were the check's peak (77 MB twice, a contiguous ring at
// 1,024 GPUs). Read from blocks that go as they are read, the copy grows as they shrink. A block
// of 16 MiB or more is a mapping of its own in `tessera` (cli/large_allocations.cpp), so a freed
// block leaves the process rather than the heap.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace tessera {

template <class T>
class ReadOnceBlocks {
 public:
  // block_count: values per block (at least 1); expected: about how many will be appended, the
  // first block's room where that is less than a block (a small schedule's check maps no 16 MiB).
  ReadOnceBlocks(std::size_t block_count, std::size_t expected) : block_count_(std::max<std::size_t>(block_count, 1)) {
    blocks_.emplace_back();
    blocks_.back().reserve(std::min(expected, block_count_));
  }

  void push_back(const T& value) {
    if (blocks_.back().size() == block_count_) {
      blocks_.emplace_back();
      blocks_.back().reserve(block_count_);
    }
    blocks_.back().push_back(value);
    ++size_;
  }
  // Values appended.
  std::size_t size() const { return size_; }
  // Values not yet taken.
  std::size_t left() const { return size_ - taken_; }
  // Blocks still holding room (a taken block holds none).
  std::size_t blocks_held() const {
    return static_cast<std::size_t>(std::count_if(blocks_.begin(), blocks_.end(), [](const auto& block) { return block.capacity() > 0; }));
  }

  // The next `count` values in the order appended (at most left()), written to `out`. Appending
  // after the first take is not supported.
  void take(std::size_t count, T* out) {
    taken_ += count;
    while (count > 0) {  // (none: no block is looked at, also once every block is taken)
      std::vector<T>& block = blocks_[block_];
      const std::size_t here = std::min(count, block.size() - at_);
      // A plain loop: the usual take is a few values, where std::copy_n called memmove.
      for (std::size_t k = 0; k < here; ++k) out[k] = block[at_ + k];
      out += here;
      count -= here;
      if ((at_ += here) == block.size()) {
        std::vector<T>().swap(block);
        ++block_;
        at_ = 0;
      }
    }
  }

 private:
  std::size_t block_count_;
  std::vector<std::vector<T>> blocks_;
  std::size_t size_ = 0, taken_ = 0;
  std::size_t block_ = 0, at_ = 0;  // where take() reads
};

}  // namespace tessera
