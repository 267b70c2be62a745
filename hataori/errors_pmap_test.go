package hataori

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestPmapErrorIsAsUnwrap(t *testing.T) {
	cause := errors.New("item 5 is bad")
	e := &PmapError{Kind: KindUser, Key: 46, Rank: 1, Message: cause.Error(), err: cause}
	wrapped := fmt.Errorf("run: %w", e)
	if !errors.Is(wrapped, ErrUser) || errors.Is(wrapped, ErrWire) || errors.Is(wrapped, ErrPreflight) {
		t.Fatal("kind sentinel matching is wrong")
	}
	if !errors.Is(wrapped, cause) {
		t.Fatal("original error not reachable on the reporting rank")
	}
	var pe *PmapError
	if !errors.As(wrapped, &pe) || pe.Key != 46 || pe.Rank != 1 {
		t.Fatalf("errors.As: %+v", pe)
	}
	if got := e.Error(); !strings.Contains(got, "user") || !strings.Contains(got, "rank 1") || !strings.Contains(got, "key 46") || !strings.Contains(got, "item 5 is bad") {
		t.Fatalf("Error() = %q", got)
	}
	remote := &PmapError{Kind: KindUser, Key: 46, Rank: 1, Message: cause.Error()}
	if errors.Is(remote, cause) || remote.Unwrap() != nil {
		t.Fatal("a non-reporting rank must not carry the original error")
	}
	for k, s := range map[ErrorKind]error{KindReentrant: ErrReentrant, KindPreflight: ErrPreflight, KindWire: ErrWire, KindProtocol: ErrProtocol, KindCanceled: ErrCanceled} {
		if !errors.Is(&PmapError{Kind: k}, s) {
			t.Errorf("kind %v does not match its sentinel", k)
		}
	}
	if errors.Is(&PmapError{Kind: 99}, ErrUser) || ErrorKind(99).String() != "ErrorKind(99)" {
		t.Fatal("unknown kind")
	}
}

func TestPackOptionsDistinguishesOptions(t *testing.T) {
	base := Options{Root: 0, BatchSize: 4, Mode: Outer}
	variants := []Options{
		{BatchSize: 5, Mode: Outer},
		{BatchSize: 4, Mode: Inner},
		{BatchSize: 4, Mode: Outer, Prefetch: true},
		{BatchSize: 1, Mode: Outer},
	}
	seen := map[int64]Options{packOptions(base): base}
	for _, v := range variants {
		p := packOptions(v)
		if o, dup := seen[p]; dup {
			t.Fatalf("options %+v and %+v pack to the same word %d", o, v, p)
		}
		seen[p] = v
	}
	for _, v := range []Options{{Root: 1, BatchSize: 4, Mode: Outer}, {Root: 1 << 30, BatchSize: 4, Mode: Outer}, {Root: -1, BatchSize: 4, Mode: Outer}, {BatchSize: 1 << 28, Mode: Outer}} {
		p := packOptions(v)
		if o, dup := seen[p]; dup || p < 0 {
			t.Fatalf("options %+v and %+v pack to the same word %d", o, v, p)
		}
		seen[p] = v
	}
}
