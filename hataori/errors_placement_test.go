package hataori

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestPlacementErrorIsAs(t *testing.T) {
	sentinels := map[PlacementKind]error{
		PlacementPreflight: ErrPlacementPreflight,
		PlacementWire:      ErrPlacementWire,
		PlacementProtocol:  ErrPlacementProtocol,
	}
	for kind, want := range sentinels {
		var err error = fmt.Errorf("wrapped: %w", &PlacementError{Kind: kind, Rank: 2, Op: "Gather", Message: "boom"})
		for other, s := range sentinels {
			if got := errors.Is(err, s); got != (other == kind) {
				t.Errorf("errors.Is(%v, %v) = %v", kind, s, got)
			}
		}
		var pe *PlacementError
		if !errors.As(err, &pe) || pe.Kind != kind || pe.Rank != 2 {
			t.Errorf("errors.As(%v) = %+v", err, pe)
		}
		msg := err.Error()
		for _, part := range []string{"Gather", kind.String(), "rank 2", "boom"} {
			if !strings.Contains(msg, part) {
				t.Errorf("message %q lacks %q", msg, part)
			}
		}
		if errors.Is(err, want) && errors.Is(err, errors.New(want.Error())) {
			t.Errorf("Is matched a distinct error with the sentinel's text")
		}
	}
	if s := PlacementKind(9).String(); s != "PlacementKind(9)" {
		t.Errorf("unknown kind String = %q", s)
	}
}
