#pragma once
// Xavier (Glorot & Bengio 2010) and Kaiming (He et al. 2015) initialisation of a weight matrix
// K ∈ R^{n×d} that maps R^d → R^n (paper 001 §3.1: K^l x + b_K), so fan_in = d and fan_out = n,
// as in PyTorch's (out, in) weight layout.
//
//   Xavier:  Var K_ij = 2/(fan_in + fan_out)
//   Kaiming: Var K_ij = gain²/fan_in, gain = √2 (ReLU)
//
// normal draws N(0, Var); uniform draws U[−√(3 Var), √(3 Var)], the same variance.
#include <cstdint>
#include <string>

#include <Eigen/Core>

#include <sparseact/core/rng.hpp>

namespace sparseact::spectral {

enum class Init { xavier, kaiming };

/// Entry variance of the scheme for K ∈ R^{n×d}.
double init_variance(Init init, Eigen::Index n, Eigen::Index d);

/// A freshly initialised K ∈ R^{n×d}, drawn from the stream (seed, stream): the same matrix for any
/// thread count.
Eigen::MatrixXd init_weights(Eigen::Index n, Eigen::Index d, Init init, Distribution dist, std::uint64_t seed,
                             std::uint64_t stream = 0);

Init parse_init(const std::string& name);                  ///< "xavier" | "kaiming"
Distribution parse_distribution(const std::string& name);  ///< "normal" | "uniform"
const char* to_string(Init init) noexcept;
const char* to_string(Distribution dist) noexcept;

}  // namespace sparseact::spectral
