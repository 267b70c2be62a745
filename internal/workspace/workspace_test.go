package workspace_test

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/hataori/hataori-go/internal/workspace"
)

func TestTopEigenMatchesSVD(t *testing.T) {
	ws, err := workspace.New(24)
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 5; seed++ {
		got, err := ws.TopEigen(seed)
		if err != nil {
			t.Fatal(err)
		}
		// Independent reference: the largest eigenvalue of AᵀA is the
		// square of A's largest singular value, computed here by an SVD
		// of A itself (no Gram matrix, no dsyev).
		ref, err := workspace.New(24)
		if err != nil {
			t.Fatal(err)
		}
		a := ref.Matrix(seed)
		var svd mat.SVD
		if !svd.Factorize(a, mat.SVDNone) {
			t.Fatal("SVD failed")
		}
		sigma := svd.Values(nil)[0]
		if math.Abs(got-sigma*sigma) > 1e-9*got {
			t.Fatalf("seed %d: TopEigen %g, σ_max² %g", seed, got, sigma*sigma)
		}
		again, err := ws.TopEigen(seed)
		if err != nil || again != got {
			t.Fatalf("seed %d: reused workspace gave %g (%v), first %g", seed, again, err, got)
		}
	}
	if ws.Items() != 10 {
		t.Fatalf("Items = %d, want 10", ws.Items())
	}
}

func TestNewRejectsBadSize(t *testing.T) {
	if _, err := workspace.New(0); err == nil {
		t.Fatal("New(0) accepted")
	}
}
