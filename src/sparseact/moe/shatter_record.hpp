#pragma once
// One class's shattering run (paper 003 §3, Theorem 4.2) as a sweep record, the work item of vc_shatter:
// realized (Π̂(m) for m = 1 … m_max), vc_found, the largest shattered set's certificates (JSON text) and
// how many of them the exact verifier confirmed (cert_total, cert_verified); the fixed classes add their LP
// counts (lps, inherited, unverified).
#include <cstdint>

#include <sparseact/core/record.hpp>
#include <sparseact/moe/certificate.hpp>
#include <sparseact/moe/shatter.hpp>
#include <sparseact/moe/shatter_net.hpp>
#include <sparseact/moe/shatter_search.hpp>

namespace sparseact::moe {

/// A fixed-feature class on class_points(c, m_max, seed), by one LP per labeling (glp_exact on every "no"
/// with `exact`).
Record shatter_record(const FeatureClass& c, int m_max, bool exact, std::uint64_t seed);
/// A search class on R, exactly (kinks seeded between the points): m_max standard normal points from
/// Rng(seed, stream).
Record shatter_record(const SearchSpec& s, int m_max, std::uint64_t seed, std::uint64_t stream);
/// A network class in Rⁿ or at depth J ≥ 2 by random hidden stacks (a lower bound): m_max standard normal
/// points in R^{input_dim} from Rng(seed, stream).
Record shatter_record(const NetSearchSpec& s, int input_dim, int m_max, std::uint64_t seed, std::uint64_t stream);

}  // namespace sparseact::moe
