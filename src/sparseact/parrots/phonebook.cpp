#include <sparseact/parrots/phonebook.hpp>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>

namespace sparseact::parrots {

namespace {

constexpr long kNameSpace = 26L * 26 * 26 * 26 * 26;

/// Draws distinct codes below `space` until there are `count` (rejection: fine while count ≪ space, and exact
/// either way; the books here use at most a few percent of the name space).
std::vector<long> distinct_codes(long count, long space, Rng& rng) {
  std::set<long> seen;
  std::vector<long> out;
  while (long(out.size()) < count) {
    const long c = long(rng.below(std::uint64_t(space)));
    if (seen.insert(c).second) out.push_back(c);
  }
  return out;
}

std::vector<int> digits_of(long code, int length, int base, int offset) {
  std::vector<int> d(static_cast<std::size_t>(length));
  for (int i = length - 1; i >= 0; --i, code /= base) d[std::size_t(i)] = offset + int(code % base);
  return d;
}

}  // namespace

std::vector<Entry> make_phonebook(long size, std::uint64_t seed, std::uint64_t stream) {
  if (size < 1 || size > kNameSpace / 2)
    throw InputError(fmt::format("phone book size {} must lie in [1, {}] (half the 26^5 names, so that drawing distinct ones stays quick)", size, kNameSpace / 2));
  Rng rng(seed, stream);
  const std::vector<long> names = distinct_codes(size, kNameSpace, rng), numbers = distinct_codes(size, 100'000'000L, rng);
  std::vector<Entry> book;
  for (long i = 0; i < size; ++i)
    book.push_back({digits_of(names[std::size_t(i)], kNameLength, kLetters, 0), digits_of(numbers[std::size_t(i)], kNumberLength, kDigits, kLetters)});
  return book;
}

std::vector<int> entry_tokens(const Entry& e) {
  std::vector<int> t{kBos};
  t.insert(t.end(), e.name.begin(), e.name.end());
  t.push_back(kSep);
  t.insert(t.end(), e.number.begin(), e.number.end());
  t.push_back(kEos);
  return t;
}

std::string to_text(const Entry& e) {
  std::string s;
  for (int c : e.name) s += char('a' + c);
  s += ' ';
  for (int d : e.number) s += char('0' + d - kLetters);
  return s;
}

nn::Dataset phonebook_dataset(const std::vector<Entry>& book) {
  nn::Dataset d;
  const Eigen::Index N = Eigen::Index(book.size()), T = kEntryLength - 1;
  d.x.resize(T, N), d.y.resize(T, N);
  for (Eigen::Index i = 0; i < N; ++i) {
    const std::vector<int> t = entry_tokens(book[std::size_t(i)]);
    for (Eigen::Index p = 0; p < T; ++p) d.x(p, i) = t[std::size_t(p)], d.y(p, i) = t[std::size_t(p + 1)];
  }
  d.description = fmt::format("phone book of {} entries", N);
  return d;
}

double phonebook_recall(const nn::DecoderShape& s, const Eigen::VectorXd& theta, const std::vector<Entry>& book, long queries,
                        std::uint64_t seed, std::uint64_t stream) {
  std::vector<Eigen::Index> order;
  nn::epoch_permutation(order, Eigen::Index(book.size()), seed, stream, 0);
  const long count = std::min<long>(queries, long(book.size()));
  long right = 0;
  for (long q = 0; q < count; ++q) {
    const Entry& e = book[std::size_t(order[std::size_t(q)])];
    std::vector<int> prompt{kBos};
    prompt.insert(prompt.end(), e.name.begin(), e.name.end());
    prompt.push_back(kSep);
    std::vector<int> want = e.number;
    want.push_back(kEos);
    right += nn::greedy_decode(s, theta, prompt, kEos, kNumberLength + 1) == want;
  }
  return count == 0 ? 0.0 : double(right) / double(count);
}

PhonebookRun train_phonebook(const nn::DecoderShape& s, long size, const PhonebookTraining& t, std::uint64_t seed, std::uint64_t stream) {
  const std::vector<Entry> book = make_phonebook(size, seed, stream_id(stream, 0));
  const nn::Dataset data = phonebook_dataset(book);
  Eigen::VectorXd theta = nn::init_decoder(s, seed, stream_id(stream, 1));
  PhonebookRun r;
  r.final_loss = nn::train_decoder(s, theta, data, {.epochs = t.epochs, .batch = t.batch, .lr = t.lr}, seed, stream_id(stream, 2));
  r.recall = phonebook_recall(s, theta, book, t.queries, seed, stream_id(stream, 3));
  return r;
}

}  // namespace sparseact::parrots
