// The GPU path's contracts that need no GPU (docs/DESIGN.md, Devices): the order of the batched COMET
// forward's output, the CPU twin every GPU path records, and what an analysis does when the twin
// disagrees. The GPU is played by the CPU stand-in (cuda/standin.hpp), faithful or with injected faults.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include <sparseact/app/gpu_twin.hpp>
#include <sparseact/core/device.hpp>
#include <sparseact/core/twin.hpp>
#include <sparseact/cuda/comet_forward.hpp>
#include <sparseact/cuda/standin.hpp>
#include <sparseact/lsh/hash.hpp>
#include <sparseact/lsh/targets.hpp>
#include <sparseact/routing/comet_batch.hpp>
#include <sparseact/spectral/init.hpp>
#include <sparseact/spectral/spectrum.hpp>

#include "support.hpp"

using namespace sparseact;
using nlohmann::json;

namespace {

/// The stand-in in `mode` for one test case, and a fresh twin log; both undone on exit.
struct StandinScope {
  explicit StandinScope(cuda::Standin mode) {
    cuda::use_standin(mode);
    twin::reset();
  }
  ~StandinScope() {
    cuda::use_standin(cuda::Standin::off);
    twin::reset();
  }
};

std::map<std::string, twin::Agreement> by_path(const std::vector<twin::Agreement>& records) {
  std::map<std::string, twin::Agreement> m;
  for (const twin::Agreement& r : records) m[r.path] = r;
  return m;
}

std::vector<routing::CometNet> small_nets(int count) {
  std::vector<routing::CometNet> nets;
  for (int b = 0; b < count; ++b)
    nets.push_back(routing::make_comet_net({.widths = {12, 40, 24, 32, 3}, .f = nn::PlainActivation::relu, .biases = true}, 7, std::uint64_t(b)));
  return nets;
}

}  // namespace

TEST_CASE("CometGpuOutput: written layer after layer as the module does, read net after net as the consumer does", "[gpu_twin][layout]") {
  // Unequal widths, several nets and layers: a value names its (net, layer), so any other order shows.
  const std::vector<int> widths = {5, 7, 3, 4, 2};
  const int nets = 3, hidden = int(widths.size()) - 2;
  cuda::CometGpuOutput out(nets, hidden, true);
  for (int l = 1; l <= hidden; ++l)  // the module's loop: per layer, every net
    for (int b = 0; b < nets; ++b) {
      out.mask(b, l) = Eigen::MatrixXd::Constant(widths[std::size_t(l)], 6, 10.0 * b + l);
      out.x(b, l) = Eigen::MatrixXd::Constant(widths[std::size_t(l)], 6, -(10.0 * b + l));
    }
  for (int b = 0; b < nets; ++b) out.output(b) = Eigen::MatrixXd::Constant(widths.back(), 6, 100.0 + b);
  for (int b = 0; b < nets; ++b) {  // the consumer's loop: per net, every layer
    const std::vector<Eigen::MatrixXd> masks = out.masks_of(b);
    REQUIRE(int(masks.size()) == hidden);
    for (int l = 1; l <= hidden; ++l) {
      CAPTURE(b, l);
      REQUIRE(out.mask(b, l).rows() == widths[std::size_t(l)]);
      CHECK((out.mask(b, l).array() == 10.0 * b + l).all());
      CHECK((out.x(b, l).array() == -(10.0 * b + l)).all());
      CHECK((masks[std::size_t(l - 1)].array() == 10.0 * b + l).all());
    }
    CHECK((out.output(b).array() == 100.0 + b).all());
  }
  // The flat order itself: net after net (what any code that serialises the output may rely on).
  CHECK(out.at(0, 1) == 0);
  CHECK(out.at(0, hidden) == std::size_t(hidden - 1));
  CHECK(out.at(1, 1) == std::size_t(hidden));
  CHECK(out.at(nets - 1, hidden) == std::size_t(nets * hidden - 1));
  CHECK_THROWS_AS(out.at(nets, 1), std::out_of_range);
  CHECK_THROWS_AS(out.at(0, 0), std::out_of_range);
  CHECK_THROWS_AS(out.at(0, hidden + 1), std::out_of_range);
  const cuda::CometGpuOutput routing_only(2, 2, false);  // no backbone: no x, no output
  CHECK_THROWS_AS(routing_only.x(0, 1), std::out_of_range);
  CHECK_THROWS_AS(routing_only.output(0), std::out_of_range);
}

TEST_CASE("Every GPU path records a CPU twin that agrees on the faithful stand-in", "[gpu_twin][standin]") {
  const StandinScope scope(cuda::Standin::exact);
  REQUIRE(cuda_device_present());
  REQUIRE(resolve_device("cuda") == Device::cuda);
  // Spectra: a batch of two shapes' worth; the twin takes the smallest matrix.
  std::vector<Eigen::MatrixXd> Ks;
  for (int t = 0; t < 3; ++t) Ks.push_back(spectral::init_weights(90, 30, spectral::Init::kaiming, Distribution::uniform, 5, t));
  const auto spectra = spectral::kkt_spectra(Ks, Device::cuda);
  REQUIRE(spectra.size() == 3);
  // LSH codes, both families.
  const Eigen::MatrixXd X = Eigen::MatrixXd::Random(16, 5000);
  const lsh::EuclideanLsh e = lsh::make_euclidean_lsh(16, 8, 0.5, 3);
  const lsh::HyperplaneLsh h = lsh::make_hyperplane_lsh(16, 3, 10, 0.1, 3);
  CHECK(lsh::hash(e, X, Device::cuda) == lsh::hash(e, X, Device::cpu));
  CHECK(lsh::hash(h, X, Device::cuda) == lsh::hash(h, X, Device::cpu));
  // COMET: several nets at once, and the router alone.
  const std::vector<routing::CometNet> nets = small_nets(3);
  const std::vector<const routing::CometNet*> ptrs = {&nets[0], &nets[1], &nets[2]};
  const Eigen::MatrixXd X0 = routing::paper002_pair_inputs(30, 12, 4);
  routing::comet_forward_batch(ptrs, X0, 0.25, 1, Device::cuda);
  routing::comet_masks_gpu(nets[1].router, X0, 0.25);
  // A second call of each path adds no record: the twin runs once per process and path, a spectrum's on
  // the run's smallest matrix.
  spectral::kkt_spectra({spectral::init_weights(40, 12, spectral::Init::kaiming, Distribution::uniform, 5, 9)}, Device::cuda);
  spectral::kkt_spectra(Ks, Device::cuda);
  routing::comet_forward_batch(ptrs, X0, 0.5, 1, Device::cuda);

  twin::settle();  // the spectrum's twin runs once the work is done, on the run's smallest matrix
  const auto m = by_path(twin::recorded());
  CHECK(twin::recorded().size() == 6);
  for (const char* path : {"spectral.kkt_spectra", "lsh.euclidean_codes", "lsh.sign_codes", "routing.comet_forward masks",
                           "routing.comet_forward activations", "routing.comet_masks"}) {
    CAPTURE(path);
    REQUIRE(m.count(path) == 1);
    const twin::Agreement& a = m.at(path);
    CHECK(a.agrees());
    CHECK(a.cpu_s >= 0);
    CHECK_FALSE(a.slice.empty());
  }
  CHECK(m.at("spectral.kkt_spectra").tolerance == 1e-10);
  CHECK(m.at("spectral.kkt_spectra").slice.find("40 × 12") != std::string::npos);
  CHECK(m.at("routing.comet_forward activations").tolerance == 1e-12);
  CHECK(m.at("routing.comet_forward masks").tolerance == 0);
  CHECK(m.at("lsh.euclidean_codes").slice.find("4096 of 5000") != std::string::npos);  // a slice, not the whole batch
}

TEST_CASE("A faulty GPU is caught by every path's twin", "[gpu_twin][standin]") {
  const StandinScope scope(cuda::Standin::fault);
  std::vector<Eigen::MatrixXd> Ks = {spectral::init_weights(60, 20, spectral::Init::kaiming, Distribution::uniform, 5, 0)};
  spectral::kkt_spectra(Ks, Device::cuda);
  const Eigen::MatrixXd X = Eigen::MatrixXd::Random(16, 200);
  lsh::hash(lsh::make_euclidean_lsh(16, 8, 0.5, 3), X, Device::cuda);
  lsh::hash(lsh::make_hyperplane_lsh(16, 3, 10, 0.1, 3), X, Device::cuda);
  const std::vector<routing::CometNet> nets = small_nets(2);
  const Eigen::MatrixXd X0 = routing::paper002_pair_inputs(10, 12, 4);
  routing::comet_forward_batch({&nets[0], &nets[1]}, X0, 0.25, 1, Device::cuda);
  routing::comet_masks_gpu(nets[0].router, X0, 0.25);
  twin::settle();
  const auto m = by_path(twin::recorded());
  REQUIRE(m.size() == 6);
  for (const auto& [path, a] : m) {
    CAPTURE(path, a.error, a.tolerance);
    CHECK_FALSE(a.agrees());
  }
  CHECK(m.at("spectral.kkt_spectra").error == Approx(1e-6).epsilon(1e-3));  // λ_max off by 1e-6 relative
  CHECK(m.at("lsh.euclidean_codes").error == 1);
  CHECK(m.at("routing.comet_masks").error == 3);  // one flipped entry in each of its three hidden layers
}

TEST_CASE("Twin records: a NaN never agrees, and the records survive the trip between MPI ranks", "[gpu_twin]") {
  const double a[] = {1, 2, 3}, b[] = {1, std::nan(""), 3}, c[] = {1, 2.5, 3};
  CHECK(std::isnan(twin::max_abs_difference(a, b, 3)));
  CHECK(twin::max_abs_difference(a, c, 3) == 0.5);
  twin::Agreement nan_record{.path = "p", .slice = "s", .rule = twin::Rule::relative, .error = std::nan(""), .tolerance = 1e-12};
  CHECK_FALSE(nan_record.agrees());
  const std::vector<twin::Agreement> records = {
      nan_record, {.path = "q", .slice = "t", .rule = twin::Rule::identical, .error = 0, .tolerance = 0, .cpu_s = 0.25}};
  const std::vector<twin::Agreement> back = app::twin_records_from_text(app::twin_records_to_text(records), 3);
  REQUIRE(back.size() == 2);
  CHECK(std::isnan(back[0].error));
  CHECK_FALSE(back[0].agrees());
  CHECK(back[1].agrees());
  CHECK(back[1].rule == twin::Rule::identical);
  CHECK(back[1].cpu_s == 0.25);
  CHECK(back[1].rank == 3);
}

namespace {

using namespace test_support;

/// `name` with its tiny flags on --device cpu, then on the stand-in with --device cuda in `mode`.
struct TwinRuns {
  Run cpu, gpu;
  json cpu_json, gpu_json;
};

TwinRuns run_both(const AnalysisUnderTest& a, const char* mode) {
  TwinRuns t;
  const fs::path cpu_out = fresh_dir(std::string("twin_cpu_") + mode + "_" + a.name), gpu_out = fresh_dir(std::string("twin_") + mode + "_" + a.name);
  t.cpu = run(std::string(a.name) + " " + a.tiny + " --device cpu --out " + cpu_out.string());
  t.gpu = run_shell(std::string("SPARSEACT_CUDA_STANDIN=") + mode + " " + SPARSEACT_BIN_DIR + "/" + a.name + " " + a.tiny +
                    " --device cuda --out " + gpu_out.string());
  if (fs::exists(cpu_out / (std::string(a.name) + ".json"))) t.cpu_json = read_json(cpu_out / (std::string(a.name) + ".json"));
  if (fs::exists(gpu_out / (std::string(a.name) + ".json"))) t.gpu_json = read_json(gpu_out / (std::string(a.name) + ".json"));
  return t;
}

std::vector<json> twin_checks(const json& j) {
  std::vector<json> out;
  for (const json& c : j["checks"])
    if (c["id"].get<std::string>().rfind("gpu_twin_", 0) == 0) out.push_back(c);
  return out;
}

}  // namespace

TEST_CASE("Every analysis with a GPU path records its twin as self-checks, and keeps the CPU's verdicts", "[gpu_twin][standin][analysis]") {
  for (const AnalysisUnderTest& a : kAnalyses) {
    if (!a.gpu_path) continue;
    DYNAMIC_SECTION(a.name) {
      const TwinRuns t = run_both(a, "exact");
      INFO(t.gpu.output);
      REQUIRE(t.gpu.code == t.cpu.code);  // 0, 3 or 4 as on the CPU: the twin agrees
      require_contract_fields(t.gpu_json, a.name);
      CHECK(t.gpu_json["device"] == "cuda");
      CHECK(t.gpu_json["environment"]["gpu"].get<std::string>().find("stand-in") != std::string::npos);
      const std::vector<json> twins = twin_checks(t.gpu_json);
      REQUIRE_FALSE(twins.empty());
      for (const json& c : twins) {
        INFO(c.dump());
        CHECK(c["kind"] == "self-check");
        CHECK(c["verdict"] == "holds");
      }
      const json& cost = t.gpu_json["data"]["gpu_twin"];
      CHECK(cost["comparisons"] == twins.size());
      CHECK(cost["cpu_s"].get<double>() <= t.gpu_json["elapsed_s"].get<double>());
      CHECK(twin_checks(t.cpu_json).empty());  // a CPU run has nothing to twin
      // Every other check reaches the CPU run's verdict.
      std::map<std::string, std::string> cpu_verdicts;
      for (const json& c : t.cpu_json["checks"]) cpu_verdicts[c["id"]] = c["verdict"];
      for (const json& c : t.gpu_json["checks"]) {
        const std::string id = c["id"];
        if (id.rfind("gpu_twin_", 0) == 0) continue;
        CAPTURE(id);
        REQUIRE(cpu_verdicts.count(id) == 1);
        CHECK(cpu_verdicts[id] == c["verdict"]);
      }
    }
  }
}

TEST_CASE("A GPU that disagrees with its twin fails the run: exit 3, one line on stderr, a failing self-check", "[gpu_twin][standin][analysis]") {
  for (const AnalysisUnderTest& a : kAnalyses) {
    if (!a.gpu_path) continue;
    DYNAMIC_SECTION(a.name) {
      const TwinRuns t = run_both(a, "fault");
      INFO(t.gpu.output);
      CHECK(t.gpu.code == 3);
      CHECK(t.gpu.output.find("disagrees with its CPU twin") != std::string::npos);
      REQUIRE(t.gpu_json.is_object());
      bool failing = false;
      for (const json& c : twin_checks(t.gpu_json)) failing = failing || c["verdict"] == "fails";
      CHECK(failing);
    }
  }
}
