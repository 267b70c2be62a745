//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

type hiddenResult struct {
	Name string
	hid  float64
}

type exportedResult struct {
	Name string
	V    []float64
	M    map[string]int
}

// TestPmapWireTypes checks that Pmap refuses, in its preflight and with the
// same error on every rank (world size one included), item or result types
// whose values would not survive the wire, naming the type and the field,
// and that a supported type round-trips exactly.
func TestPmapWireTypes(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapWireTypes", 1, 2, 4)
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	ran := false
	_, err := Pmap(ctx, e.world, e.dom, Options{Mode: Outer}, e.items(8), func(x int) (hiddenResult, error) {
		ran = true
		return hiddenResult{Name: "a", hid: float64(x)}, nil
	})
	pe := e.sameError("unexported field", err, KindPreflight)
	if !errors.Is(err, ErrUnsupportedType) || !strings.Contains(pe.Message, "hid") || !strings.Contains(pe.Message, "hiddenResult") {
		t.Errorf("rank %d: %v, want ErrUnsupportedType naming hiddenResult.hid", e.rank, err)
	}
	if ran {
		t.Errorf("rank %d: a callback ran before the type was refused", e.rank)
	}
	var anyItems Maybe[[]any]
	if e.rank == 0 {
		anyItems = Some([]any{1, 2, 3})
	}
	_, err = Pmap(ctx, e.world, nil, Options{}, anyItems, func(v any) (int, error) { return 0, nil })
	e.sameError("interface items", err, KindPreflight)
	if !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("rank %d: any items: %v, want ErrUnsupportedType", e.rank, err)
	}
	e.checkReusable("wire types")

	out, err := Pmap(ctx, e.world, e.dom, Options{Mode: Outer}, e.items(20), func(x int) (exportedResult, error) {
		return exportedResult{Name: strings.Repeat("x", x), V: []float64{float64(x), 0.5}, M: map[string]int{"x": x}}, nil
	})
	if err != nil {
		t.Fatalf("rank %d: %v", e.rank, err)
	}
	for i, r := range out {
		if len(r.Name) != i || len(r.V) != 2 || r.V[0] != float64(i) || r.M["x"] != i {
			t.Fatalf("out[%d] = %+v", i, r)
		}
	}
}
