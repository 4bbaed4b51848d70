#include "pgroups/nccl/mpi_bootstrap.hpp"

#include <fmt/format.h>

#include <climits>
#include <string>

#include "pgroups/error.hpp"

namespace pgroups::nccl {
namespace {

std::string mpi_error_message(std::string_view call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  return fmt::format("{} failed: MPI error {}: {}", call, code,
                     length > 0 ? std::string_view(text, static_cast<std::size_t>(length)) : "unknown error");
}

}  // namespace

Broadcast mpi_broadcast(MPI_Comm comm) {
  return [comm](std::span<std::byte> bytes) {
    if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
      throw ConfigError(fmt::format("cannot broadcast {} bytes with one MPI_Bcast (max {})", bytes.size(), INT_MAX));
    }
    const int code = MPI_Bcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, comm);
    if (code != MPI_SUCCESS) throw BackendError(mpi_error_message("MPI_Bcast of the NCCL unique id", code));
  };
}

int node_local_rank(MPI_Comm node_comm) {
  int rank = 0;
  const int code = MPI_Comm_rank(node_comm, &rank);
  if (code != MPI_SUCCESS) throw BackendError(mpi_error_message("MPI_Comm_rank of the node communicator", code));
  return rank;
}

}  // namespace pgroups::nccl
