// Launcher detection, shared by the MPI and the MPI-less builds.
#include <sparseact/app/cluster.hpp>

#include <cstdlib>
#include <string>

namespace sparseact::app::cluster {

namespace {
int env_int(const char* name, int fallback, bool& found) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1 << 24) return fallback;
  found = true;
  return static_cast<int>(x);
}
}  // namespace

LaunchEnv launch_env() {
  // OpenMPI's mpirun (and srun --mpi=pmix into OpenMPI), then PMIx alone, then PMI-1/2 (srun --mpi=pmi2, MPICH's hydra).
  const char* rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  const char* size_vars[] = {"OMPI_COMM_WORLD_SIZE", "OMPI_UNIVERSE_SIZE", "PMI_SIZE"};
  LaunchEnv env;
  for (const char* r : rank_vars) {
    bool found = false;
    const int rank = env_int(r, 0, found);
    if (found) {
      env.present = true;
      env.rank = rank;
      break;
    }
  }
  if (!env.present) return env;
  for (const char* s : size_vars) {
    bool found = false;
    const int size = env_int(s, 1, found);
    if (found) {
      env.size = size;
      break;
    }
  }
  if (env.size == 1) {  // PMIx alone names no size; Slurm does
    bool found = false;
    const int n = env_int("SLURM_NTASKS", 1, found);
    if (found) env.size = n;
  }
  return env;
}

}  // namespace sparseact::app::cluster
