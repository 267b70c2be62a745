// Package mpitest runs multi-rank tests as real MPI jobs.
//
// A multi-rank test is an ordinary test function that behaves differently
// in the parent (the plain `go test` process) and in the children (the
// ranks started by mpirun):
//
//	func TestRing(t *testing.T) {
//		if !mpitest.Child() {
//			for _, n := range []int{1, 2, 4} {
//				mpitest.Run(t, mpitest.Config{Ranks: n, Test: "TestRing"})
//			}
//			return
//		}
//		rank, size := mpitest.Init(t)
//		// rank code: every MPI call on this goroutine
//	}
//
// Run re-executes the test binary with -test.run=^TestRing$ under every
// launcher usable with the build's backend (mpirt: Open MPI's mpirun with
// MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI and MPICH's mpiexec.mpich with
// MPI_RT_LIB=$HATAORI_WRAPPER_MPICH; mpicgo: the launcher of the MPI the
// binary is linked against; no backend: skip), each as a subtest named
// after the launcher and the rank count, killed with its whole process
// group when Config.Timeout expires.
//
// Without MPI (launcher missing, or wrapper variable unset under mpirt) the
// subtests skip with a message, unless HATAORI_REQUIRE_MPI=1, where they
// fail.
//
// # Threads
//
// MPI is initialised with MPI_THREAD_FUNNELED, so every MPI call of a rank
// must come from the thread that initialised it. Go runs each test on its
// own goroutine, not on the main goroutine, so Init locks the calling test
// goroutine to its OS thread for good and initialises MPI there: that
// goroutine is the MPI main thread, and the test must make every MPI call
// (directly or through Hataori) from it, not from subtests or other
// goroutines. Init registers the finalisation as a cleanup of the same test,
// so it runs on the same thread. One multi-rank test runs per child
// process. A test package therefore does not need the
// runtime.LockOSThread()-in-init() rule that MPI programs follow; it may
// add it (harmless), and may use Main in its TestMain to finalise MPI left
// initialised by a test that did not use Init.
//
// # Failures
//
// A rank whose test fails aborts the whole job (MPI_Abort with code 1)
// during cleanup, so its peers never wait forever. Children run with
// -test.v, and their output, prefixed with the rank by the launcher, is
// logged by the parent test.
package mpitest
