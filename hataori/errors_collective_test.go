package hataori

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestPmapErrorIsAsUnwrap(t *testing.T) {
	cause := errors.New("item 5 is bad")
	e := &PmapError{Kind: KindUser, Key: 46, Rank: 1, Message: cause.Error(), err: cause}
	wrapped := fmt.Errorf("run: %w", e)
	if !errors.Is(wrapped, KindUser) || errors.Is(wrapped, KindWire) || errors.Is(wrapped, KindPreflight) {
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
	for k, s := range map[ErrorKind]error{KindReentrant: KindReentrant, KindPreflight: KindPreflight, KindWire: KindWire, KindProtocol: KindProtocol, KindCanceled: KindCanceled} {
		if !errors.Is(&PmapError{Kind: k}, s) {
			t.Errorf("kind %v does not match its sentinel", k)
		}
	}
	if errors.Is(&PmapError{Kind: 99}, KindUser) || ErrorKind(99).String() != "ErrorKind(99)" {
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

// hataoriSentinels lists every error of package hataori whose text starts
// with its "hataori: " tag and that a preflight or local failure may embed
// in a message. (The ErrorKind values are errors too, but their text is
// the bare kind name, "user", never embedded in a message.)
var hataoriSentinels = []error{
	ErrNotMainThread,
	ErrInvalidMode, ErrNoDomain, ErrNilCallback, ErrDomainClosed, ErrWorkerEntry, ErrDomainBusy, ErrNotLent,
	ErrThreadSupport, ErrOptionsDiffer, ErrInvalidOptions, ErrPayload, ErrStopped, ErrMPI,
	ErrNoMPI, ErrNotInitialized, ErrInvalidComm, ErrNotFreeable, ErrThreadLevel,
	ErrInvalidPinning, ErrNoWorkers, ErrCPUNotAllowed, ErrDuplicateCPU, ErrTooManyWorkers, ErrPinFailed, ErrStartTimeout,
}

// checkTaggedOnce fails unless text names Hataori exactly once and still
// carries want.
func checkTaggedOnce(t *testing.T, text, want string) {
	t.Helper()
	if n := strings.Count(text, "hataori:"); n != 1 {
		t.Errorf("%q says \"hataori:\" %d times, want once", text, n)
	}
	if !strings.Contains(text, want) {
		t.Errorf("%q lost %q", text, want)
	}
}

// TestErrorTextNamesHataoriOnce: a PmapError's or CollectiveError's
// message is often composed from Hataori's own errors (a sentinel, a
// wrapped MPI error, an admission failure); the Error text names Hataori
// once however they nest, and keeps what they say.
func TestErrorTextNamesHataoriOnce(t *testing.T) {
	for _, s := range hataoriSentinels {
		if !strings.HasPrefix(s.Error(), errTag) {
			t.Fatalf("sentinel %q does not start with %q", s, errTag)
		}
		bare := strings.TrimPrefix(s.Error(), errTag)
		mpiErr := &MPIError{Func: "MPI_Is_thread_main", Code: 5}
		msgs := []string{
			s.Error(),
			"rank 1: executor admission: " + s.Error(),
			fmt.Errorf("%w: MPI_Is_thread_main: %w", s, mpiErr).Error(),
			fmt.Errorf("rank 2: %w", fmt.Errorf("hataori: %w", s)).Error(),
		}
		for _, msg := range msgs {
			for _, kind := range []ErrorKind{KindReentrant, KindPreflight, KindUser, KindWire, KindProtocol, KindCanceled} {
				checkTaggedOnce(t, (&PmapError{Kind: kind, Index: -1, Key: -1, Rank: -1, Message: msg}).Error(), bare)
				checkTaggedOnce(t, (&PmapError{Kind: kind, Index: 3, Key: 40, Rank: 1, Message: msg, Failures: []ItemFailure{{Index: 3}}}).Error(), bare)
			}
			for _, kind := range []ErrorKind{KindPreflight, KindWire, KindProtocol} {
				for _, rank := range []int{-1, 0, 2} {
					checkTaggedOnce(t, (&CollectiveError{Kind: kind, Rank: rank, Op: "Gather", Message: msg}).Error(), bare)
				}
			}
		}
	}

	// Errors the calls return without another rank (on a Comm that is
	// not one; without MPI, ErrNoMPI).
	ctx := context.Background()
	id := func(x int) (int, error) { return x, nil }
	_, err := Pmap(ctx, Comm{}, nil, Options{}, Some([]int{1}), id)
	checkTaggedOnce(t, err.Error(), "pmap preflight error")
	_, err = Broadcast(ctx, Comm{}, 0, Some(1))
	checkTaggedOnce(t, err.Error(), "Broadcast preflight error")
	_, err = Gather(ctx, Comm{}, 0, 1)
	checkTaggedOnce(t, err.Error(), "Gather preflight error")
}

func TestUntag(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"boom":                   "boom",
		"hataori: boom":          "boom",
		"hataori: hataori: boom": "boom",
		"rank 1: hataori: a: hataori: hataori: b": "rank 1: a: b",
		"rank 1: hataori:x":                       "rank 1: hataori:x",
		"hataorix: y: hataorix: z":                "hataorix: y: hataorix: z",
		"rank 0: context done":                    "rank 0: context done",
		"a:hataori: b":                            "a:hataori: b",
		"a: hataori: ":                            "a: ",
	} {
		if got := untag(in); got != want {
			t.Errorf("untag(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCollectiveErrorIsAs(t *testing.T) {
	sentinels := map[ErrorKind]error{
		KindPreflight: KindPreflight,
		KindWire:      KindWire,
		KindProtocol:  KindProtocol,
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

// TestErrorTextNamesRankOnce: the ranks' messages start with "rank R: "
// and the Error texts name the rank already; the text names it once, and
// leaves a message about another rank as it is.
func TestErrorTextNamesRankOnce(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{(&PmapError{Kind: KindPreflight, Index: -1, Key: -1, Rank: 0, Message: "rank 0: context already done"}).Error(),
			"hataori: pmap preflight error (rank 0): context already done"},
		{(&PmapError{Kind: KindWire, Index: 7, Key: 5, Rank: 1, Message: "rank 10: x"}).Error(),
			"hataori: pmap wire error (item 7, rank 1, key 5): rank 10: x"},
		{ItemFailure{Index: 725, Kind: KindWire, Rank: 0, Message: "rank 0: bad frame"}.Error(), "item 725 (rank 0): bad frame"},
		{(&CollectiveError{Kind: KindPreflight, Rank: 2, Op: "Gather", Message: "rank 2: context done before the call"}).Error(),
			"hataori: Gather preflight error reported by rank 2: context done before the call"},
	} {
		if c.got != c.want {
			t.Errorf("Error() = %q, want %q", c.got, c.want)
		}
	}
}
