package hataori

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCollectiveErrorIsAs(t *testing.T) {
	sentinels := map[ErrorKind]error{
		KindPreflight: ErrPreflight,
		KindWire:      ErrWire,
		KindProtocol:  ErrProtocol,
	}
	for kind, want := range sentinels {
		var err error = fmt.Errorf("wrapped: %w", &CollectiveError{Kind: kind, Rank: 2, Op: "Gather", Message: "boom"})
		for other, s := range sentinels {
			if got := errors.Is(err, s); got != (other == kind) {
				t.Errorf("errors.Is(%v, %v) = %v", kind, s, got)
			}
		}
		var pe *CollectiveError
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
	if s := ErrorKind(9).String(); s != "ErrorKind(9)" {
		t.Errorf("unknown kind String = %q", s)
	}
}
