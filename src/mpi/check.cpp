#include "pgroups/mpi/check.hpp"

#include <fmt/format.h>

#include "pgroups/common/error.hpp"

namespace pgroups::mpi {

std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  // The error string functions may themselves fail for a code MPI does not know; the
  // number alone is then the best we can report.
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return fmt::format("unknown MPI error code {}", code);
  int error_class = 0;
  if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) return std::string(text, static_cast<std::size_t>(length));
  return fmt::format("{} (error class {})", std::string_view(text, static_cast<std::size_t>(length)), error_class);
}

void throw_error(int code, std::string_view call) {
  throw BackendError(fmt::format("{} failed: {}", call, error_string(code)));
}

}  // namespace pgroups::mpi
