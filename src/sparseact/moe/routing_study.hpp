#pragma once
// The experiments of momlp_routing (paper 003 §3, §4.1) as library pieces: eq. (5) against exact brute
// force on dyadic grids, Example 1 against eq. (5), and the three routers of moe/routing_tree on prototype
// sets of growing K (queries, misrouting against eq. (5), inputs sent beyond the covering radius).
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <sparseact/core/record.hpp>

namespace sparseact::moe {

struct TieStudy {
  long inputs = 0, tied = 0, disagreements = 0;
};
/// Dyadic prototypes (2 bits) and inputs (3 bits) in n = 1, 2, 3: eq. (5) (voronoi_cell) against exact brute force.
TieStudy tie_study(std::uint64_t seed);

struct Example1Study {
  std::vector<double> x;
  std::vector<int> cell_eq5, cell_example1;  ///< 1-based
  std::vector<std::string> tie_points;       ///< where x is equidistant from two prototypes ("1/4", …)
  long disagreements_off_ties = 0;
};
/// x = i/64, i = 0 … 64, through eq. (5) and Algorithm 1.
Example1Study example1_study();

enum class PrototypeSet { grid = 0, uniform = 1, user = 2, kmeans = 3 };
/// "grid,uniform,kmeans" → sets (kmeans: centroids of 4K uniform points, at least 2000; 10 Lloyd updates); throws InputError naming the choices otherwise.
std::vector<PrototypeSet> split_sets(const std::string& text);

struct RoutingConfig {
  PrototypeSet set = PrototypeSet::uniform;
  int n = 1, K = 1, nu = 2;
  Eigen::MatrixXd user_prototypes, user_inputs;  ///< columns, for PrototypeSet::user
  int height() const;                            ///< ⌈log_ν K⌉
  std::string key() const;
};
/// Every (set, n, K, ν); the grid only where K is an n-th power (m^n cell centres (i + ½)/m, a δ-net of
/// [0, 1]^n with δ = √n/(2m)).
std::vector<RoutingConfig> routing_configs(const std::vector<PrototypeSet>& sets, const std::vector<double>& ns,
                                           const std::vector<double>& Ks, const std::vector<double>& nus);
/// User points (rows of the files: K × n prototypes, M × n inputs), one configuration per ν. Throws
/// InputError on shapes that disagree, non-finite entries or duplicate prototypes (eq. (5) needs distinct ones).
std::vector<RoutingConfig> user_configs(const Eigen::MatrixXd& prototypes, const Eigen::MatrixXd& inputs, const std::vector<double>& nus);

struct RouterStats {
  double queries_mean = 0, queries_max = 0, misroute_rate = 0, far_rate = 0;
};
struct RoutingResult {
  RouterStats scan, greedy, exact;
  double covering_radius = 0;  ///< δ: max over the inputs of the distance to the nearest prototype
};
/// Routes `inputs` uniform inputs of [0, 1]^n (the user's, for a user set) with the three routers. Misrouting
/// is against eq. (5); far: sent farther than δ.
RoutingResult run_routing(const RoutingConfig& c, int inputs, std::uint64_t seed, std::uint64_t index);

Record to_record(const RoutingResult& r);
RoutingResult routing_result_from(const Record& r);

}  // namespace sparseact::moe
