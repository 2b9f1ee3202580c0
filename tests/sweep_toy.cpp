// sweep_toy — a test fixture, not a paper's analysis: a grid whose item i returns i² and the first
// draw of its own stream Rng(seed, i), so tests can compare any runner, rank count or hand-out order
// with the direct loop. --heavy gives one item a long sleep (and a matching cost estimate) for the
// scheduling test; --fail-at makes items throw for the error tests.
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include <sparseact/app/analysis.hpp>
#include <sparseact/app/checks.hpp>
#include <sparseact/app/sweep.hpp>
#include <sparseact/core/rng.hpp>

using namespace sparseact;
using namespace sparseact::app;

int main(int argc, char** argv) {
  Analysis analysis({.name = "sweep_toy", .paper = "test", .claims = {}, .description = "test fixture for the sweep runner"});
  auto& app = analysis.app();
  int items = 20, heavy = -1, fail_at = -1;
  double item_ms = 0, heavy_ms = 300, array = 0;
  app.add_option("--items", items, "items")->check(CLI::Range(1, 10000000));
  app.add_option("--item-ms", item_ms, "sleep per item")->check(CLI::Range(0.0, 10000.0));
  app.add_option("--heavy", heavy, "the index of one long item");
  app.add_option("--heavy-ms", heavy_ms, "its sleep")->check(CLI::Range(0.0, 100000.0));
  app.add_option("--fail-at", fail_at, "items ≥ this index throw InputError (−1: none)");
  app.add_option("--array", array, "doubles in each record's array")->check(CLI::Range(0.0, 1e7));
  return analysis.run(argc, argv, [&](Analysis& a) {
    const std::vector<Record> records = a.sweep({
        .label = "toy", .count = static_cast<std::size_t>(items),
        .key = [](std::size_t i) { return fmt::format("i={}", i); },
        .cost = [&](std::size_t i) { return int(i) == heavy ? heavy_ms : item_ms + 1e-3; },
        .item = [&](std::size_t i) {
          if (fail_at >= 0 && int(i) >= fail_at) throw InputError(fmt::format("item {} refuses", i));
          const double ms = int(i) == heavy ? heavy_ms : item_ms;
          if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
          Rng rng(a.common.seed, i);
          std::vector<double> v(static_cast<std::size_t>(array));
          for (double& x : v) x = rng.normal();
          return Record().set("square", double(i) * double(i)).set("draw", Rng(a.common.seed, i).uniform()).set("v", v);
        }});
    std::vector<double> squares, draws;
    double sum = 0;
    for (const Record& r : records) {
      squares.push_back(r.num("square")), draws.push_back(r.num("draw"));
      for (double x : r.arr("v")) sum += x;
    }
    a.result.data["squares"] = squares;
    a.result.data["draws"] = draws;
    a.result.data["array_sum"] = sum;
    equals(a, {.id = "count", .claim = "none", .statement = "every item returned"}, static_cast<long long>(records.size()), static_cast<long long>(items));
  });
}
