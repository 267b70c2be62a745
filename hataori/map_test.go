package hataori

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// bigError is a custom error type with a long non-ASCII message.
type bigError struct{ msg string }

func (e *bigError) Error() string { return e.msg }

// nonASCII10K is a message of about 10 KB mixing 2-, 3- and 4-byte runes,
// so the 4096-byte cut has to back off to a character boundary.
var nonASCII10K = "x" + strings.Repeat("é€😀", 1200)

var errSentinel = errors.New("sentinel")

func TestMapOrderAndErrors(t *testing.T) {
	tests := []struct {
		name      string
		items     []int
		failAt    map[int]bool
		wantOut   []int
		wantIndex int // -1: success
		wantCalls int
	}{
		{"empty", nil, nil, []int{}, -1, 0},
		{"all ok", []int{1, 2, 3, 4}, nil, []int{10, 20, 30, 40}, -1, 4},
		{"first error stops", []int{1, 2, 3, 4, 5}, map[int]bool{2: true, 4: true}, nil, 2, 3},
		{"error at 0", []int{1, 2}, map[int]bool{0: true}, nil, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			out, err := Map(context.Background(), tt.items, func(v int) (int, error) {
				calls++
				if tt.failAt[calls-1] {
					return 0, fmt.Errorf("bad %d: %w", v, errSentinel)
				}
				return v * 10, nil
			})
			if calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tt.wantCalls)
			}
			if tt.wantIndex < 0 {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if fmt.Sprint(out) != fmt.Sprint(tt.wantOut) || len(out) != len(tt.wantOut) {
					t.Fatalf("out = %v, want %v", out, tt.wantOut)
				}
				return
			}
			var me *MapError
			if !errors.As(err, &me) {
				t.Fatalf("err = %v, want *MapError", err)
			}
			if me.Index != tt.wantIndex || out != nil {
				t.Fatalf("index = %d out = %v, want %d and nil", me.Index, out, tt.wantIndex)
			}
			if !errors.Is(err, errSentinel) {
				t.Errorf("errors.Is(err, errSentinel) = false")
			}
			want := fmt.Sprintf("hataori: item %d: bad %d: sentinel", tt.wantIndex, tt.items[tt.wantIndex])
			if err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

// checkBigMessage checks the bounded message of a 10 KB non-ASCII error.
func checkBigMessage(t *testing.T, err error, wantIndex int) {
	t.Helper()
	var me *MapError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want *MapError", err)
	}
	if me.Index != wantIndex {
		t.Errorf("Index = %d, want %d", me.Index, wantIndex)
	}
	if len(me.Message) > 4096 || len(me.Message) < 4090 {
		t.Errorf("len(Message) = %d, want in [4090, 4096]", len(me.Message))
	}
	if !utf8.ValidString(me.Message) || !utf8.ValidString(err.Error()) {
		t.Errorf("message is not valid UTF-8")
	}
	if !strings.HasPrefix(nonASCII10K, me.Message) {
		t.Errorf("message is not a prefix of the original")
	}
	var be *bigError
	if !errors.As(err, &be) || be.msg != nonASCII10K {
		t.Errorf("original error not reachable with errors.As")
	}
	if errors.Unwrap(err) != error(be) {
		t.Errorf("Unwrap does not return the callback's error")
	}
}

func TestMapBigNonASCIIMessage(t *testing.T) {
	if len(nonASCII10K) < 10000 {
		t.Fatalf("fixture too short: %d", len(nonASCII10K))
	}
	_, err := Map(context.Background(), []int{0, 1, 2}, func(v int) (int, error) {
		if v == 1 {
			return 0, &bigError{nonASCII10K}
		}
		return v, nil
	})
	checkBigMessage(t, err, 1)
}

func TestMapCancel(t *testing.T) {
	t.Run("before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		calls := 0
		_, err := Map(ctx, []int{1, 2}, func(v int) (int, error) { calls++; return v, nil })
		if !errors.Is(err, context.Canceled) || calls != 0 {
			t.Fatalf("err = %v calls = %d, want Canceled and 0", err, calls)
		}
	})
	t.Run("midway", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		calls := 0
		out, err := Map(ctx, make([]int, 10), func(v int) (int, error) {
			calls++
			if calls == 3 {
				cancel()
			}
			return v, nil
		})
		if !errors.Is(err, context.Canceled) || out != nil || calls != 3 {
			t.Fatalf("err = %v out = %v calls = %d, want Canceled, nil, 3", err, out, calls)
		}
	})
}

func panicky(v int) (int, error) {
	if v == 2 {
		panic(fmt.Sprintf("boom %d", v))
	}
	return v, nil
}

func TestMapPanic(t *testing.T) {
	pe := catchPanic(t, func() { _, _ = Map(context.Background(), []int{0, 1, 2, 3}, panicky) })
	if pe.Value != "boom 2" {
		t.Errorf("Value = %v, want boom 2", pe.Value)
	}
	if !strings.Contains(string(pe.Stack), "panicky") {
		t.Errorf("stack does not show the panic site:\n%s", pe.Stack)
	}
	if !strings.Contains(pe.Error(), "boom 2") || !strings.Contains(pe.Error(), "panicky") {
		t.Errorf("Error() lacks value or stack: %s", pe.Error())
	}
}

func TestPanicErrorUnwrap(t *testing.T) {
	pe := catchPanic(t, func() {
		_, _ = Map(context.Background(), []int{1}, func(int) (int, error) { panic(errSentinel) })
	})
	if !errors.Is(pe, errSentinel) {
		t.Errorf("errors.Is(pe, errSentinel) = false")
	}
	if (&PanicError{Value: 3}).Unwrap() != nil {
		t.Errorf("Unwrap of a non-error value is not nil")
	}
}

// catchPanic runs f and returns the *PanicError it panicked with.
func catchPanic(t *testing.T, f func()) (pe *PanicError) {
	t.Helper()
	defer func() {
		r := recover()
		var ok bool
		if pe, ok = r.(*PanicError); !ok {
			t.Fatalf("recovered %T %v, want *PanicError", r, r)
		}
	}()
	f()
	return nil
}

// Nil arguments follow one policy: a nil ctx is context.Background(), a nil
// callback is ErrNilCallback before any item runs, and a zero Domain is
// ErrNoDomain, never an index panic.
func TestNilPolicy(t *testing.T) {
	//lint:ignore SA1012 a nil context is what the test checks
	out, err := Map(nil, []int{1, 2}, func(x int) (int, error) { return x + 1, nil }) //nolint:staticcheck
	if err != nil || len(out) != 2 || out[1] != 3 {
		t.Fatalf("Map with a nil ctx = %v, %v", out, err)
	}
	if _, err := Map[int, int](context.Background(), []int{1}, nil); !errors.Is(err, ErrNilCallback) {
		t.Errorf("Map(nil f) = %v, want ErrNilCallback", err)
	}
	d := newTestDomain(t, 1)
	if _, err := MapIn[int, int](context.Background(), d, Outer, []int{1}, nil); !errors.Is(err, ErrNilCallback) {
		t.Errorf("MapIn(nil f) = %v, want ErrNilCallback", err)
	}
	//lint:ignore SA1012 a nil context is what the test checks
	if out, err := MapIn(nil, d, Outer, []int{4}, func(x int) (int, error) { return x, nil }); err != nil || out[0] != 4 { //nolint:staticcheck
		t.Errorf("MapIn with a nil ctx = %v, %v", out, err)
	}
	var zero Domain
	if _, err := MapIn(context.Background(), &zero, Sequential, []int{1}, func(x int) (int, error) { return x, nil }); !errors.Is(err, ErrNoDomain) {
		t.Errorf("MapIn on a zero Domain = %v, want ErrNoDomain", err)
	}
	if err := zero.Close(); !errors.Is(err, ErrNoDomain) {
		t.Errorf("Close of a zero Domain = %v, want ErrNoDomain", err)
	}
	if err := zero.Parallel(2, func(int) {}); !errors.Is(err, ErrNoDomain) {
		t.Errorf("Parallel on a zero Domain = %v, want ErrNoDomain", err)
	}
	if zero.Workers() != 0 || zero.CPUs() != nil {
		t.Errorf("zero Domain: %d workers, cpus %v", zero.Workers(), zero.CPUs())
	}
}
