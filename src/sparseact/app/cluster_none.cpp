// cluster.hpp without MPI (-DSPARSEACT_MPI=OFF, or no MPI found): one process, and a clear refusal
// under a launcher that started several, which would otherwise each run the whole grid.
#include <sparseact/app/cluster.hpp>

#include <stdexcept>

#include <fmt/format.h>

#include <sparseact/core/errors.hpp>

namespace sparseact::app::cluster {

namespace {
Info g_info;
}

bool built_with_mpi() noexcept { return false; }

void init() {
  const LaunchEnv env = launch_env();
  if (env.present && env.size > 1)
    throw InputError(fmt::format("this build of sparseact has no MPI, so {} processes would each run the whole grid; "
                                 "rebuild with libopenmpi-dev installed (-DSPARSEACT_MPI=ON) or run one process",
                                 env.size));
}

const Info& info() { return g_info; }
void finalize() {}
std::vector<int> allgather(int value) { return {value}; }
int broadcast(int value) { return value; }
std::string broadcast(const std::string& text) { return text; }
std::vector<std::string> gather_strings(const std::string& text) { return {text}; }
void post(int, int, std::string) { throw std::logic_error("cluster::post without MPI"); }
bool receive(int&, int&, std::string&) { return false; }
bool sends_pending() { return false; }

}  // namespace sparseact::app::cluster
