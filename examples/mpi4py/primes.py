#!/usr/bin/env python3
"""Hataori's Pmap called from Python through mpi4py.

Run on every rank of an Open MPI job, with the library built from this
directory (see README.md):

    MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI mpirun -n 2 python3 primes.py ./libprimes.so

mpi4py initialises MPI. The script duplicates COMM_WORLD, passes the
duplicate's handle to the library, whose PrimesBelow runs hataori.Pmap over
the root's limits on every rank, and prints on rank 0 the counts it got
back. Then it shows an error: a negative limit fails the Pmap on every rank
with the same message. The job exits 0 only if every check passed.
"""

import ctypes
import sys

import mpi4py

# Hataori's collective calls need MPI_THREAD_FUNNELED (a domain's workers
# run the callbacks while the calling thread makes the MPI calls), and every
# call into the library comes from this, the main, thread.
mpi4py.rc.thread_level = "funneled"
from mpi4py import MPI  # noqa: E402  (initialises MPI)

# The number of primes below 10, 100, ..., 10**7.
KNOWN = {10: 4, 100: 25, 1000: 168, 10**4: 1229, 10**5: 9592, 10**6: 78498, 10**7: 664579}


def handle_of(comm):
    """The communicator's handle (mpi4py 4: comm.handle; 3.x: MPI._handleof)."""
    h = getattr(comm, "handle", None)
    return h if isinstance(h, int) else MPI._handleof(comm)


def load(path):
    lib = ctypes.CDLL(path)
    ll = ctypes.POINTER(ctypes.c_longlong)
    lib.PrimesBelow.argtypes = [ctypes.c_size_t, ll, ll, ctypes.c_int]
    lib.PrimesBelow.restype = ctypes.c_int
    lib.LastError.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.LastError.restype = ctypes.c_int
    return lib


def primes_below(lib, comm, limits):
    """Collective: every rank calls it; only the root's limits count. Returns
    (counts on the root or None elsewhere, error message or None)."""
    n = len(limits)
    inp = (ctypes.c_longlong * n)(*limits) if n else None
    out = (ctypes.c_longlong * n)() if n else None
    if lib.PrimesBelow(handle_of(comm), inp, out, n) != 0:
        buf = ctypes.create_string_buffer(4096)
        lib.LastError(buf, len(buf))
        return None, buf.value.decode()
    return (list(out) if n else None), None


def main():
    lib = load(sys.argv[1])
    comm = MPI.COMM_WORLD.Dup()  # the script's own communicator, lent to Hataori
    rank, size = comm.Get_rank(), comm.Get_size()
    ok = MPI.Query_thread() >= MPI.THREAD_FUNNELED and MPI.Is_thread_main()

    limits = sorted(KNOWN) if rank == 0 else []
    counts, err = primes_below(lib, comm, limits)
    if err is not None:
        print(f"rank {rank}: PrimesBelow failed: {err}", file=sys.stderr)
        ok = False
    elif rank == 0:
        for x, c in zip(limits, counts):
            print(f"primes below {x}: {c}")
        ok = ok and counts == [KNOWN[x] for x in limits]
        print(f"{len(limits)} counts from Pmap on {size} ranks: {'as expected' if ok else 'WRONG'}")

    # A negative limit fails on whichever rank runs it; every rank gets the
    # same error back.
    _, err = primes_below(lib, comm, [100, -5, 1000] if rank == 0 else [])
    same = len(set(comm.allgather(err))) == 1
    ok = ok and err is not None and same
    if rank == 0:
        print(f"error on every rank{'' if same else ' (DIFFERENT!)'}: {err}")

    ok = comm.allreduce(ok, op=MPI.LAND)
    comm.Free()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
