// MPI_CHECK for the files that talk to MPI directly (world.cpp, the MPI communicator).
#pragma once

// The C API only: MPI::MPI_C does not link the deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "core/errors.h"

namespace gpucal {
inline std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<size_t>(len));
}
}  // namespace gpucal

#define MPI_CHECK(call)                                                                            \
  do {                                                                                             \
    int gpucal_mpi_rc_ = (call);                                                                   \
    if (gpucal_mpi_rc_ != MPI_SUCCESS)                                                             \
      ::gpucal::throw_call_error("MPI", ::gpucal::mpi_error_text(gpucal_mpi_rc_), #call, __FILE__, __LINE__); \
  } while (0)
