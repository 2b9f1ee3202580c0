// The training loop is a template (train.hpp); its nn::Mlp instantiations live here, in the library.
#include <sparseact/nn/train.hpp>

namespace sparseact::nn {

template double train<MlpModel, Sgd>(MlpModel&, Eigen::VectorXd&, Sgd&, const LrSchedule&, BatchStream&,
                                     const TrainOptions&, const StepCallback&, const LogCallback&);
template double train<MlpModel, AdamW>(MlpModel&, Eigen::VectorXd&, AdamW&, const LrSchedule&, BatchStream&,
                                       const TrainOptions&, const StepCallback&, const LogCallback&);
template double train<MlpModel, RmsProp>(MlpModel&, Eigen::VectorXd&, RmsProp&, const LrSchedule&, BatchStream&,
                                         const TrainOptions&, const StepCallback&, const LogCallback&);

}  // namespace sparseact::nn
