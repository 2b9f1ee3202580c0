// The sweep layer (app/sweep.hpp) against its ground truth: records survive serialisation bit for
// bit, a grid's index is its old loop order, and the runner returns what the direct loop computes,
// for any thread count and hand-out order, resumed or not.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <limits>

#include <sparseact/app/sweep.hpp>
#include <sparseact/core/errors.hpp>
#include <sparseact/core/rng.hpp>

#include "support.hpp"

using namespace sparseact;
using namespace sparseact::app;
namespace fs = std::filesystem;

namespace {

Record toy_item(std::size_t i, std::uint64_t seed) {
  return Record().set("square", double(i) * double(i)).set("draw", Rng(seed, i).uniform()).set("key", "i=" + std::to_string(i));
}

Sweep toy_sweep(std::size_t n, std::uint64_t seed) {
  return {.label = "toy", .count = n, .key = [](std::size_t i) { return "i=" + std::to_string(i); },
          .cost = [](std::size_t i) { return double(i % 7); }, .item = [seed](std::size_t i) { return toy_item(i, seed); }};
}

SweepOptions options_for(int threads, ItemOrder order = ItemOrder::cost) {
  SweepOptions o;
  o.threads = threads;
  o.order = order;
  o.analysis = "toy";
  o.version = "test";
  o.params = {{"seed", 5}};
  o.show_progress = false;
  return o;
}

}  // namespace

TEST_CASE("A record survives serialisation bit for bit", "[sweep]") {
  const double nan_payload = std::bit_cast<double>(std::uint64_t{0x7ff8000000000abcULL});
  std::vector<double> big(1000000);
  Rng rng(3, 4);
  for (double& x : big) x = rng.normal();
  big[17] = -0.0, big[18] = std::numeric_limits<double>::infinity(), big[19] = nan_payload, big[20] = std::numeric_limits<double>::denorm_min();
  Record r;
  r.set("nan", nan_payload).set("minus_zero", -0.0).set("neg_inf", -std::numeric_limits<double>::infinity());
  r.set("text", std::string("a\0b\nc", 5)).set("empty", std::vector<double>{}).set("big", big);
  const Record back = deserialize(serialize(r));
  CHECK(back == r);
  CHECK(std::bit_cast<std::uint64_t>(back.num("nan")) == 0x7ff8000000000abcULL);
  CHECK(std::signbit(back.num("minus_zero")));
  CHECK(back.str("text") == std::string("a\0b\nc", 5));
  CHECK(back.arr("big").size() == 1000000);
  CHECK(std::bit_cast<std::uint64_t>(back.arr("big")[19]) == 0x7ff8000000000abcULL);
  // −0 and +0 compare equal as numbers but not as records: bits decide.
  CHECK(Record().set("x", -0.0) != Record().set("x", 0.0));
  CHECK(deserialize(serialize(Record())) == Record());
}

TEST_CASE("Damaged record bytes are refused, not misread", "[sweep]") {
  const std::string bytes = serialize(Record().set("x", 1.0).set("v", std::vector<double>{1, 2, 3}));
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) CHECK_THROWS_AS(deserialize(bytes.substr(0, cut)), std::runtime_error);
  CHECK_THROWS_AS(deserialize(bytes + "x"), std::runtime_error);
  CHECK_THROWS_AS(Record().set("x", 1.0).str("x"), std::out_of_range);
  CHECK_THROWS_AS(Record().num("absent"), std::out_of_range);
}

TEST_CASE("A grid's index is the old nested loop's order", "[sweep]") {
  const Grid g{{4, 3, 5}};
  REQUIRE(g.count() == 60);
  std::size_t i = 0;
  for (std::size_t a = 0; a < 4; ++a)
    for (std::size_t b = 0; b < 3; ++b)
      for (std::size_t c = 0; c < 5; ++c, ++i) {
        CHECK(g.coords(i) == std::vector<std::size_t>{a, b, c});
        CHECK(g.index({a, b, c}) == i);
      }
  CHECK_THROWS(g.index({4, 0, 0}));
}

TEST_CASE("The runner returns the direct loop's records for any thread count and order", "[sweep]") {
  const std::size_t n = 257;
  const Sweep s = toy_sweep(n, 5);
  for (int threads : {1, 2, 3})
    for (ItemOrder order : {ItemOrder::cost, ItemOrder::reverse, ItemOrder::shuffle}) {
      SweepReport report;
      const std::vector<Record> got = run_sweep(s, options_for(threads, order), &report);
      REQUIRE(got.size() == n);
      for (std::size_t i = 0; i < n; ++i) REQUIRE(got[i] == toy_item(i, 5));
      CHECK(report.computed == n);
      CHECK(report.resumed == 0);
    }
}

TEST_CASE("The lowest-index failure comes out, with its kind", "[sweep]") {
  Sweep s = toy_sweep(50, 1);
  s.item = [](std::size_t i) -> Record {
    if (i == 31) throw std::runtime_error("thirty-one");
    if (i >= 12) throw InputError("item " + std::to_string(i));
    return Record().set("i", double(i));
  };
  for (int threads : {1, 2, 4}) {
    try {
      run_sweep(s, options_for(threads, ItemOrder::reverse));
      FAIL("no exception");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()) == "item 12");
    }
  }
}

TEST_CASE("Resuming reuses checkpoints, redoes damaged ones and refuses other parameters", "[sweep]") {
  test_support::TempDir tmp("sweep-resume");
  const std::size_t n = 40;
  const Sweep s = toy_sweep(n, 9);
  SweepOptions o = options_for(2);
  o.resume = true;
  o.out = tmp / "out";

  SweepReport first;
  const std::vector<Record> a = run_sweep(s, o, &first);
  CHECK(first.computed == n);
  const fs::path items = o.out / ".sweep" / "items";
  REQUIRE(fs::exists(o.out / ".sweep" / "manifest.json"));
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(items)) files += e.path().extension() == ".rec";
  CHECK(files == n);

  SweepReport second;  // a finished run: nothing to compute
  CHECK(run_sweep(s, o, &second) == a);
  CHECK(second.computed == 0);
  CHECK(second.resumed == n);

  // A truncated checkpoint (a node that died mid-write without the rename) is redone.
  const fs::path victim = items / "00000007.rec";
  const std::string bytes = test_support::read_bytes(victim);
  test_support::write_bytes(victim, bytes.substr(0, bytes.size() - 3));
  SweepReport third;
  CHECK(run_sweep(s, o, &third) == a);
  CHECK(third.computed == 1);
  CHECK(third.redone == 1);

  // The folder reads back as the records (what the notebook does).
  const SweepFolder folder = read_sweep_folder(o.out);
  REQUIRE(folder.items.size() == n);
  for (std::size_t i = 0; i < n; ++i) CHECK(folder.items.at(i) == a[i]);
  CHECK(folder.manifest["items"] == n);

  // Other parameters: refused, nothing changed.
  auto listing = [&] {
    std::vector<std::pair<std::string, std::string>> l;
    for (const auto& e : fs::recursive_directory_iterator(o.out))
      if (e.is_regular_file()) l.emplace_back(e.path().string(), test_support::read_bytes(e.path()));
    std::sort(l.begin(), l.end());
    return l;
  };
  const auto before = listing();
  SweepOptions other = o;
  other.params = {{"seed", 6}};
  try {
    run_sweep(s, other);
    FAIL("no exception");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("--seed 5 there, 6 here"));
  }
  other = o;
  other.version = "another";
  CHECK_THROWS_AS(run_sweep(s, other), InputError);
  CHECK(listing() == before);
}

TEST_CASE("A rank's GPU is its local rank modulo the node's GPUs", "[sweep][device]") {
  CHECK(device_for_local_rank(0, 2) == 0);
  CHECK(device_for_local_rank(1, 2) == 1);
  CHECK(device_for_local_rank(2, 2) == 0);
  CHECK(device_for_local_rank(3, 2) == 1);
  for (int r = 0; r < 4; ++r) CHECK(device_for_local_rank(r, 0) == -1);
  CHECK(device_for_local_rank(5, 8) == 5);
}

TEST_CASE("Listing items prints one JSON line per item", "[sweep]") {
  const std::string text = list_items(toy_sweep(3, 1));
  CHECK(text == "{\"cost\":0.0,\"index\":0,\"key\":\"i=0\"}\n{\"cost\":1.0,\"index\":1,\"key\":\"i=1\"}\n{\"cost\":2.0,\"index\":2,\"key\":\"i=2\"}\n");
}
