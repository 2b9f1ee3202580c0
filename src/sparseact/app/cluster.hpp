#pragma once
// The few MPI operations a sweep needs, behind a header without mpi.h (docs/DESIGN.md, "Sweeps on many
// machines"): MPI moves the bytes, app/sweep decides what moves. cluster_mpi.cpp implements them
// with OpenMPI when the build found MPI; cluster_none.cpp otherwise, refusing to run a grid twice
// under `mpirun -n 2`.
//
// A plain run never touches MPI: init() starts it only when a launcher's environment is present
// (OpenMPI's OMPI_COMM_WORLD_*, PMIx's PMIX_RANK, PMI's PMI_RANK). All MPI calls come from the
// thread that called init() (MPI_THREAD_FUNNELED); compute threads never call MPI.
#include <string>
#include <vector>

namespace sparseact::app::cluster {

/// Rank and size as the launcher's environment states them (before MPI starts); {false, 0, 1}
/// without a launcher.
struct LaunchEnv {
  bool present = false;
  int rank = 0;
  int size = 1;
};
LaunchEnv launch_env();

/// Whether this build links MPI.
bool built_with_mpi() noexcept;

struct Info {
  bool active = false;  ///< MPI started (under a launcher)
  int rank = 0, size = 1;
  int local_rank = 0, local_size = 1;  ///< within the node (MPI_COMM_TYPE_SHARED)
  std::string host;
};

/// Starts MPI under a launcher. Throws InputError when the launcher asks for more than one
/// process and this build has no MPI. Idempotent.
void init();
const Info& info();
/// Ends MPI (a no-op when it was not started).
void finalize();

// Collectives over every rank (MPI_COMM_WORLD).
std::vector<int> allgather(int value);
int broadcast(int value);
std::string broadcast(const std::string& text);
std::vector<std::string> gather_strings(const std::string& text);  ///< on rank 0: one per rank

// Point to point, non-blocking for the caller: post() keeps the buffer until the send completes.
void post(int dest, int tag, std::string bytes);
/// One pending message if any (source, tag and its bytes); false when none has arrived.
bool receive(int& source, int& tag, std::string& bytes);
/// Completes what it can of the posted sends; true while some are still in flight.
bool sends_pending();

}  // namespace sparseact::app::cluster
