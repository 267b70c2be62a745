/* mpi5.c: mimics an MPI-5 standard-ABI library (libmpi_abi.so), which
 * exports MPI_Abi_get_version and ordinary MPI_* names but no MPIABI_*
 * symbols. Built by mpiabi's loader tests; never called. */
int MPI_Abi_get_version(int *major, int *minor) { *major = 1; *minor = 0; return 0; }
