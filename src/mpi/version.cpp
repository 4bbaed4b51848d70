#include "pgroups/mpi/version.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <fmt/format.h>

#include <string_view>

#include "pgroups/mpi/check.hpp"

namespace pgroups::mpi {

bool has_ulfm() noexcept {
#if (defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI) || defined(MPIX_ERR_PROC_FAILED)
  return true;
#else
  return false;
#endif
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  check(MPI_Get_library_version(text, &length), "MPI_Get_library_version");
  // Some libraries (MPICH) describe their whole configuration over many lines; the first
  // names the library and its version.
  std::string_view version(text, static_cast<std::size_t>(length));
  version = version.substr(0, version.find('\n'));
  // Some also count the terminating NUL in `length`.
  constexpr std::string_view kBlank(" \t\r\n\0", 5);
  const std::size_t end = version.find_last_not_of(kBlank);
  return std::string(version.substr(0, end == std::string_view::npos ? 0 : end + 1));
}

std::string standard_version() {
  int major = 0;
  int minor = 0;
  check(MPI_Get_version(&major, &minor), "MPI_Get_version");
  return fmt::format("{}.{}", major, minor);
}

}  // namespace pgroups::mpi
