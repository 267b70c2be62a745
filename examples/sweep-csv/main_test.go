package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLogistic(t *testing.T) {
	// Below r = 3 the orbit settles on the fixed point 1 − 1/r, where
	// λ = log|2 − r|; at r = 3.2 it alternates between two points.
	r, err := logistic(2.8)
	if err != nil || r.Period != 1 || math.Abs(r.Lyapunov-math.Log(0.8)) > 1e-3 {
		t.Errorf("logistic(2.8) = %+v, %v; want period 1, λ ≈ %.4f", r, err, math.Log(0.8))
	}
	if r, err := logistic(3.2); err != nil || r.Period != 2 || r.Lyapunov >= 0 {
		t.Errorf("logistic(3.2) = %+v, %v; want period 2, λ < 0", r, err)
	}
	if r, err := logistic(3.9); err != nil || r.Period != 0 || r.Lyapunov <= 0 {
		t.Errorf("logistic(3.9) = %+v, %v; want chaos", r, err)
	}
	if _, err := logistic(4.1); err == nil || !strings.Contains(err.Error(), "left [0, 1]") {
		t.Errorf("logistic(4.1) error = %v, want the orbit to escape", err)
	}
}

func TestRunLocal(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep.csv")
	if err := runLocal(context.Background(), []float64{2.8, 3.2, 3.5}, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "r,lyapunov,period\n2.800000,-0.223144,1\n3.200000,-0.916291,2\n3.500000,-0.872507,4\n"
	if string(b) != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", b, want)
	}

	err = runLocal(context.Background(), []float64{3.0, 4.05, 4.1}, out)
	if err == nil || !strings.Contains(err.Error(), "sweep failed at item 1: r=4.050000") {
		t.Errorf("sweep past r = 4: %v, want a failure at item 1", err)
	}
}
