// cluster.hpp on OpenMPI (compiled when CMake found MPI; SPARSEACT_MPI).
#include <sparseact/app/cluster.hpp>

#include <list>
#include <stdexcept>

#include <fmt/format.h>
// The C API only: OpenMPI and MPICH would otherwise pull in their deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <sparseact/core/errors.hpp>

namespace sparseact::app::cluster {

namespace {

Info g_info;
bool g_started = false;

struct PendingSend {
  std::string bytes;
  MPI_Request request = MPI_REQUEST_NULL;
};
std::list<PendingSend> g_sends;  // a list: the buffers must not move while MPI holds them

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(fmt::format("MPI: {} failed (error {})", what, rc));
}

}  // namespace

bool built_with_mpi() noexcept { return true; }

void init() {
  if (g_started || !launch_env().present) return;
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    if (provided < MPI_THREAD_FUNNELED) throw std::runtime_error("MPI: the library does not offer MPI_THREAD_FUNNELED");
  }
  g_started = true;
  g_info.active = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_info.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_info.size);
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_info.rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  MPI_Comm_rank(node, &g_info.local_rank);
  MPI_Comm_size(node, &g_info.local_size);
  MPI_Comm_free(&node);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  g_info.host.assign(name, static_cast<std::size_t>(len));
}

const Info& info() { return g_info; }

void finalize() {
  if (!g_started) return;
  while (sends_pending()) {
  }
  MPI_Finalize();
  g_started = false;
  g_info.active = false;
}

std::vector<int> allgather(int value) {
  std::vector<int> all(static_cast<std::size_t>(g_info.size));
  check(MPI_Allgather(&value, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  return all;
}

int broadcast(int value) {
  check(MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return value;
}

std::string broadcast(const std::string& text) {
  long long size = static_cast<long long>(text.size());
  check(MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
  std::string out = g_info.rank == 0 ? text : std::string(static_cast<std::size_t>(size), '\0');
  if (size > 0) check(MPI_Bcast(out.data(), static_cast<int>(size), MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return out;
}

std::vector<std::string> gather_strings(const std::string& text) {
  const int n = static_cast<int>(text.size());
  std::vector<int> sizes(static_cast<std::size_t>(g_info.size)), displs(sizes.size());
  check(MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::string all;
  if (g_info.rank == 0) {
    int total = 0;
    for (std::size_t r = 0; r < sizes.size(); ++r) displs[r] = total, total += sizes[r];
    all.resize(static_cast<std::size_t>(total));
  }
  check(MPI_Gatherv(text.data(), n, MPI_CHAR, all.data(), sizes.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> out;
  if (g_info.rank == 0)
    for (std::size_t r = 0; r < sizes.size(); ++r) out.push_back(all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(sizes[r])));
  return out;
}

void post(int dest, int tag, std::string bytes) {
  if (bytes.size() > static_cast<std::size_t>(1 << 30)) throw std::runtime_error("MPI: a message over 1 GiB");
  PendingSend& s = g_sends.emplace_back();
  s.bytes = std::move(bytes);
  check(MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD, &s.request), "MPI_Isend");
}

bool receive(int& source, int& tag, std::string& bytes) {
  int flag = 0;
  MPI_Status status;
  check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
  if (!flag) return false;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  bytes.assign(static_cast<std::size_t>(count), '\0');
  source = status.MPI_SOURCE;
  tag = status.MPI_TAG;
  check(MPI_Recv(bytes.data(), count, MPI_BYTE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  return true;
}

bool sends_pending() {
  for (auto it = g_sends.begin(); it != g_sends.end();) {
    int done = 0;
    check(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    it = done ? g_sends.erase(it) : std::next(it);
  }
  return !g_sends.empty();
}

}  // namespace sparseact::app::cluster
