#include <sparseact/moe/shatter_record.hpp>

#include <vector>

#include <sparseact/core/rng.hpp>

namespace sparseact::moe {

namespace {

Record with_certificates(Record rec, const std::vector<long>& realized, int vc_found, const CertificateSet& certs) {
  return rec.set("realized", std::vector<double>(realized.begin(), realized.end())).set("vc_found", double(vc_found))
      .set("certificates", certs.json.dump()).set("cert_total", double(certs.total)).set("cert_verified", double(certs.verified));
}

}  // namespace

Record shatter_record(const FeatureClass& c, int m_max, bool exact, std::uint64_t seed) {
  const Eigen::MatrixXd X = class_points(c, m_max, seed);
  const Growth g = growth(c, X, m_max, exact);
  const Record counts = Record().set("lps", double(g.lps)).set("inherited", double(g.inherited)).set("unverified", double(g.unverified));
  return with_certificates(counts, g.realized, g.vc_found, certify_shattered(c, X, g));
}

Record shatter_record(const SearchSpec& s, int m_max, std::uint64_t seed, std::uint64_t stream) {
  Rng rng(seed, stream);
  std::vector<double> points(static_cast<std::size_t>(m_max));
  for (auto& v : points) v = rng.normal();
  const SearchGrowth g = search_growth(s, points, m_max);
  return with_certificates(Record(), g.realized, g.vc_found, certify_shattered(s, points, g.vc_found));
}

Record shatter_record(const NetSearchSpec& s, int input_dim, int m_max, std::uint64_t seed, std::uint64_t stream) {
  Eigen::MatrixXd X(input_dim, m_max);
  Rng rng(seed, stream);
  for (auto& v : X.reshaped()) v = rng.normal();
  const NetGrowth g = net_growth(s, X, m_max, seed);
  return with_certificates(Record(), g.realized, g.vc_found, g.certificates);
}

}  // namespace sparseact::moe
