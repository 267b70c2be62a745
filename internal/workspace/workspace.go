// Package workspace is the numerical engine of the lanes-gonum example: a
// gonum workspace (shared with the lanes benchmark) whose buffers are allocated once and reused across items
// and across runs. One Workspace is one lane's engine.
package workspace

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// Workspace computes, for a seed, the spectrum of the Gram matrix AᵀA of a
// random n×n matrix A drawn from that seed. Everything the computation
// needs is preallocated: the matrix A, the Gram matrix, the eigenvalue
// vector, the LAPACK work buffer (sized once by a workspace query) and the
// random source. A Workspace is not safe for concurrent use: lend it to one
// lane at a time.
type Workspace struct {
	n     int
	src   *rand.PCG
	rng   *rand.Rand
	a     *mat.Dense    // A, refilled for every item
	gram  *mat.SymDense // AᵀA, overwritten by the eigen-solver
	w     []float64     // eigenvalues, ascending
	work  []float64     // LAPACK dsyev workspace
	items int
}

// New returns a workspace for n×n matrices (n ≥ 1).
func New(n int) (*Workspace, error) {
	if n < 1 {
		return nil, fmt.Errorf("workspace: matrix size %d, want at least 1", n)
	}
	src := rand.NewPCG(0, 0)
	ws := &Workspace{
		n:    n,
		src:  src,
		rng:  rand.New(src),
		a:    mat.NewDense(n, n, nil),
		gram: mat.NewSymDense(n, nil),
		w:    make([]float64, n),
	}
	query := []float64{0}
	lapack64.Syev(lapack.EVNone, ws.gram.RawSymmetric(), ws.w, query, -1)
	ws.work = make([]float64, int(query[0]))
	return ws, nil
}

// Items returns how many items this workspace has computed, over all runs.
func (ws *Workspace) Items() int { return ws.items }

// TopEigen draws A from seed (entries uniform in [-1, 1)), forms AᵀA with a
// blocked symmetric rank-k product into the preallocated Gram matrix, and
// returns its largest eigenvalue (the square of A's largest singular
// value). It checks the result against an invariant: the eigenvalues must
// sum to the squared Frobenius norm of A.
func (ws *Workspace) TopEigen(seed uint64) (float64, error) {
	frob := ws.fill(seed)
	ws.gram.SymOuterK(1, ws.a.T()) // AᵀA, into the existing storage
	if !lapack64.Syev(lapack.EVNone, ws.gram.RawSymmetric(), ws.w, ws.work, len(ws.work)) {
		return 0, fmt.Errorf("workspace: eigen-solver did not converge for seed %d", seed)
	}
	sum := 0.0
	for _, v := range ws.w {
		sum += v
	}
	if math.Abs(sum-frob) > 1e-9*frob {
		return 0, fmt.Errorf("workspace: seed %d: eigenvalues sum to %g, want ‖A‖²_F = %g", seed, sum, frob)
	}
	ws.items++
	return ws.w[ws.n-1], nil
}

// Matrix returns a copy of the matrix A that TopEigen draws from seed.
func (ws *Workspace) Matrix(seed uint64) *mat.Dense {
	ws.fill(seed)
	return mat.DenseCopyOf(ws.a)
}

// fill draws A from seed into the preallocated matrix and returns ‖A‖²_F.
func (ws *Workspace) fill(seed uint64) float64 {
	ws.src.Seed(seed, 0x9e3779b97f4a7c15)
	data := ws.a.RawMatrix().Data
	frob := 0.0
	for i := range data {
		v := 2*ws.rng.Float64() - 1
		data[i] = v
		frob += v * v
	}
	return frob
}
