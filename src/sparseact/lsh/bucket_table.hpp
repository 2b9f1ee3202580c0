#pragma once
// Bucket tables keyed by the FULL integer code of an LSH (paper 000 §2.2, §3.2): a Euclidean LSH code
// is D int32s (D up to hundreds), a hyperplane table's code one 64-bit word. Keys are compared
// exactly, word by word; a 64-bit fingerprint of the code only chooses where to look (open
// addressing, linear probing). Two distinct codes that share a fingerprint are both kept, as
// different buckets, and counted in fingerprint_collisions(): no collision goes uncounted, and none
// can merge two buckets.
//
//   BucketTable table(D);                       // Word = std::int32_t
//   BucketAssignment asg = assign_buckets(codes); // codes: D × N, one point per column
//   asg.bucket[n], asg.counts[b], asg.table.find(code)
//
// BucketMap<V> stores one value per bucket (the LSH learner of Theorem 4.1 keeps one constant each).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include <Eigen/Core>

namespace sparseact::lsh {

/// The default fingerprint: a splitmix64-style mix folded over the words (any 64-bit hash would do;
/// identity is decided by comparing the words).
template <class Word>
inline std::uint64_t default_fingerprint(const Word* code, std::size_t length) noexcept {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(length);
  for (std::size_t i = 0; i < length; ++i) {
    std::uint64_t z = h + static_cast<std::uint64_t>(code[i]) + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    h = z ^ (z >> 31);
  }
  return h;
}

template <class Word>
class BasicBucketTable {
 public:
  using Fingerprint = std::uint64_t (*)(const Word*, std::size_t);
  using Id = std::int64_t;
  static constexpr Id absent = -1;

  /// A table of codes of `length` words each. `fingerprint` may be replaced (tests force collisions).
  explicit BasicBucketTable(std::size_t length, Fingerprint fingerprint = &default_fingerprint<Word>)
      : length_(length), fingerprint_(fingerprint), slots_(16, absent) {
    if (length == 0) throw std::invalid_argument("BucketTable: codes need at least one word");
  }

  std::size_t code_length() const noexcept { return length_; }
  /// Number of distinct codes (non-empty buckets).
  std::size_t size() const noexcept { return prints_.size(); }
  /// Distinct codes whose fingerprint equals that of a code inserted before them. They are separate
  /// buckets all the same; this only reports how often the fingerprint alone would have been wrong.
  std::size_t fingerprint_collisions() const noexcept { return collisions_; }

  /// The bucket of `code` (length words), or `absent`.
  Id find(const Word* code) const noexcept {
    const std::uint64_t fp = fingerprint_(code, length_);
    for (std::size_t s = fp & mask();; s = (s + 1) & mask()) {
      const Id id = slots_[s];
      if (id == absent) return absent;
      if (prints_[static_cast<std::size_t>(id)] == fp && same(id, code)) return id;
    }
  }

  /// The bucket of `code`, created if new; `inserted` (optional) says which.
  Id insert(const Word* code, bool* inserted = nullptr) {
    if (2 * (size() + 1) > slots_.size()) grow();
    const std::uint64_t fp = fingerprint_(code, length_);
    bool shared_print = false;
    std::size_t s = fp & mask();
    for (;; s = (s + 1) & mask()) {
      const Id id = slots_[s];
      if (id == absent) break;
      if (prints_[static_cast<std::size_t>(id)] == fp) {
        if (same(id, code)) {
          if (inserted) *inserted = false;
          return id;
        }
        shared_print = true;  // same fingerprint, different code: a collision, kept apart
      }
    }
    const Id id = static_cast<Id>(size());
    slots_[s] = id;
    prints_.push_back(fp);
    codes_.insert(codes_.end(), code, code + length_);
    if (shared_print) ++collisions_;
    if (inserted) *inserted = true;
    return id;
  }

  /// The code of bucket `id` (length words).
  const Word* code(Id id) const { return codes_.data() + static_cast<std::size_t>(id) * length_; }
  std::uint64_t fingerprint(Id id) const { return prints_[static_cast<std::size_t>(id)]; }

 private:
  std::size_t mask() const noexcept { return slots_.size() - 1; }
  bool same(Id id, const Word* code) const noexcept {
    return std::memcmp(codes_.data() + static_cast<std::size_t>(id) * length_, code, length_ * sizeof(Word)) == 0;
  }
  void grow() {
    std::vector<Id> bigger(slots_.size() * 2, absent);
    const std::size_t m = bigger.size() - 1;
    for (std::size_t id = 0; id < prints_.size(); ++id) {
      std::size_t s = prints_[id] & m;
      while (bigger[s] != absent) s = (s + 1) & m;
      bigger[s] = static_cast<Id>(id);
    }
    slots_.swap(bigger);
  }

  std::size_t length_;
  Fingerprint fingerprint_;
  std::vector<Id> slots_;          // open addressing, power-of-two size, load ≤ 1/2
  std::vector<std::uint64_t> prints_;  // per bucket id
  std::vector<Word> codes_;        // per bucket id, length_ words each
  std::size_t collisions_ = 0;
};

using BucketTable = BasicBucketTable<std::int32_t>;        ///< Euclidean LSH codes (D int32s)
using WordBucketTable = BasicBucketTable<std::uint64_t>;   ///< a hyperplane table's sign pattern (one word)

/// Points assigned to buckets: bucket ids are numbered in order of first appearance.
template <class Word>
struct BasicBucketAssignment {
  BasicBucketTable<Word> table;
  std::vector<std::int64_t> bucket;  ///< bucket of point n (column n)
  std::vector<std::int64_t> counts;  ///< points per bucket
  std::size_t buckets() const noexcept { return table.size(); }
};
using BucketAssignment = BasicBucketAssignment<std::int32_t>;

/// Buckets of the columns of `codes` (code length = rows).
template <class Word>
BasicBucketAssignment<Word> assign_buckets(const Eigen::Matrix<Word, Eigen::Dynamic, Eigen::Dynamic>& codes,
                                           typename BasicBucketTable<Word>::Fingerprint fingerprint = &default_fingerprint<Word>) {
  BasicBucketAssignment<Word> out{BasicBucketTable<Word>(static_cast<std::size_t>(codes.rows()), fingerprint), {}, {}};
  out.bucket.resize(static_cast<std::size_t>(codes.cols()));
  for (Eigen::Index n = 0; n < codes.cols(); ++n) {
    bool fresh = false;
    const auto id = out.table.insert(codes.col(n).data(), &fresh);
    if (fresh) out.counts.push_back(0);
    ++out.counts[static_cast<std::size_t>(id)];
    out.bucket[static_cast<std::size_t>(n)] = id;
  }
  return out;
}

/// One value per bucket (e.g. the constant of Theorem 4.1's learner), keyed by the full code.
template <class V, class Word = std::int32_t>
class BucketMap {
 public:
  using Id = typename BasicBucketTable<Word>::Id;
  explicit BucketMap(std::size_t length, typename BasicBucketTable<Word>::Fingerprint fp = &default_fingerprint<Word>)
      : table_(length, fp) {}

  /// The value of `code`'s bucket, default-constructed if new.
  V& operator[](const Word* code) {
    bool fresh = false;
    const Id id = table_.insert(code, &fresh);
    if (fresh) values_.emplace_back();
    return values_[static_cast<std::size_t>(id)];
  }
  /// Pointer to the value of `code`'s bucket, or nullptr when the bucket is empty.
  const V* find(const Word* code) const {
    const Id id = table_.find(code);
    return id == BasicBucketTable<Word>::absent ? nullptr : &values_[static_cast<std::size_t>(id)];
  }
  V* find(const Word* code) {
    const Id id = table_.find(code);
    return id == BasicBucketTable<Word>::absent ? nullptr : &values_[static_cast<std::size_t>(id)];
  }
  std::size_t size() const noexcept { return values_.size(); }
  /// Iteration by bucket id: code(id) and value(id) for id in [0, size()).
  const Word* code(Id id) const { return table_.code(id); }
  V& value(Id id) { return values_[static_cast<std::size_t>(id)]; }
  const V& value(Id id) const { return values_[static_cast<std::size_t>(id)]; }
  const BasicBucketTable<Word>& table() const noexcept { return table_; }

 private:
  BasicBucketTable<Word> table_;
  std::vector<V> values_;
};

}  // namespace sparseact::lsh
