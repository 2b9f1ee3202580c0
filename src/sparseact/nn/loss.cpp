#include <sparseact/nn/loss.hpp>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>
#include <stdexcept>

namespace sparseact::nn {
namespace {

void check(LossKind kind, const Eigen::MatrixXd& F, const Batch& batch) {
  const Eigen::Index B = F.cols();
  if (B < 1) throw std::invalid_argument("nn: empty batch");
  if (kind == LossKind::cross_entropy) {
    if (static_cast<Eigen::Index>(batch.labels.size()) != B)
      throw std::invalid_argument("nn: cross-entropy needs one label per sample");
    for (int y : batch.labels)
      if (y < 0 || y >= F.rows()) throw std::invalid_argument("nn: label out of range [0, d_out)");
  } else if (kind == LossKind::token_cross_entropy) {
    if (batch.y.size() != B) throw std::invalid_argument("nn: token cross-entropy needs a target (or −1) per position: T × B targets");
    for (double y : batch.y.reshaped())
      if (y != -1 && !(y >= 0 && y < double(F.rows()) && y == std::floor(y))) throw std::invalid_argument("nn: target token out of range [0, V)");
  } else if (batch.y.rows() != F.rows() || batch.y.cols() != B) {
    throw std::invalid_argument("nn: MSE targets must be d_out x B");
  }
}

// Column-wise softmax, max-shifted; returns log-sum-exp per column in lse.
Eigen::MatrixXd softmax(const Eigen::MatrixXd& F, Eigen::RowVectorXd& lse) {
  Eigen::MatrixXd P(F.rows(), F.cols());
  lse.resize(F.cols());
  for (Eigen::Index s = 0; s < F.cols(); ++s) {
    const double m = F.col(s).maxCoeff();
    P.col(s) = (F.col(s).array() - m).exp().matrix();
    const double z = P.col(s).sum();
    P.col(s) /= z;
    lse(s) = m + std::log(z);
  }
  return P;
}

/// The unmasked positions (columns of F) of a token cross-entropy batch and their targets.
std::vector<std::pair<Eigen::Index, int>> unmasked(const Batch& batch) {
  std::vector<std::pair<Eigen::Index, int>> out;
  const auto y = batch.y.reshaped();
  for (Eigen::Index j = 0; j < y.size(); ++j)
    if (y(j) != -1) out.push_back({j, int(y(j))});
  if (out.empty()) throw std::invalid_argument("nn: every position of the batch is masked");
  return out;
}

}  // namespace

Eigen::VectorXd loss_per_sample(LossKind kind, const Eigen::MatrixXd& F, const Batch& batch) {
  check(kind, F, batch);
  const Eigen::Index B = F.cols();
  Eigen::VectorXd l(B);
  if (kind == LossKind::cross_entropy) {
    Eigen::RowVectorXd lse;
    softmax(F, lse);
    for (Eigen::Index s = 0; s < B; ++s) l(s) = lse(s) - F(batch.labels[static_cast<std::size_t>(s)], s);
  } else if (kind == LossKind::token_cross_entropy) {  // per position (NaN where masked)
    Eigen::RowVectorXd lse;
    softmax(F, lse);
    l.setConstant(std::numeric_limits<double>::quiet_NaN());
    for (const auto& [j, y] : unmasked(batch)) l(j) = lse(j) - F(y, j);
  } else {
    l = (F - batch.y).array().square().colwise().sum().transpose() / static_cast<double>(F.rows());
  }
  return l;
}

double loss_value(LossKind kind, const Eigen::MatrixXd& F, const Batch& batch, Eigen::MatrixXd* dF) {
  check(kind, F, batch);
  const double B = static_cast<double>(F.cols());
  if (kind == LossKind::cross_entropy) {
    Eigen::RowVectorXd lse;
    Eigen::MatrixXd P = softmax(F, lse);
    double L = 0.0;
    for (Eigen::Index s = 0; s < F.cols(); ++s) {
      const int y = batch.labels[static_cast<std::size_t>(s)];
      L += lse(s) - F(y, s);
      P(y, s) -= 1.0;
    }
    if (dF) *dF = P / B;
    return L / B;
  }
  if (kind == LossKind::token_cross_entropy) {
    const auto positions = unmasked(batch);
    const double M = static_cast<double>(positions.size());
    Eigen::RowVectorXd lse;
    const Eigen::MatrixXd P = softmax(F, lse);
    double L = 0.0;
    if (dF) dF->setZero(F.rows(), F.cols());
    for (const auto& [j, y] : positions) {
      L += lse(j) - F(y, j);
      if (dF) {
        dF->col(j) = P.col(j) / M;
        (*dF)(y, j) -= 1.0 / M;
      }
    }
    return L / M;
  }
  const double scale = 1.0 / (B * static_cast<double>(F.rows()));
  const Eigen::MatrixXd r = F - batch.y;
  if (dF) *dF = 2.0 * scale * r;
  return scale * r.squaredNorm();
}

double loss_value(LossKind kind, const Eigen::MatrixXd& F, const Batch& batch, Eigen::MatrixXd* dF,
                  const Eigen::VectorXd& class_weights) {
  if (class_weights.size() == 0) return loss_value(kind, F, batch, dF);
  check(kind, F, batch);
  if (kind != LossKind::cross_entropy) throw std::invalid_argument("nn: class weights apply to cross-entropy only");
  if (class_weights.size() != F.rows()) throw std::invalid_argument("nn: class weights must have d_out entries");
  if (!(class_weights.array() >= 0).all() || !class_weights.allFinite())
    throw std::invalid_argument("nn: class weights must be finite and >= 0");
  Eigen::RowVectorXd lse;
  Eigen::MatrixXd P = softmax(F, lse);
  double L = 0.0, W = 0.0;  // Σ_s w_{y_s} ℓ_s and Σ_s w_{y_s}
  for (Eigen::Index s = 0; s < F.cols(); ++s) {
    const int y = batch.labels[static_cast<std::size_t>(s)];
    const double w = class_weights(y);
    L += w * (lse(s) - F(y, s));
    W += w;
    P(y, s) -= 1.0;
    P.col(s) *= w;
  }
  if (!(W > 0)) throw std::invalid_argument("nn: the batch's labels all have class weight 0");
  if (dF) *dF = P / W;
  return L / W;
}

Eigen::MatrixXd loss_hessian_product(LossKind kind, const Eigen::MatrixXd& F, const Eigen::MatrixXd& RF,
                                     const Batch& batch) {
  check(kind, F, batch);
  const double B = static_cast<double>(F.cols());
  if (kind == LossKind::cross_entropy) {
    Eigen::RowVectorXd lse;
    const Eigen::MatrixXd P = softmax(F, lse);
    const Eigen::RowVectorXd pr = (P.array() * RF.array()).colwise().sum();  // πᵀR{F} per column
    return ((P.array() * RF.array()) - (P.array().rowwise() * pr.array())).matrix() / B;
  }
  if (kind == LossKind::token_cross_entropy) {
    const auto positions = unmasked(batch);
    Eigen::RowVectorXd lse;
    const Eigen::MatrixXd P = softmax(F, lse);
    Eigen::MatrixXd H = Eigen::MatrixXd::Zero(F.rows(), F.cols());
    for (const auto& [j, y] : positions) H.col(j) = (P.col(j).array() * RF.col(j).array()).matrix() - P.col(j) * P.col(j).dot(RF.col(j));
    return H / static_cast<double>(positions.size());
  }
  return 2.0 / (B * static_cast<double>(F.rows())) * RF;
}

LossKind parse_loss(const std::string& name) {
  if (name == "cross_entropy") return LossKind::cross_entropy;
  if (name == "mse") return LossKind::mse;
  if (name == "token_cross_entropy") return LossKind::token_cross_entropy;
  throw std::invalid_argument("nn: unknown loss '" + name + "' (cross_entropy|mse|token_cross_entropy)");
}

const char* to_string(LossKind kind) noexcept {
  return kind == LossKind::cross_entropy ? "cross_entropy" : kind == LossKind::mse ? "mse" : "token_cross_entropy";
}

}  // namespace sparseact::nn
