#pragma once
// Small linear programs, solved by GLPK (docs/DESIGN.md, Dependencies): the bounding box of a polytope
// (paper 000 §4), and the many tiny separability LPs that decide shattering (paper 003).
//
//   minimise or maximise  cᵀx + c₀   subject to   lo_i ≤ a_iᵀx ≤ hi_i  (constraints),
//                                                 l_j ≤ x_j ≤ u_j      (variables),
// with ±inf for a missing bound. glp_simplex solves in floating point (tolerances ~1e-7 on bounds
// and reduced costs); `exact` hands its basis to glp_exact, which finishes in rational arithmetic.
// glp_exact reads each double as the simplest fraction within 1e-10 relative of it (1/3 for
// 0.333…), so an exact answer is exact for integer and short-fraction data (the lattice points of
// the tests) and for all other data exact for that fraction's problem.
//
// GLPK aborts the process on an invalid argument (its glp_error); every argument is checked here
// first and refused with std::invalid_argument or std::out_of_range. A numerical failure of the
// solver (singular or ill-conditioned basis) throws std::runtime_error. GLPK's terminal output is
// switched off (glp_term_out, which is per thread: GLPK 5 keeps its environment in thread-local
// storage). Use one Problem per thread; threads may each hold their own.
//
// This header does not include glpk.h (the GLPK problem lives behind a pointer to implementation)
// and is C++17, so notebooks and users need neither GLPK's headers nor C++20.
#include <limits>
#include <memory>

#include <Eigen/Core>

namespace sparseact::lp {

inline constexpr double inf = std::numeric_limits<double>::infinity();

enum class Sense { minimize, maximize };

enum class Status {
  optimal,     ///< an optimal solution: objective and x are set
  infeasible,  ///< no x satisfies the constraints and bounds
  unbounded,   ///< feasible, and the objective is unbounded in the sense asked for
};
/// "optimal", "infeasible", "unbounded".
const char* to_string(Status s);

struct SolveOptions {
  /// GLPK's LP presolver. Off, the simplex starts from the previous solve's basis (a warm start for
  /// a sequence of LPs that differ only in their objective, as the 2k LPs of a bounding box).
  bool presolve = true;
  /// Finish with glp_exact (rational arithmetic from the simplex's basis); see the header comment.
  bool exact = false;
};

struct Solution {
  Status status = Status::infeasible;
  double objective = std::numeric_limits<double>::quiet_NaN();  ///< cᵀx + c₀ when optimal, else NaN
  Eigen::VectorXd x;                                            ///< the optimal point; empty unless optimal
  bool optimal() const { return status == Status::optimal; }
};

/// An LP owned by GLPK; movable, not copyable; the destructor frees it. A moved-from Problem only
/// accepts assignment and destruction (anything else throws std::logic_error).
class Problem {
 public:
  Problem();
  ~Problem();
  Problem(Problem&& other) noexcept;
  Problem& operator=(Problem&& other) noexcept;
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  Eigen::Index variables() const;
  Eigen::Index constraints() const;

  /// Appends `count` variables with bounds lo ≤ x_j ≤ hi (lo = −inf, hi = +inf for a free variable;
  /// lo = hi fixes it); returns the index of the first. Their objective coefficients are 0.
  /// Throws std::invalid_argument on NaN, lo > hi, lo = +inf or hi = −inf.
  Eigen::Index add_variables(Eigen::Index count, double lo, double hi);
  void set_variable_bounds(Eigen::Index j, double lo, double hi);

  /// Appends the constraint lo ≤ aᵀx ≤ hi (a dense row, one entry a variable; zeros are not stored);
  /// returns its index. lo = hi gives an equality. Throws std::invalid_argument on a row of the
  /// wrong length, a non-finite coefficient, or bounds as for add_variables.
  Eigen::Index add_constraint(const Eigen::Ref<const Eigen::VectorXd>& a, double lo, double hi);
  /// Appends lo_i ≤ (A x)_i ≤ hi_i for every row of A; returns the index of the first.
  Eigen::Index add_constraints(const Eigen::Ref<const Eigen::MatrixXd>& A, const Eigen::Ref<const Eigen::VectorXd>& lo,
                               const Eigen::Ref<const Eigen::VectorXd>& hi);
  /// The same bounds for every row.
  Eigen::Index add_constraints(const Eigen::Ref<const Eigen::MatrixXd>& A, double lo, double hi);
  void set_constraint_bounds(Eigen::Index i, double lo, double hi);

  /// The objective cᵀx + constant (c: one entry a variable, finite) and its sense.
  void set_objective(const Eigen::Ref<const Eigen::VectorXd>& c, Sense sense, double constant = 0.0);

  Solution solve(const SolveOptions& options = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Impl& impl() const;
};

/// Whether {x ∈ Rⁿ : A x ≤ b} is empty, decided by one LP over (x, r): maximise r subject to
/// a_iᵀx + r‖a_i‖₂ ≤ b_i and r ≤ 1 (always feasible and bounded). Its optimum r* is
/// min(1, radius of the largest ball inside the set) (the Chebyshev radius) when the set is not
/// empty, and negative when it is. A zero row a_i = 0 reads 0 ≤ b_i and is decided directly; a
/// row with b_i = +inf constrains nothing. The weights ‖a_i‖₂ only scale rows: the signs of r*
/// below are those of any positive weights, so their rounding does not matter.
///
/// Strict linear separability is strict feasibility: labelled points (x_i, y_i), y_i = ±1, are
/// split by a halfspace iff some (w, c) has −y_i (x_iᵀw + c) < 0 for every i.
struct Feasibility {
  bool feasible = false;           ///< some x with A x ≤ b  (r* ≥ 0)
  bool strictly_feasible = false;  ///< some x with A x < b  (r* > 0)
  double depth = -inf;             ///< r*; −inf when a zero row has b_i < 0
  Eigen::VectorXd x;               ///< the LP's maximiser: inside the set when feasible, interior when strictly
};
/// exact = true (the default) decides with glp_exact, so "feasible" and "strictly feasible" carry no
/// tolerance for integer or short-fraction data; false uses the floating-point simplex alone.
Feasibility feasibility(const Eigen::Ref<const Eigen::MatrixXd>& A, const Eigen::Ref<const Eigen::VectorXd>& b,
                        bool exact = true);

}  // namespace sparseact::lp
