#pragma once
// Blocks of an operator's index set: a Segment is the coordinate range [offset, offset + size), e.g.
// one layer's parameters θ_l inside θ, so that A's diagonal block A_ll is the restriction of A to it.
// Estimators reduce over segments (core/estimators/hutchinson.hpp: tr(A_ll) for every l from the same
// probes).
//
// Convention: an operator that knows its blocks exposes them as a member
//     std::vector<ops::Segment> segments() const
// (nn::HessianOperator: its network's layers). ops::segments(op) returns those, or one segment
// covering everything for an operator without the member.
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

namespace sparseact::ops {

struct Segment {
  Eigen::Index offset = 0, size = 0;
  std::string name;  ///< e.g. the layer's name; may be empty
};

/// True when Op has a member segments() const.
template <class Op, class = void>
struct has_segments : std::false_type {};
template <class Op>
struct has_segments<Op, std::void_t<decltype(std::declval<const Op&>().segments())>> : std::true_type {};

/// The operator's own segments, or the single segment [0, rows()) named "all".
template <class Op>
std::vector<Segment> segments(const Op& op) {
  if constexpr (has_segments<Op>::value) {
    return op.segments();
  } else {
    return {Segment{0, op.rows(), "all"}};
  }
}

/// Throws std::invalid_argument unless every segment lies inside [0, n) with a size ≥ 0.
inline void check_segments(const std::vector<Segment>& segs, Eigen::Index n) {
  for (const Segment& s : segs)
    if (s.offset < 0 || s.size < 0 || s.offset + s.size > n)
      throw std::invalid_argument("segment '" + s.name + "' [" + std::to_string(s.offset) + ", " +
                                  std::to_string(s.offset + s.size) + ") outside [0, " + std::to_string(n) + ")");
}

}  // namespace sparseact::ops
