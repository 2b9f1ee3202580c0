#pragma once
// Fashion-MNIST subsets shared by the work items of one process (app/sweep.hpp): an analysis that
// loaded its data before its loop now loads it inside each item, and items on the threads of one
// process share one copy. Never sent between ranks: every process builds its own, bit for bit the
// same as nn::fashion_mnist's.
//
//   const nn::Dataset& data = nn::shared_fashion_mnist("train", train_n, pool);  // in an item
#include <string>

#include <Eigen/Core>

#include <sparseact/nn/data.hpp>

namespace sparseact::nn {

/// nn::fashion_mnist(split, n, pool), built once per process and (split, n, pool) and kept for
/// the process's lifetime; thread-safe (one load at a time, later callers wait and share it).
/// Errors (InputError) are not cached: every caller sees the same exception.
const Dataset& shared_fashion_mnist(const std::string& split, Eigen::Index n, int pool);

}  // namespace sparseact::nn
