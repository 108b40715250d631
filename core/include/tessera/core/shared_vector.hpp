#pragma once
// A vector whose copies share one buffer until one of them is changed (copy on write).
//
// Why: a schedule is copied to change nothing but its problem. The schedule cache hands one
// checked schedule out at every batch size of a sweep (schedules::with_batch), and copying its
// ops, blocks, items and collectives was 8 % of an analytic sweep's time (perf, 10,000 points).
// With these members shared, such a copy costs a few reference counts.
//
// Reads go through the const members and never copy. Every non-const member first makes this
// copy the sole owner of its buffer (cloning it if another copy shares it), so a change is never
// seen through another copy. Read through a const reference where only reading: a non-const
// begin() on a shared buffer clones it.
//
// Threads: copies may be read from any thread at once. A copy is changed only by the thread
// that owns it; a buffer it shares is then cloned, never written.
//
// References into the buffer live as long as the buffer: one taken from a copy that is then
// changed points into the old buffer, which lives on only while another copy holds it.
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace tessera {

template <class T>
class SharedVector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  // Plain pointers into the buffer, kept beside it: a read is one load and an index, as in
  // std::vector, not a walk through the shared pointer and the vector behind it.
  using iterator = T*;
  using const_iterator = const T*;

  SharedVector() = default;
  SharedVector(std::vector<T> values) : buffer_(std::make_shared<std::vector<T>>(std::move(values))) { refresh(); }
  SharedVector(std::initializer_list<T> values) : SharedVector(std::vector<T>(values)) {}
  SharedVector(const SharedVector&) = default;
  SharedVector& operator=(const SharedVector&) = default;
  SharedVector(SharedVector&& other) noexcept
      : buffer_(std::move(other.buffer_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  SharedVector& operator=(SharedVector&& other) noexcept {
    buffer_ = std::move(other.buffer_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  // Reading: never copies.
  const std::vector<T>& vector() const { return buffer_ ? *buffer_ : empty_vector(); }
  operator const std::vector<T>&() const { return vector(); }
  operator std::span<const T>() const { return {data_, size_}; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* data() const { return data_; }
  const T& operator[](std::size_t index) const { return data_[index]; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  // Whether this copy and `other` read the same buffer (tests; nothing else should care).
  bool shares_buffer_with(const SharedVector& other) const { return buffer_ != nullptr && buffer_ == other.buffer_; }

  // Changing: the buffer becomes this copy's own first. None of these but edit() hands out the
  // vector itself, so that the pointer and size read above always follow it.
  T* data() { return own().data(); }
  T& operator[](std::size_t index) { return own()[index]; }
  T& front() { return own().front(); }
  T& back() { return own().back(); }
  iterator begin() { return own().data(); }
  iterator end() { return own().data() + size_; }
  void push_back(const T& value) { resized([&](std::vector<T>& values) { values.push_back(value); }); }
  void push_back(T&& value) { resized([&](std::vector<T>& values) { values.push_back(std::move(value)); }); }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    resized([&](std::vector<T>& values) { values.emplace_back(std::forward<Args>(args)...); });
    return back();
  }
  // `position` may point into a buffer about to be cloned: it is carried over as an offset.
  template <class... Args>
  iterator insert(const_iterator position, Args&&... args) {
    const auto offset = position - data_;
    resized([&](std::vector<T>& values) { values.insert(values.cbegin() + offset, std::forward<Args>(args)...); });
    return data() + offset;
  }
  iterator erase(const_iterator position) { return erase(position, position + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const auto first_offset = first - data_, last_offset = last - data_;
    resized([&](std::vector<T>& values) { values.erase(values.cbegin() + first_offset, values.cbegin() + last_offset); });
    return data() + first_offset;
  }
  void pop_back() { resized([](std::vector<T>& values) { values.pop_back(); }); }
  void reserve(std::size_t count) { resized([&](std::vector<T>& values) { values.reserve(count); }); }
  void resize(std::size_t count) { resized([&](std::vector<T>& values) { values.resize(count); }); }
  void resize(std::size_t count, const T& value) { resized([&](std::vector<T>& values) { values.resize(count, value); }); }
  // A sole owner keeps its capacity (a caller refilling it in a loop allocates once); a shared
  // buffer is left to the other copies.
  void clear() {
    if (buffer_ && buffer_.use_count() == 1) {
      resized([](std::vector<T>& values) { values.clear(); });
    } else {
      *this = SharedVector();
    }
  }
  void assign(std::size_t count, const T& value) { *this = SharedVector(std::vector<T>(count, value)); }
  // Any other change, made on this copy's own vector (std::erase_if, sorting).
  template <class Change>
  void edit(Change&& change) {
    resized([&](std::vector<T>& values) { change(values); });
  }

  friend bool operator==(const SharedVector& a, const SharedVector& b) {
    return a.buffer_ == b.buffer_ || a.vector() == b.vector();
  }
  friend bool operator==(const SharedVector& a, const std::vector<T>& b) { return a.vector() == b; }

 private:
  static const std::vector<T>& empty_vector() {
    static const std::vector<T> empty;
    return empty;
  }
  std::vector<T>& own() {
    if (!buffer_) {
      buffer_ = std::make_shared<std::vector<T>>();
    } else if (buffer_.use_count() > 1) {
      buffer_ = std::make_shared<std::vector<T>>(*buffer_);
    }
    refresh();
    return *buffer_;
  }
  template <class Change>
  void resized(Change&& change) {
    change(own());
    refresh();
  }
  void refresh() {
    data_ = buffer_->data();
    size_ = buffer_->size();
  }

  std::shared_ptr<std::vector<T>> buffer_;
  // The buffer's elements, read without going through it.
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tessera
