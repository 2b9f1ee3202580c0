// The phone-book task of paper 004 §4.2 (parrots/phonebook): the 39-token format, unique names and numbers, the
// training data's shifted targets, and recall by greedy decoding after a small decoder memorises a small book.
#include <catch2/catch.hpp>

#include <set>

#include <sparseact/core/errors.hpp>
#include <sparseact/nn/train.hpp>
#include <sparseact/parrots/phonebook.hpp>

using namespace sparseact;
using namespace sparseact::parrots;

TEST_CASE("phone books: 16-token entries, unique names and numbers, targets shifted by one", "[parrots][phonebook]") {
  const std::vector<Entry> book = make_phonebook(500, 3, 4);
  std::set<std::vector<int>> names, numbers;
  for (const Entry& e : book) {
    names.insert(e.name), numbers.insert(e.number);
    const std::vector<int> t = entry_tokens(e);
    REQUIRE(int(t.size()) == kEntryLength);
    CHECK(t.front() == kBos);
    CHECK(t[6] == kSep);
    CHECK(t.back() == kEos);
    for (int i = 1; i <= 5; ++i) CHECK((t[std::size_t(i)] >= 0 && t[std::size_t(i)] < 26));
    for (int i = 7; i <= 14; ++i) CHECK((t[std::size_t(i)] >= 26 && t[std::size_t(i)] < 36));
  }
  CHECK(names.size() == 500);
  CHECK(numbers.size() == 500);
  const nn::Dataset d = phonebook_dataset(book);
  CHECK(d.x.rows() == 15);
  CHECK(d.x.block(1, 0, 14, 500) == d.y.block(0, 0, 14, 500));
  CHECK(to_text({{0, 1, 2, 3, 25}, {26, 27, 28, 29, 30, 31, 32, 35}}) == "abcdz 01234569");
  CHECK_THROWS_AS(make_phonebook(0, 1, 1), InputError);
  CHECK_THROWS_AS(make_phonebook(26L * 26 * 26 * 26 * 26, 1, 1), InputError);
}

TEST_CASE("a small decoder memorises a 24-entry phone book and recalls it exactly", "[parrots][phonebook]") {
  const std::vector<Entry> book = make_phonebook(24, 5, 6);
  const nn::Dataset data = phonebook_dataset(book);
  const nn::DecoderShape s{.vocab = kPhonebookVocab, .d = 48, .heads = 2, .layers = 1, .max_len = kEntryLength, .inner = 48, .experts = 1};
  nn::DecoderModel model(s);
  Eigen::VectorXd theta = nn::init_decoder(s, 1, 1);
  nn::AdamW adam;
  adam.lr = 1e-2, adam.weight_decay = 0.1;
  nn::BatchStream batches(data, 8, 1, 2);
  const long steps = 900;
  nn::train(model, theta, adam, nn::linear_decay_schedule(1e-2, steps / 5, steps), batches, {.steps = steps, .loss = nn::LossKind::token_cross_entropy});
  CHECK(phonebook_recall(s, theta, book, 1000, 1, 1) >= 0.9);
  CHECK(phonebook_recall(s, init_decoder(s, 1, 1), book, 1000, 1, 1) == 0.0);  // untrained: no number comes out right
}
