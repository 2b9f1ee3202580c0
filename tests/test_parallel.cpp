// core/parallel: the parallel for-loop runs every iteration once and carries an exception out of its
// OpenMP region as it was thrown (issue 10), the same one at any thread count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <omp.h>

#include <sparseact/core/parallel.hpp>

using sparseact::parallel_for;
using sparseact::ParallelOptions;

namespace {

/// Sets the OpenMP thread count for a scope.
struct Threads {
  int saved;
  explicit Threads(int n) : saved(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(saved); }
};

struct Custom {  // not derived from std::exception: rethrown as it is, not wrapped
  int code;
};

const ParallelOptions kSchedules[] = {{}, {true, 1, true}, {true, 7, true}, {false, 1, false}};

}  // namespace

TEST_CASE("parallel_for runs each index of the range exactly once", "[parallel]") {
  for (int threads : {1, 2}) {
    Threads t(threads);
    for (const ParallelOptions& opt : kSchedules) {
      std::vector<int> hits(1000, 0);
      parallel_for(std::int64_t{0}, std::int64_t{1000}, [&](std::int64_t i) { hits[static_cast<std::size_t>(i)] += 1; }, opt);
      CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
      // An offset range with an unsigned index: Σ_{i=5}^{104} i = 100·(5 + 104)/2 = 5450.
      std::vector<std::size_t> seen(100);
      parallel_for(std::size_t{5}, std::size_t{105}, [&](std::size_t i) { seen[i - 5] = i; }, opt);
      CHECK(std::accumulate(seen.begin(), seen.end(), std::size_t{0}) == 5450);
    }
  }
  int calls = 0;
  parallel_for(3, 3, [&](int) { ++calls; });
  parallel_for(5, 2, [&](int) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("parallel_for rethrows an iteration's exception after the loop: same type and message, no abort", "[parallel]") {
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    Threads t(threads);
    for (const ParallelOptions& opt : kSchedules) {
      std::vector<int> done(64, 0);
      try {
        parallel_for(0, 64, [&](int i) {
          if (i == 17) throw std::out_of_range("iteration 17 failed");
          done[static_cast<std::size_t>(i)] = 1;
        }, opt);
        FAIL("no exception came out");
      } catch (const std::out_of_range& e) {
        CHECK(std::string(e.what()) == "iteration 17 failed");
      }
      // Every iteration below the failing one ran; the failing one did not finish.
      CHECK(std::accumulate(done.begin(), done.begin() + 17, 0) == 17);
      CHECK(done[17] == 0);

      try {
        parallel_for(0, 10, [](int i) {
          if (i == 4) throw Custom{42};
        }, opt);
        FAIL("no exception came out");
      } catch (const Custom& e) {
        CHECK(e.code == 42);
      }
    }
  }
}

TEST_CASE("parallel_for: when several iterations throw, the smallest index's exception comes out at any thread count",
          "[parallel]") {
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    Threads t(threads);
    for (const ParallelOptions& opt : kSchedules) {
      // Iterations 900 and 300 throw different types; the one of index 300 is the sequential loop's.
      try {
        parallel_for(std::int64_t{0}, std::int64_t{1000}, [](std::int64_t i) {
          if (i == 900) throw std::runtime_error("late");
          if (i == 300) throw std::invalid_argument("early");
        }, opt);
        FAIL("no exception came out");
      } catch (const std::invalid_argument& e) {
        CHECK(std::string(e.what()) == "early");
      } catch (const std::exception& e) {
        FAIL("wrong exception: " << e.what());
      }
    }
  }
}
