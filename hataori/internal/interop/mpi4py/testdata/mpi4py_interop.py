#!/usr/bin/env python3
"""Hataori and mpi4py sharing one MPI in one process.

Run on every rank of an Open MPI job:

    mpirun -n N python3 mpi4py_interop.py LIBRARY N

LIBRARY is Hataori's mpi4py bridge, the C shared library built from
examples/mpi4py (go build -buildmode=c-shared). mpi4py initialises MPI; the script duplicates
a communicator, hands its handle integer to Hataori through ctypes, runs
Hataori's Pmap (MPI-only and over a local domain), Gather and Broadcast on
it, and checks the results, Hataori's error handling (a failing callback, a
call off the MPI main thread), that Hataori neither re-initialises,
finalises nor frees what mpi4py owns, and that the communicator still
carries mpi4py's own traffic afterwards.

Every rank prints "mpi4py-interop: rank R of N PASS" and the job exits 0 only
if every check passed on every rank. Exit status 77 (with a line
"mpi4py-interop: SKIP: ...") means the check cannot run here: mpi4py is not
built on Open MPI, or the job was not started with N ranks of one MPI.
"""

import ctypes
import sys
import threading
import traceback

# Return codes of the exported functions (exports.go).
OK, FAILED, USER, NOT_MAIN, REENTRANT, PREFLIGHT, ARGUMENT, NO_MPI = 0, -1, -2, -3, -4, -5, -6, -7
SKIP = 77
PREFIX = "mpi4py-interop:"


def load(path):
    """Open Hataori's library and declare the exported functions."""
    lib = ctypes.CDLL(path)
    handle, cint, cll = ctypes.c_size_t, ctypes.c_int, ctypes.c_longlong
    sigs = {
        "LastError": (cint, [ctypes.c_char_p, cint]),
        "HataoriBackend": (cint, [ctypes.c_char_p, cint]),
        "HataoriInitialized": (cint, []),
        "HataoriInitThread": (cint, [cint]),
        "HataoriFinalize": (cint, []),
        "HataoriWorldHandle": (handle, []),
        "HataoriRankSize": (cint, [handle, ctypes.POINTER(cint), ctypes.POINTER(cint)]),
        "HataoriFreeBorrowed": (cint, [handle]),
        "HataoriSquares": (cint, [handle, cint, cint, cint, ctypes.POINTER(cll), ctypes.POINTER(cint)]),
        "HataoriGather": (cint, [handle, cint, cll, ctypes.POINTER(cll), cint]),
        "HataoriBroadcast": (cint, [handle, cint, cll, ctypes.POINTER(cll)]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def text(fn):
    """Call a (buffer, length) string export and return the string."""
    buf = ctypes.create_string_buffer(4096)
    fn(buf, len(buf))
    return buf.value.decode("utf-8", "replace")


def handle_of(MPI, comm):
    """The communicator's handle integer (mpi4py 4: comm.handle; 3.x: _handleof)."""
    h = getattr(comm, "handle", None)
    return h if isinstance(h, int) else MPI._handleof(comm)


class Checks:
    """Records failed checks of one rank; every rank keeps going so that no
    rank is left waiting in a collective call."""

    def __init__(self, rank):
        self.rank, self.failed = rank, []

    def check(self, ok, what):
        if not ok:
            self.failed.append(what)
            print(f"{PREFIX} rank {self.rank} FAIL: {what}", flush=True)
        return ok


def squares(lib, h, n, domain, fail_at):
    """Run HataoriSquares; return (code, error message, values, ranks)."""
    values, ranks = (ctypes.c_longlong * max(n, 1))(), (ctypes.c_int * max(n, 1))()
    rc = lib.HataoriSquares(h, n, domain, fail_at, values, ranks)
    return rc, text(lib.LastError), list(values)[:n], list(ranks)[:n]


def main():
    lib_path, want_size = sys.argv[1], int(sys.argv[2])
    from mpi4py import MPI  # initialises MPI (mpi4py asks for THREAD_MULTIPLE)

    version = MPI.Get_library_version()
    world = MPI.COMM_WORLD
    if not version.startswith("Open MPI"):
        print(f"{PREFIX} SKIP: mpi4py is built on {version.splitlines()[0]!r}, not Open MPI "
              "(Debian's python3-mpi4py is; there is none for MPICH)", flush=True)
        return SKIP
    if world.Get_size() != want_size:
        print(f"{PREFIX} SKIP: COMM_WORLD has {world.Get_size()} ranks, want {want_size}: "
              "start the script with Open MPI's mpirun", flush=True)
        return SKIP

    lib = load(lib_path)
    c = Checks(world.Get_rank())
    levels = {MPI.THREAD_SINGLE: 0, MPI.THREAD_FUNNELED: 1, MPI.THREAD_SERIALIZED: 2, MPI.THREAD_MULTIPLE: 3}
    level = levels[MPI.Query_thread()]
    c.check(MPI.Is_thread_main(), "mpi4py: the script's thread is not the MPI main thread")

    # Hataori sees MPI initialised by mpi4py, does not initialise it again,
    # reports the level in force, and shares COMM_WORLD's handle.
    backend = text(lib.HataoriBackend)
    c.check(backend in ("mpirt", "mpicgo"), f"Hataori backend {backend!r}")
    c.check(lib.HataoriInitialized() == 1, f"HataoriInitialized: {text(lib.LastError)}")
    got = lib.HataoriInitThread(1)
    c.check(got == level, f"hataori.InitThread(FUNNELED) = {got} ({text(lib.LastError)}), "
            f"want the level in force {level}")
    c.check(MPI.Query_thread() == [k for k, v in levels.items() if v == level][0],
            "the thread level changed after hataori.InitThread")
    wh = lib.HataoriWorldHandle()
    c.check(wh == handle_of(MPI, world), f"Hataori's world handle {wh:#x} != mpi4py's "
            f"{handle_of(MPI, world):#x} ({text(lib.LastError)})")

    # A communicator duplicated in Python, borrowed by Hataori.
    comm = world.Dup()
    rank, size = comm.Get_rank(), comm.Get_size()
    h = handle_of(MPI, comm)
    r, s = ctypes.c_int(-1), ctypes.c_int(-1)
    rc = lib.HataoriRankSize(h, ctypes.byref(r), ctypes.byref(s))
    c.check(rc == OK and (r.value, s.value) == (rank, size),
            f"Hataori rank/size {r.value}/{s.value} (code {rc}: {text(lib.LastError)}), "
            f"mpi4py {rank}/{size}")
    rc = lib.HataoriFreeBorrowed(h)
    c.check(rc == OK, f"Free of a borrowed comm: {text(lib.LastError)}")

    # Pmap, MPI-only and (when MPI allows it) over a local domain.
    n = 4 * size + 3
    runs = [("MPI-only", 0)]
    if level >= 1:
        runs.append(("domain", 1))
    elif rank == 0:
        print(f"{PREFIX} MPI provides THREAD_SINGLE: the domain run is left out", flush=True)
    for name, domain in runs:
        rc, msg, values, ranks = squares(lib, h, n, domain, -1)
        c.check(rc == OK, f"Pmap {name}: code {rc}: {msg}")
        if rank == 0 and rc == OK:
            c.check(values == [i * i for i in range(n)], f"Pmap {name}: squares {values}")
            c.check(all(0 <= x < size for x in ranks), f"Pmap {name}: computing ranks {ranks}")
            print(f"{PREFIX} Pmap {name} over {n} items: computed by ranks {sorted(set(ranks))}", flush=True)

    # A failing callback: every rank gets the same error, naming the lowest
    # failing item.
    rc, msg, _, _ = squares(lib, h, n, 0, 5)
    c.check(rc == USER and "refusing item 5" in msg, f"Pmap with failing items: code {rc}: {msg!r}")
    msgs = comm.allgather(msg)
    c.check(len(set(msgs)) == 1, f"Pmap error messages differ across ranks: {msgs}")

    # A call from a thread that is not the MPI main thread fails locally
    # with ErrNotMainThread (found with MPI_Is_thread_main), on every rank.
    side = {}

    def off_main():
        side["main"] = MPI.Is_thread_main()
        side["rc"] = lib.HataoriGather(h, 0, rank, None, 0)
        side["msg"] = text(lib.LastError)

    t = threading.Thread(target=off_main)
    t.start()
    t.join()
    c.check(side.get("main") is False, "mpi4py: a Python thread claims to be the MPI main thread")
    c.check(side.get("rc") == NOT_MAIN, f"Gather off the main thread: code {side.get('rc')}: {side.get('msg')!r}")

    # Gather to the last rank and Broadcast from the first, back on the
    # main thread.
    root = size - 1
    out = (ctypes.c_longlong * size)()
    rc = lib.HataoriGather(h, root, rank * rank, out, size)
    c.check(rc == OK, f"Gather: code {rc}: {text(lib.LastError)}")
    if rank == root and rc == OK:
        c.check(list(out) == [i * i for i in range(size)], f"Gather to {root}: {list(out)}")
    v = ctypes.c_longlong(-1)
    rc = lib.HataoriBroadcast(h, 0, 4242 if rank == 0 else -7, ctypes.byref(v))
    c.check(rc == OK and v.value == 4242, f"Broadcast: got {v.value}, code {rc}: {text(lib.LastError)}")

    # Hataori.Finalize leaves mpi4py's MPI alone.
    rc = lib.HataoriFinalize()
    c.check(rc == OK, f"hataori.Finalize: code {rc}: {text(lib.LastError)}")
    c.check(MPI.Is_initialized() and not MPI.Is_finalized(), "MPI finalised after hataori.Finalize")
    c.check(lib.HataoriInitialized() == 1, "Hataori sees MPI finalised after hataori.Finalize")

    # The communicator is still mpi4py's: nothing of Hataori's is left on
    # it, and Python messages and collectives work.
    # The second barrier keeps the Python messages below from arriving
    # before every rank has probed.
    comm.Barrier()
    st = MPI.Status()
    pending = comm.Iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
    c.check(not pending, "a message is pending on the borrowed communicator after Hataori's calls "
            f"(from rank {st.Get_source()}, tag {st.Get_tag()}, {st.Get_count(MPI.BYTE)} bytes)")
    comm.Barrier()
    msg = comm.sendrecv({"from": rank, "text": "hello after Hataori"},
                        dest=(rank + 1) % size, sendtag=11, source=(rank - 1) % size, recvtag=11)
    c.check(msg == {"from": (rank - 1) % size, "text": "hello after Hataori"}, f"Python message {msg}")
    total = comm.allreduce(rank, op=MPI.SUM)
    c.check(total == size * (size - 1) // 2, f"allreduce of ranks: {total}")

    failures = comm.allreduce(len(c.failed), op=MPI.SUM)
    comm.Free()
    c.check(not MPI.Is_finalized(), "MPI finalised before the script ended")
    if failures == 0 and not c.failed:
        print(f"{PREFIX} rank {rank} of {size} PASS (backend {backend}, thread level {level})", flush=True)
        return 0
    print(f"{PREFIX} rank {rank} of {size} FAIL: {len(c.failed)} here, {failures} in the job", flush=True)
    return 1


def run():
    """main, but an unexpected exception aborts the whole job at once
    instead of leaving the other ranks waiting in a collective call."""
    try:
        return main()
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        from mpi4py import MPI
        MPI.COMM_WORLD.Abort(1)
        raise


if __name__ == "__main__":
    sys.exit(run())
