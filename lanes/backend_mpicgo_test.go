//go:build mpicgo && !mpirt

package lanes_test

// testBackend names the MPI backend this test binary is built with.
const testBackend = "mpicgo"
