#pragma once
// The phone-book task of paper 004 §4.2 (Figure 3, Figure 4a): closed-book recall of 8-digit numbers from 5-letter
// names. The 39 tokens are a … z (0 … 25), 0 … 9 (26 … 35), BOS (36), EOS (37), SEP (38); an entry is the 16-token
// sequence BOS n₁ … n₅ SEP d₁ … d₈ EOS, names and numbers unique within a book. Training is next-token prediction
// on every position ("we do not apply any masking", §4.1); a query prompts BOS name SEP and decodes greedily, and
// counts only if all eight digits and the EOS come out exactly (§4.1: exact accuracy).
#include <cstdint>
#include <string>
#include <vector>

#include <sparseact/nn/data.hpp>
#include <sparseact/nn/decoder.hpp>

namespace sparseact::parrots {

inline constexpr int kLetters = 26, kDigits = 10, kBos = 36, kEos = 37, kSep = 38, kPhonebookVocab = 39;
inline constexpr int kNameLength = 5, kNumberLength = 8, kEntryLength = 1 + kNameLength + 1 + kNumberLength + 1;  // 16

struct Entry {
  std::vector<int> name, number;  ///< token ids
};

/// `size` entries with distinct names and distinct numbers, uniform among all such, from Rng(seed, stream). Throws
/// InputError when size exceeds the name space 26⁵ (or is < 1).
std::vector<Entry> make_phonebook(long size, std::uint64_t seed, std::uint64_t stream);
std::vector<int> entry_tokens(const Entry& e);
/// "abcde 12345678"
std::string to_text(const Entry& e);

/// Inputs: the first 15 tokens of each entry (15 × size); targets: the last 15 (every position trained).
nn::Dataset phonebook_dataset(const std::vector<Entry>& book);

/// Exact recall over `queries` entries drawn without replacement from the book (all when queries ≥ size), seeded.
double phonebook_recall(const nn::DecoderShape& s, const Eigen::VectorXd& theta, const std::vector<Entry>& book, long queries,
                        std::uint64_t seed, std::uint64_t stream);

struct PhonebookTraining {
  int epochs = 100;     ///< passes over the book
  int batch = 16;       ///< §4.1 picks the largest of {8, 16, 32}
  double lr = 5e-3;     ///< peak AdamW rate (weight decay 0.1), 20% warmup then linear decay (§4.1)
  long queries = 1000;  ///< §4.1: 1000 queries from the book
};
struct PhonebookRun {
  double recall = 0, final_loss = 0;
};
/// Trains a fresh decoder of shape `s` (init from (seed, stream)) on a book of `size` entries (drawn from (seed,
/// stream)) and measures exact recall.
PhonebookRun train_phonebook(const nn::DecoderShape& s, long size, const PhonebookTraining& t, std::uint64_t seed, std::uint64_t stream);

}  // namespace sparseact::parrots
