// Package mpitest runs multi-rank tests as real MPI jobs.
//
// A multi-rank test is an ordinary test function that behaves differently
// in the parent (the plain `go test` process) and in the children (the
// ranks started by mpirun):
//
//	func TestRing(t *testing.T) {
//		if !mpitest.Child() {
//			for _, n := range []int{1, 2, 4} {
//				mpitest.Run(t, mpitest.Config{Ranks: n})
//			}
//			return
//		}
//		rank, size := mpitest.Init(t)
//		// rank code: every MPI call on this goroutine
//	}
//
// Run re-executes the test binary with -test.run=^TestRing$ (Config.Test,
// which defaults to the calling test's top-level name: set it only to
// launch another test function) under every
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
// # Across hosts
//
// The same tests run across several hosts when HATAORI_MPITEST_HOSTS lists
// them ("ADDR:SLOTS,ADDR:SLOTS,..."); unset, every job runs on this host
// exactly as before. The launcher then runs where the parent test runs and
// starts the ranks on the listed hosts, filling their slots in order, so
// the test binary must be at the same path on every host (a shared file
// system). Optional launcher extras:
//
//	HATAORI_MPITEST_RSH_AGENT     remote start command: Open MPI --mca plm_rsh_agent,
//	                              MPICH -launcher ssh -launcher-exec (default: ssh)
//	HATAORI_MPITEST_TCP           Open MPI on TCP only (--mca btl tcp,self) and on these
//	                              networks or interfaces (btl_tcp_if_include,
//	                              oob_tcp_if_include), e.g. 10.1.0.0/16 or eth1
//	HATAORI_MPITEST_IFACE         MPICH's network interface (-iface)
//	HATAORI_MPITEST_FORWARD       more variables, comma-separated, that Open MPI forwards
//	                              to remote ranks (-x); the harness's own, MPI_RT_LIB,
//	                              Config.Env and every HATAORI_* variable always are
//	                              (MPICH's Hydra forwards the whole environment)
//	HATAORI_MPITEST_OPENMPI_ARGS  extra mpirun arguments, split at white space
//	HATAORI_MPITEST_MPICH_ARGS    extra mpiexec.mpich arguments (these two apply on
//	                              one host too)
//
// Open MPI gets --host LIST, MPICH -hosts LIST. A Config.Mismatch job always
// runs on one host. A malformed setting fails the test. scripts/multihost.sh
// builds two hosts as network namespaces on one machine, sets these
// variables, and runs a selection of Hataori's own tests through them.
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
//
// A job expected to fail (Config.ExitCode) must end by itself: if it lasts
// until its ranks' own -test.timeout (nine tenths of Config.Timeout), or a
// rank reports that timeout, the test fails. Config.EndAfter and EndWithin
// bound how long a job may go on after a given output line.
//
// # Signals
//
// Config.Signal sends a signal (SIGINT: Ctrl-C) to the launcher once every
// rank has printed a given line, never before, and bounds the time from
// the signal to the job's end: a test prints that line from inside a call
// whose callbacks then wait to be stopped, so the signal arrives during
// the call by construction. Config.CheckOutput then receives every rank's
// lines apart (Output), for example to check that every rank printed the
// same error.
package mpitest
