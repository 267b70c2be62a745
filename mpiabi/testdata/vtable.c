/* vtable.c: mimics a libmpiwrapper.so from mpi_abi_wrapper, which exports
 * only mpiwrapper_get_vtable. Built by mpiabi's loader tests. */
static int table;
void *mpiwrapper_get_vtable(void) { return &table; }
