#include <sparseact/core/lp.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <glpk.h>

namespace sparseact::lp {

namespace {

// GLPK's own limits (glpk.h does not export them): more rows or columns than this, or a count
// that does not fit an int, reaches glp_error and aborts.
constexpr Eigen::Index max_rows_or_cols = 100'000'000;

/// GLPK's bound type for lo ≤ x ≤ hi, after the checks that keep glp_set_*_bnds and glp_simplex
/// from seeing bounds they reject (GLP_DB needs lo < hi: equal bounds become GLP_FX).
int bound_type(const char* who, double lo, double hi) {
  if (std::isnan(lo) || std::isnan(hi)) throw std::invalid_argument(fmt::format("lp: {}: a bound is NaN", who));
  if (lo == inf || hi == -inf)
    throw std::invalid_argument(fmt::format("lp: {}: bounds [{}, {}] admit no value", who, lo, hi));
  if (lo > hi) throw std::invalid_argument(fmt::format("lp: {}: lower bound {} above upper bound {}", who, lo, hi));
  const bool has_lo = lo > -inf, has_hi = hi < inf;
  if (has_lo && has_hi) return lo == hi ? GLP_FX : GLP_DB;
  if (has_lo) return GLP_LO;
  if (has_hi) return GLP_UP;
  return GLP_FR;
}

void check_finite(const char* who, const Eigen::Ref<const Eigen::VectorXd>& v) {
  if (!v.allFinite()) throw std::invalid_argument(fmt::format("lp: {}: a coefficient is not finite", who));
}

int to_int(Eigen::Index i) { return static_cast<int>(i); }

}  // namespace

const char* to_string(Status s) {
  switch (s) {
    case Status::optimal: return "optimal";
    case Status::infeasible: return "infeasible";
    case Status::unbounded: return "unbounded";
  }
  return "unknown";
}

namespace {

// GLPK keeps one environment per thread, made on first use and freed only by glp_free_env(): every
// worker thread that solved an LP leaked it (5 KB) at its exit, which LeakSanitizer reported
// (bash sparseact.sh sanitize). A thread-local guard frees it when the thread that used GLPK ends.
struct GlpkEnvironmentOfThisThread {
  GlpkEnvironmentOfThisThread() { glp_term_out(GLP_OFF); }  // and silences it: GLPK would print on stdout
  ~GlpkEnvironmentOfThisThread() { glp_free_env(); }
};

void use_glpk_here() { thread_local GlpkEnvironmentOfThisThread environment; }

}  // namespace

struct Problem::Impl {
  glp_prob* P;
  Impl() : P(glp_create_prob()) {}
  ~Impl() { glp_delete_prob(P); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
};

Problem::Problem() {
  use_glpk_here();
  impl_ = std::make_unique<Impl>();
}
Problem::~Problem() = default;
Problem::Problem(Problem&& other) noexcept = default;
Problem& Problem::operator=(Problem&& other) noexcept = default;

Problem::Impl& Problem::impl() const {
  if (!impl_) throw std::logic_error("lp::Problem: used after it was moved from");
  return *impl_;
}

Eigen::Index Problem::variables() const { return glp_get_num_cols(impl().P); }
Eigen::Index Problem::constraints() const { return glp_get_num_rows(impl().P); }

Eigen::Index Problem::add_variables(Eigen::Index count, double lo, double hi) {
  glp_prob* P = impl().P;
  const int type = bound_type("add_variables", lo, hi);
  const Eigen::Index first = variables();
  if (count < 0 || count > max_rows_or_cols - first)
    throw std::invalid_argument(fmt::format("lp: add_variables: count {} (have {}, at most {} in all)", count, first,
                                            max_rows_or_cols));
  if (count == 0) return first;  // glp_add_cols refuses 0
  glp_add_cols(P, to_int(count));
  for (Eigen::Index j = first; j < first + count; ++j) glp_set_col_bnds(P, to_int(j + 1), type, lo, hi);
  return first;
}

void Problem::set_variable_bounds(Eigen::Index j, double lo, double hi) {
  glp_prob* P = impl().P;
  const int type = bound_type("set_variable_bounds", lo, hi);
  if (j < 0 || j >= variables())
    throw std::out_of_range(fmt::format("lp: set_variable_bounds: variable {} of {}", j, variables()));
  glp_set_col_bnds(P, to_int(j + 1), type, lo, hi);
}

Eigen::Index Problem::add_constraint(const Eigen::Ref<const Eigen::VectorXd>& a, double lo, double hi) {
  glp_prob* P = impl().P;
  const int type = bound_type("add_constraint", lo, hi);
  const Eigen::Index n = variables(), i = constraints();
  if (a.size() != n)
    throw std::invalid_argument(fmt::format("lp: add_constraint: row of length {} for {} variables", a.size(), n));
  check_finite("add_constraint", a);
  if (i >= max_rows_or_cols) throw std::invalid_argument("lp: add_constraint: too many constraints for GLPK");
  // Nonzeros in column order, 1-based as GLPK counts (element 0 unused). glp_load_matrix of the
  // same rows in the same order builds identical row and column lists, so results do not depend
  // on which of the two built the problem.
  std::vector<int> ind(1);
  std::vector<double> val(1);
  for (Eigen::Index j = 0; j < n; ++j)
    if (a(j) != 0.0) {
      ind.push_back(to_int(j + 1));
      val.push_back(a(j));
    }
  glp_add_rows(P, 1);
  glp_set_row_bnds(P, to_int(i + 1), type, lo, hi);
  glp_set_mat_row(P, to_int(i + 1), static_cast<int>(ind.size()) - 1, ind.data(), val.data());
  return i;
}

Eigen::Index Problem::add_constraints(const Eigen::Ref<const Eigen::MatrixXd>& A, const Eigen::Ref<const Eigen::VectorXd>& lo,
                                      const Eigen::Ref<const Eigen::VectorXd>& hi) {
  const Eigen::Index first = constraints();
  if (lo.size() != A.rows() || hi.size() != A.rows())
    throw std::invalid_argument(fmt::format("lp: add_constraints: {} rows but {} lower and {} upper bounds", A.rows(),
                                            lo.size(), hi.size()));
  if (A.cols() != variables())
    throw std::invalid_argument(fmt::format("lp: add_constraints: {} columns for {} variables", A.cols(), variables()));
  if (!A.allFinite()) throw std::invalid_argument("lp: add_constraints: a coefficient is not finite");
  for (Eigen::Index i = 0; i < A.rows(); ++i) bound_type("add_constraints", lo(i), hi(i));
  // All checks first: a bad row leaves the problem as it was.
  for (Eigen::Index i = 0; i < A.rows(); ++i) add_constraint(A.row(i).transpose(), lo(i), hi(i));
  return first;
}

Eigen::Index Problem::add_constraints(const Eigen::Ref<const Eigen::MatrixXd>& A, double lo, double hi) {
  return add_constraints(A, Eigen::VectorXd::Constant(A.rows(), lo), Eigen::VectorXd::Constant(A.rows(), hi));
}

void Problem::set_constraint_bounds(Eigen::Index i, double lo, double hi) {
  glp_prob* P = impl().P;
  const int type = bound_type("set_constraint_bounds", lo, hi);
  if (i < 0 || i >= constraints())
    throw std::out_of_range(fmt::format("lp: set_constraint_bounds: constraint {} of {}", i, constraints()));
  glp_set_row_bnds(P, to_int(i + 1), type, lo, hi);
}

void Problem::set_objective(const Eigen::Ref<const Eigen::VectorXd>& c, Sense sense, double constant) {
  glp_prob* P = impl().P;
  if (c.size() != variables())
    throw std::invalid_argument(fmt::format("lp: set_objective: {} coefficients for {} variables", c.size(), variables()));
  check_finite("set_objective", c);
  if (!std::isfinite(constant)) throw std::invalid_argument("lp: set_objective: the constant is not finite");
  glp_set_obj_dir(P, sense == Sense::minimize ? GLP_MIN : GLP_MAX);
  glp_set_obj_coef(P, 0, constant);
  for (Eigen::Index j = 0; j < c.size(); ++j) glp_set_obj_coef(P, to_int(j + 1), c(j));
}

namespace {

[[noreturn]] void solver_failed(const char* solver, int ret) {
  const char* why = ret == GLP_ESING  ? "singular basis"
                    : ret == GLP_ECOND ? "ill-conditioned basis"
                    : ret == GLP_EBADB ? "invalid basis"
                    : ret == GLP_EFAIL ? "solver failure"
                                       : "unexpected return code";
  throw std::runtime_error(fmt::format("lp: {} failed ({}, GLPK code {})", solver, why, ret));
}

/// The solution GLPK holds after a solve that returned 0.
Solution read_solution(glp_prob* P, const char* solver) {
  Solution s;
  switch (glp_get_status(P)) {
    case GLP_OPT: s.status = Status::optimal; break;
    case GLP_NOFEAS: s.status = Status::infeasible; return s;
    case GLP_UNBND: s.status = Status::unbounded; return s;
    default: throw std::runtime_error(fmt::format("lp: {} ended without a verdict (status {})", solver, glp_get_status(P)));
  }
  s.objective = glp_get_obj_val(P);
  s.x.resize(glp_get_num_cols(P));
  for (Eigen::Index j = 0; j < s.x.size(); ++j) s.x(j) = glp_get_col_prim(P, to_int(j + 1));
  return s;
}

/// An LP without constraint coefficients separates into its rows (each reads lo ≤ 0 ≤ hi) and its
/// variables (each optimised over its own interval). GLPK's trivial-LP path decides these with its
/// tolerances; here they are decided exactly.
Solution solve_without_coefficients(glp_prob* P) {
  Solution s;
  const int m = glp_get_num_rows(P), n = glp_get_num_cols(P);
  for (int i = 1; i <= m; ++i) {
    const int t = glp_get_row_type(P, i);
    const bool lo_ok = !(t == GLP_LO || t == GLP_DB || t == GLP_FX) || glp_get_row_lb(P, i) <= 0.0;
    const bool hi_ok = !(t == GLP_UP || t == GLP_DB || t == GLP_FX) || glp_get_row_ub(P, i) >= 0.0;
    if (!lo_ok || !hi_ok) return s;  // infeasible
  }
  const double sign = glp_get_obj_dir(P) == GLP_MIN ? 1.0 : -1.0;  // minimise sign · cᵀx
  Eigen::VectorXd x(n);
  double objective = glp_get_obj_coef(P, 0);
  for (int j = 1; j <= n; ++j) {
    const double c = sign * glp_get_obj_coef(P, j);
    const int t = glp_get_col_type(P, j);
    const double lo = (t == GLP_LO || t == GLP_DB || t == GLP_FX) ? glp_get_col_lb(P, j) : -inf;
    const double hi = (t == GLP_UP || t == GLP_DB || t == GLP_FX) ? glp_get_col_ub(P, j) : inf;
    double v = c > 0 ? lo : c < 0 ? hi : std::min(std::max(0.0, lo), hi);  // c = 0: the point nearest 0
    if (std::isinf(v)) {
      s.status = Status::unbounded;
      return s;
    }
    x(j - 1) = v;
    objective += glp_get_obj_coef(P, j) * v;
  }
  s.status = Status::optimal;
  s.objective = objective;
  s.x = std::move(x);
  return s;
}

}  // namespace

Solution Problem::solve(const SolveOptions& options) {
  glp_prob* P = impl().P;
  use_glpk_here();  // this thread may not be the one that created the problem
  if (glp_get_num_nz(P) == 0) return solve_without_coefficients(P);

  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = options.presolve ? GLP_ON : GLP_OFF;
  int ret = glp_simplex(P, &parm);
  if (ret == GLP_EBADB || ret == GLP_ESING || ret == GLP_ECOND) {
    // Without presolve the simplex starts from the stored basis; one that fails to factorize is
    // replaced by the standard basis (all slacks basic, B = I), which always does.
    glp_std_basis(P);
    ret = glp_simplex(P, &parm);
  }
  if (ret == GLP_ENODFS) {
    // The presolver proved no dual feasible point: the LP is infeasible or unbounded. The primal
    // simplex without presolve tells which.
    parm.presolve = GLP_OFF;
    glp_std_basis(P);
    ret = glp_simplex(P, &parm);
  }
  if (!options.exact) {
    if (ret == GLP_ENOPFS) return Solution{};  // the presolver proved no primal feasible point
    if (ret != 0) solver_failed("glp_simplex", ret);
    return read_solution(P, "glp_simplex");
  }
  // glp_exact continues from the simplex's final basis; when the simplex ended without one (the
  // presolver decided, or it failed), from the standard basis.
  if (ret != 0) glp_std_basis(P);
  glp_smcp exact;
  glp_init_smcp(&exact);
  exact.msg_lev = GLP_MSG_OFF;
  ret = glp_exact(P, &exact);
  if (ret == GLP_EBADB || ret == GLP_ESING) {
    glp_std_basis(P);
    ret = glp_exact(P, &exact);
  }
  if (ret != 0) solver_failed("glp_exact", ret);
  return read_solution(P, "glp_exact");
}

Feasibility feasibility(const Eigen::Ref<const Eigen::MatrixXd>& A, const Eigen::Ref<const Eigen::VectorXd>& b,
                        bool exact) {
  const Eigen::Index m = A.rows(), n = A.cols();
  if (b.size() != m)
    throw std::invalid_argument(fmt::format("lp: feasibility: A has {} rows but b has {} entries", m, b.size()));
  if (!A.allFinite()) throw std::invalid_argument("lp: feasibility: A has a non-finite entry");
  if (b.hasNaN() || (b.array() == -inf).any())
    throw std::invalid_argument("lp: feasibility: b has a NaN or −inf entry");
  Feasibility f;
  f.depth = 1.0;
  std::vector<Eigen::Index> rows;  // the rows with a_i ≠ 0; zero rows read 0 ≤ b_i
  for (Eigen::Index i = 0; i < m; ++i) {
    if ((A.row(i).array() == 0.0).all()) {
      if (b(i) < 0) {
        f.depth = -inf;
        return f;
      }
      if (b(i) == 0) f.depth = 0.0;
    } else if (b(i) < inf) {  // b_i = +inf constrains nothing
      rows.push_back(i);
    }
  }
  if (rows.empty()) {
    f.x = Eigen::VectorXd::Zero(n);
  } else {
    Problem lp;
    lp.add_variables(n, -inf, inf);  // x
    lp.add_variables(1, -inf, 1.0);  // r ≤ 1
    Eigen::VectorXd row(n + 1);
    for (Eigen::Index i : rows) {
      row.head(n) = A.row(i).transpose();
      row(n) = A.row(i).norm();
      lp.add_constraint(row, -inf, b(i));
    }
    Eigen::VectorXd c = Eigen::VectorXd::Zero(n + 1);
    c(n) = 1.0;
    lp.set_objective(c, Sense::maximize);
    SolveOptions options;
    options.exact = exact;
    const Solution s = lp.solve(options);
    // x = 0 with r = min_i b_i/‖a_i‖ is feasible and r ≤ 1 bounds the objective: always optimal.
    if (!s.optimal()) throw std::runtime_error(fmt::format("lp: feasibility: the LP came back {}", to_string(s.status)));
    f.depth = std::min(f.depth, s.objective);
    f.x = s.x.head(n);
  }
  f.feasible = f.depth >= 0.0;
  f.strictly_feasible = f.depth > 0.0;
  return f;
}

}  // namespace sparseact::lp
