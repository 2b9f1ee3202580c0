#include <sparseact/lsh/sparse_vs_dense_records.hpp>

namespace sparseact::lsh {

Record outcome_record(const Outcome& o, bool with_sq_err) {
  Record r;
  r.set("test_mse", o.test_mse).set("train_mse", o.train_mse).set("ls_test_mse", o.ls_test_mse).set("ls_train_mse", o.ls_train_mse);
  r.set("test_history", o.test_history);
  if (with_sq_err) r.set("sq_err", std::vector<double>(o.sq_err.data(), o.sq_err.data() + o.sq_err.size()));
  return r;
}

Outcome outcome_from_record(const Record& r) {
  Outcome o{.test_mse = r.num("test_mse"), .train_mse = r.num("train_mse"), .ls_test_mse = r.num("ls_test_mse"),
            .ls_train_mse = r.num("ls_train_mse"), .test_history = r.arr("test_history"), .sq_err = {}};
  if (r.has("sq_err")) {
    const std::vector<double>& e = r.arr("sq_err");
    o.sq_err = Eigen::Map<const Eigen::VectorXd>(e.data(), Eigen::Index(e.size()));
  }
  return o;
}

}  // namespace sparseact::lsh
