#include <sparseact/moe/certificate.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include <sparseact/moe/super_expressive.hpp>

namespace sparseact::moe {

using json = nlohmann::json;

namespace {

std::vector<Rational> exact(const Eigen::VectorXd& v) {
  std::vector<Rational> out;
  for (Eigen::Index i = 0; i < v.size(); ++i) out.emplace_back(v(i));
  return out;
}

std::vector<Rational> features(const NetCertificate& c, const std::vector<Rational>& x) {
  switch (c.phi) {
    case FeatureMap::identity: return x;
    case FeatureMap::powers: {
      std::vector<Rational> f;
      Rational p = 1;
      for (int j = 0; j < c.degree; ++j) f.push_back(p *= x.at(0));
      return f;
    }
    case FeatureMap::ball_lift: {
      std::vector<Rational> f = x;
      Rational s = 0;
      for (const Rational& v : x) s += v * v;
      f.push_back(s);
      return f;
    }
  }
  return x;
}

RationalLayer affine(const Eigen::VectorXd& w, double b) { return {{exact(w)}, {Rational(b)}, {}}; }

std::string to_text(const Rational& r) { return r.str(); }

}  // namespace

// --- Evaluation: eq. (5), eq. (2), eq. (3) in rationals ---------------------------------------------------------

std::size_t route(const NetCertificate& c, const std::vector<Rational>& x) {
  std::size_t best = 0;
  Rational best_d = -1;
  for (std::size_t l = 0; l < c.prototypes.size(); ++l) {
    if (c.prototypes[l].size() != x.size()) throw std::invalid_argument("certificate: a prototype's dimension differs from the input's");
    Rational d = 0;
    for (std::size_t i = 0; i < x.size(); ++i) d += (x[i] - c.prototypes[l][i]) * (x[i] - c.prototypes[l][i]);
    if (l == 0 || d < best_d) best = l, best_d = d;  // strict: the lowest index keeps a tie
  }
  return best;
}

Rational evaluate(const NetCertificate& c, std::size_t expert, const std::vector<Rational>& x) {
  std::vector<Rational> h = features(c, x);
  for (const RationalLayer& layer : c.experts.at(expert)) {
    if (layer.b.size() != layer.A.size() || (!layer.gamma.empty() && layer.gamma.size() != layer.A.size()))
      throw std::invalid_argument("certificate: a layer's A, b and γ disagree in size");
    std::vector<Rational> z(layer.A.size());
    for (std::size_t r = 0; r < layer.A.size(); ++r) {
      if (layer.A[r].size() != h.size()) throw std::invalid_argument("certificate: a layer's width does not match its input");
      z[r] = layer.b[r];
      for (std::size_t k = 0; k < h.size(); ++k) z[r] += layer.A[r][k] * h[k];
      if (layer.gamma.empty()) continue;  // the affine output
      if (c.activation == Activation::sigma_star) z[r] = layer.gamma[r] * z[r] + (1 - layer.gamma[r]) * sigma_star(z[r]);  // eq. (9)
      else if (z[r] < 0) z[r] *= layer.gamma[r];  // σ_γ of Definition 3.1
    }
    h = std::move(z);
  }
  if (h.size() != 1) throw std::invalid_argument("certificate: an expert must end in one output");
  return h[0];
}

std::string verify(const NetCertificate& c, const CertificateClass& cls, const Eigen::MatrixXd& X, const std::vector<int>& labels) {
  const std::size_t cells = std::max<std::size_t>(1, c.prototypes.size());
  if (c.experts.size() != cells) return fmt::format("{} experts for {} cells", c.experts.size(), cells);
  if (int(cells) > cls.max_cells) return fmt::format("{} cells, the class allows {}", cells, cls.max_cells);
  for (std::size_t l = 0; l < c.prototypes.size(); ++l)
    for (std::size_t k = 0; k < l; ++k)
      if (c.prototypes[l] == c.prototypes[k]) return "two prototypes coincide (Definition 3.2 needs distinct ones)";
  for (const auto& layers : c.experts) {
    if (int(layers.size()) != cls.depth + 1) return fmt::format("an expert of depth {}, the class has {}", int(layers.size()) - 1, cls.depth);
    for (std::size_t j = 0; j < layers.size(); ++j) {
      const bool hidden = j + 1 < layers.size();
      if (hidden != !layers[j].gamma.empty()) return "γ on the output layer or missing on a hidden one";
      if (hidden && cls.max_width > 0 && int(layers[j].A.size()) > cls.max_width)
        return fmt::format("a hidden layer of width {}, the class allows {}", layers[j].A.size(), cls.max_width);
      if (cls.relu)
        for (const Rational& g : layers[j].gamma)
          if (g != 0) return "γ ≠ 0 in a ReLU class";
    }
    if (cls.bias_free && layers.back().b.at(0) != 0) return "b ≠ 0 in a homogeneous class";
    if (cls.last_nonpositive && !layers.back().A.at(0).empty() && layers.back().A[0].back() > 0) return "the last feature weight is positive";
  }
  if (labels.size() != std::size_t(X.cols())) return "labels and points differ in number";
  for (Eigen::Index i = 0; i < X.cols(); ++i) {
    const std::vector<Rational> x = exact(X.col(i));
    const std::size_t cell = c.prototypes.empty() ? 0 : route(c, x);
    const Rational f = evaluate(c, cell, x);
    if ((f > 0) != (labels[std::size_t(i)] == 1)) return fmt::format("point {}: label {}, f = {}", i, labels[std::size_t(i)], to_text(f));
  }
  return "";
}

// --- From the engines' answers ---------------------------------------------------------------------------------

NetCertificate certificate_of(const FeatureClass& fc, const Certificate& cert) {
  NetCertificate c;
  c.phi = fc.kind == FixedClass::ball ? FeatureMap::ball_lift : (fc.kind == FixedClass::interval || fc.kind == FixedClass::poly) ? FeatureMap::powers
                                                                                                                                : FeatureMap::identity;
  c.degree = fc.kind == FixedClass::interval ? 2 : fc.kind == FixedClass::poly ? fc.k : 1;
  if (fc.kind == FixedClass::pwaffine)
    for (Eigen::Index l = 0; l < fc.prototypes.cols(); ++l) c.prototypes.push_back(exact(fc.prototypes.col(l)));
  for (std::size_t l = 0; l < cert.w.size(); ++l) {
    const bool empty_cell = cert.w[l].size() == 0;  // no points: any expert will do, take f = 0
    const Eigen::VectorXd w = empty_cell ? Eigen::VectorXd::Zero(fc.kind == FixedClass::pwaffine ? fc.prototypes.rows() : fc.n) : cert.w[l];
    c.experts.push_back({affine(w, empty_cell ? 0.0 : cert.b[l])});
  }
  return c;
}

CertificateClass class_of(const FeatureClass& fc) {
  return {.max_cells = int(std::max<Eigen::Index>(1, fc.prototypes.cols())), .depth = 0, .max_width = 0, .relu = false,
          .bias_free = fc.kind == FixedClass::homhalfspace, .last_nonpositive = fc.kind == FixedClass::interval || fc.kind == FixedClass::ball};
}

NetCertificate certificate_of(const SearchSpec& s, const MomlpFit& fit) {
  // ReLU unit w: (dir_w (x − t_w))₊ is σ₀(A x + b) with A = dir_w, b = −dir_w t_w; the output weights are δ_w.
  // PReLU (dir = +1): σ_γ(x − t) = (1 − γ)(x − t)₊ + γ(x − t). Unit 1 carries the linear part s₀x: with output
  // weight c₁ = δ₁ + s₀ and γ₁ = s₀/c₁ it contributes δ₁(x − t₁)₊ + s₀(x − t₁); if c₁ = 0 but s₀ ≠ 0, the mirrored
  // unit σ_γ(t₁ − x) with weight −s₀ and γ₁ = 1 + δ₁/s₀ gives the same. The other units take γ = 0, c_w = δ_w.
  // The output bias absorbs the constants: b = β + s₀t₁.
  const bool relu = s.kind == SearchClass::relu || s.kind == SearchClass::momlp_relu;
  NetCertificate c;
  if (fit.prototypes.size() > 1)
    for (double p : fit.prototypes) c.prototypes.push_back({Rational(p)});
  for (const ExpertFit& e : fit.experts) {
    RationalLayer hidden, out;
    out.A.emplace_back();
    Rational bias = e.beta;
    for (std::size_t w = 0; w < e.kinks.size(); ++w) {
      const Rational dir = e.dir.empty() ? 1 : e.dir[w], t = e.kinks[w], delta = e.delta[w];
      Rational a = dir, gamma = 0, weight = delta;
      if (!relu && w == 0 && e.s0 != 0) {
        const Rational s0 = e.s0;
        if (delta + s0 != 0) {
          weight = delta + s0, gamma = s0 / weight, bias += s0 * t;
        } else {
          a = -1, weight = -s0, gamma = 1 + delta / s0, bias += s0 * t;  // σ_γ(t − x)
        }
      }
      hidden.A.push_back({a}), hidden.b.push_back(-a * t), hidden.gamma.push_back(gamma), out.A[0].push_back(weight);
    }
    if (e.kinks.empty()) {  // no kink: one identity (PReLU, γ = 1) or silent (ReLU) unit keeps eq. (2)'s J = 1 shape
      hidden.A.push_back({relu ? 0 : 1}), hidden.b.push_back(0), hidden.gamma.push_back(relu ? 0 : 1), out.A[0].push_back(relu ? 0 : Rational(e.s0));
    }
    out.b.push_back(bias);
    c.experts.push_back({hidden, out});
  }
  return c;
}

CertificateClass class_of(const SearchSpec& s) {
  const bool mixture = s.kind == SearchClass::momlp || s.kind == SearchClass::momlp_relu;
  return {.max_cells = mixture ? s.L : 1, .depth = 1, .max_width = s.W, .relu = s.kind == SearchClass::relu || s.kind == SearchClass::momlp_relu};
}

NetCertificate super_expressive_certificate(const std::vector<int>& labels) {
  NetCertificate c;
  c.activation = Activation::sigma_star;
  c.experts = {{RationalLayer{{{super_expressive_weight(labels)}}, {0}, {0}}, RationalLayer{{{1}}, {-1}, {}}}};
  return c;
}

Eigen::MatrixXd dyadic_points(int k) {
  Eigen::MatrixXd X(1, k);
  for (int i = 0; i < k; ++i) X(0, i) = std::ldexp(1.0, -(i + 1));
  return X;
}

// --- Certificate sets ------------------------------------------------------------------------------------------

namespace {

json points_json(const Eigen::MatrixXd& X) {
  json pts = json::array();
  for (Eigen::Index i = 0; i < X.cols(); ++i) {
    json p = json::array();
    for (Eigen::Index k = 0; k < X.rows(); ++k) p.push_back(X(k, i));  // doubles, exactly
    pts.push_back(p);
  }
  return pts;
}

}  // namespace

CertificateSet certify_shattered(const FeatureClass& c, const Eigen::MatrixXd& X, const Growth& g) {
  const Eigen::MatrixXd S = X.leftCols(g.vc_found);
  CertificateSet out;
  json labelings = json::array();
  for (const auto& [labels, cert] : g.shattered) {
    const NetCertificate nc = certificate_of(c, cert);
    ++out.total, out.verified += verify(nc, class_of(c), S, labels).empty();
    labelings.push_back({{"labels", labels}, {"certificate", to_json(nc)}});
  }
  out.json = {{"class", to_string(c.kind)}, {"points", points_json(S)}, {"labelings", labelings}};
  return out;
}

CertificateSet certify_shattered(const SearchSpec& s, std::vector<double> points, int m) {
  points.resize(std::size_t(m));
  std::sort(points.begin(), points.end());
  Eigen::MatrixXd S(1, m);
  for (int i = 0; i < m; ++i) S(0, i) = points[std::size_t(i)];
  CertificateSet out;
  json labelings = json::array();
  for (long bits = 0; bits < (1L << m); ++bits) {
    std::vector<int> y(std::size_t(m), 0);
    for (int i = 0; i < m; ++i) y[std::size_t(i)] = int((bits >> i) & 1);
    ++out.total;
    const auto fit = fit_class(s, points, y);
    if (!fit) continue;
    const NetCertificate nc = certificate_of(s, *fit);
    out.verified += verify(nc, class_of(s), S, y).empty();
    labelings.push_back({{"labels", y}, {"certificate", to_json(nc)}});
  }
  out.json = {{"class", to_string(s.kind)}, {"W", s.W}, {"L", s.L}, {"points", points_json(S)}, {"labelings", labelings}};
  return out;
}

// --- JSON ------------------------------------------------------------------------------------------------------

json rational_json(const Rational& r) {
  const double d = r.convert_to<double>();
  if (std::isfinite(d) && Rational(d) == r) return d;
  return to_text(r);
}

Rational rational_from_json(const json& j) {
  if (j.is_number()) return Rational(j.get<double>());
  if (j.is_string()) {
    try {
      return Rational(j.get<std::string>());
    } catch (const std::exception&) {
    }
  }
  throw std::invalid_argument("certificate: an entry is neither a number nor a \"p/q\" string: " + j.dump());
}

namespace {

json vector_json(const std::vector<Rational>& v) {
  json a = json::array();
  for (const Rational& r : v) a.push_back(rational_json(r));
  return a;
}

std::vector<Rational> vector_from(const json& j) {
  if (!j.is_array()) throw std::invalid_argument("certificate: expected an array, got " + j.dump());
  std::vector<Rational> v;
  for (const json& e : j) v.push_back(rational_from_json(e));
  return v;
}

const char* to_string(FeatureMap f) { return f == FeatureMap::identity ? "x" : f == FeatureMap::powers ? "powers" : "ball_lift"; }

}  // namespace

json to_json(const NetCertificate& c) {
  json experts = json::array();
  for (const auto& layers : c.experts) {
    json ls = json::array();
    for (const RationalLayer& l : layers) {
      json A = json::array();
      for (const auto& row : l.A) A.push_back(vector_json(row));
      json layer = {{"A", A}, {"b", vector_json(l.b)}};
      if (!l.gamma.empty()) layer["gamma"] = vector_json(l.gamma);
      ls.push_back(layer);
    }
    experts.push_back(ls);
  }
  json protos = json::array();
  for (const auto& p : c.prototypes) protos.push_back(vector_json(p));
  json j = {{"activation", c.activation == Activation::prelu ? "prelu" : "sigma_star"}, {"phi", to_string(c.phi)}, {"prototypes", protos},
            {"experts", experts}};
  if (c.phi == FeatureMap::powers) j["degree"] = c.degree;
  return j;
}

NetCertificate certificate_from_json(const json& j) {
  if (!j.is_object() || !j.contains("experts") || !j.contains("phi")) throw std::invalid_argument("certificate: needs phi and experts");
  NetCertificate c;
  const std::string phi = j["phi"].get<std::string>();
  if (phi == "x") c.phi = FeatureMap::identity;
  else if (phi == "powers") c.phi = FeatureMap::powers, c.degree = j.at("degree").get<int>();
  else if (phi == "ball_lift") c.phi = FeatureMap::ball_lift;
  else throw std::invalid_argument("certificate: unknown phi '" + phi + "'");
  const std::string act = j.value("activation", std::string("prelu"));
  if (act == "sigma_star") c.activation = Activation::sigma_star;
  else if (act != "prelu") throw std::invalid_argument("certificate: unknown activation '" + act + "'");
  for (const json& p : j.value("prototypes", json::array())) c.prototypes.push_back(vector_from(p));
  for (const json& layers : j["experts"]) {
    std::vector<RationalLayer> ls;
    for (const json& l : layers) {
      RationalLayer layer;
      for (const json& row : l.at("A")) layer.A.push_back(vector_from(row));
      layer.b = vector_from(l.at("b"));
      if (l.contains("gamma")) layer.gamma = vector_from(l["gamma"]);
      ls.push_back(std::move(layer));
    }
    c.experts.push_back(std::move(ls));
  }
  return c;
}

}  // namespace sparseact::moe
