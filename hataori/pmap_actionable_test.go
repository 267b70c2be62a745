//go:build mpirt || mpicgo

package hataori

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/hataori/hataori-go/internal/seam"
)

// The error names the item, and Failed searches the CollectAll list.
func TestPmapErrorIndexAndFailures(t *testing.T) {
	e := &PmapError{Kind: KindUser, Index: 42, Key: 511, Rank: 3, Message: "boom",
		Failures: []ItemFailure{{Index: 7, Kind: KindUser, Rank: 1, Message: "a"}, {Index: 42, Kind: KindUser, Rank: 3, Message: "boom"}, {Index: 50, Kind: KindCanceled, Rank: -1, Message: "no result"}}}
	if got := e.Error(); got != "hataori: pmap user error (item 42, rank 3, key 511): boom [3 items without a result]" {
		t.Fatalf("Error() = %q", got)
	}
	for i, want := range map[int]bool{7: true, 42: true, 50: true, 0: false, 8: false, 51: false} {
		if e.Failed(i) != want {
			t.Errorf("Failed(%d) = %v", i, !want)
		}
	}
	if s := e.Failures[2].Error(); s != "item 50: no result" {
		t.Errorf("ItemFailure.Error() = %q", s)
	}
	cause := errors.New("x")
	if f := (ItemFailure{Index: 1, Rank: 0, err: cause}); !errors.Is(f, cause) || f.Error() != "item 1 (rank 0): " {
		t.Errorf("ItemFailure %v", f)
	}
	call := &PmapError{Kind: KindCanceled, Index: -1, Key: 99, Rank: 1, Message: "rank 1: context done"}
	if got := call.Error(); got != "hataori: pmap canceled error (rank 1, key 99): context done" {
		t.Fatalf("Error() = %q", got)
	}
}

// Differing options are named field by field, as this rank and rank 0
// have them.
func TestOptionsDiff(t *testing.T) {
	a := Options{Root: 0, BatchSize: 3, Mode: Outer, OnError: CollectAll}
	b := Options{Root: 1, BatchSize: 1, Mode: Outer, Prefetch: true}
	got := optionsDiff(unpackOptions(packOptions(a)), unpackOptions(packOptions(b)))
	want := "root 0 here, 1 on rank 0; batch size 3 here, 1 on rank 0; prefetch false here, true on rank 0; error policy CollectAll here, FailFast on rank 0"
	if got != want {
		t.Fatalf("optionsDiff = %q\nwant           %q", got, want)
	}
	if packOptions(Options{OnError: CollectAll}) == packOptions(Options{}) || packOptions(Options{OnError: 7}) != packOptions(Options{OnError: 9}) {
		t.Fatal("the policy is not packed")
	}
	huge := optionsDiff(unpackOptions(packOptions(Options{BatchSize: 1 << 40})), unpackOptions(packOptions(Options{BatchSize: 2})))
	if !strings.Contains(huge, "or more here") {
		t.Fatalf("clamped batch size: %q", huge)
	}
}

// Every hataori and lanes sentinel that a preflight can fail with has a
// cause number, and the number leads back to it.
func TestPreflightCauseNumbers(t *testing.T) {
	for _, s := range []error{ErrDomainBusy, ErrDomainClosed, ErrWorkerEntry, ErrInvalidMode, ErrNoDomain, ErrNotMainThread,
		ErrThreadSupport, ErrOptionsDiffer, ErrInvalidOptions, ErrPayload, KindCanceled} {
		c := seam.CauseOf(errors.Join(errors.New("context"), s))
		if c == seam.NoCause || seam.Sentinel(c) != s {
			t.Errorf("%v: cause %d gives %v", s, c, seam.Sentinel(c))
		}
	}
	if seam.CauseOf(errors.New("other")) != seam.NoCause || seam.Sentinel(200) != nil {
		t.Fatal("an unknown cause")
	}
	// The agreed failure rebuilds the sentinel from the number alone.
	a := &agreedFailure{Code: failBusy, Cause: seam.Sentinel(seam.CauseOf(ErrDomainBusy))}
	if !errors.Is(preflightCause(a), ErrDomainBusy) {
		t.Fatal("no cause rebuilt")
	}
}

// wire.ItemPosition names the item of a list that failed to decode or
// encode, and nothing for a payload that is malformed as a whole.
func TestItemPosition(t *testing.T) {
	buf, err := wire.EncodeItems(nil, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wire.DecodeItemsOwned[int](buf, 3); err == nil {
		t.Fatal("strings decoded as ints")
	} else if p, ok := wire.ItemPosition(err); !ok || p != 0 {
		t.Fatalf("position %d %v for %v", p, ok, err)
	}
	mixed, _ := wire.EncodeItems(nil, []any{1, 2, "x"})
	if _, err := wire.DecodeItemsOwned[int](mixed, 3); err == nil {
		t.Fatal("decoded")
	} else if p, ok := wire.ItemPosition(err); !ok || p != 2 {
		t.Fatalf("position %d %v for %v", p, ok, err)
	}
	if _, err := wire.DecodeItemsOwned[string](buf[:len(buf)-1], 3); err == nil {
		t.Fatal("truncated payload decoded")
	} else if _, ok := wire.ItemPosition(err); ok {
		t.Fatalf("a truncated payload blamed on one item: %v", err)
	}
	if _, err := wire.DecodeItemsOwned[string](append(buf, 0xc0), 3); err == nil {
		t.Fatal("trailing byte accepted")
	} else if _, ok := wire.ItemPosition(err); ok {
		t.Fatalf("trailing bytes blamed on one item: %v", err)
	}
}

// A CollectAll RESULT carries its faults, then the other items' results.
func TestPartialFrame(t *testing.T) {
	indices := []int64{4, 5, 6, 7}
	faults := []wireFault{{Index: 5, Kind: uint8(KindUser), Message: "five"}, {Index: 7, Kind: uint8(KindWire), Message: "seven"}}
	buf, err := wholePartial(nil, 2, indices, faults, []string{"four", "six"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := wire.ParseHeader(buf)
	if err != nil || h.Status != statusPartial || h.Count != 4 {
		t.Fatalf("header %+v %v", h, err)
	}
	got, rest, err := splitIndices(h, buf[wire.HeaderSize:])
	if err != nil {
		t.Fatal(err)
	}
	fs, res, err := parsePartial(rest, got)
	if err != nil || len(fs) != 2 || fs[1].Message != "seven" {
		t.Fatalf("faults %+v %v", fs, err)
	}
	vals, err := wire.DecodeItemsOwned[string](res, 2)
	if err != nil || vals[0] != "four" || vals[1] != "six" {
		t.Fatalf("results %v %v", vals, err)
	}
	for _, bad := range [][]wireFault{{{Index: 9}}, {{Index: 6}, {Index: 5}}, {{Index: 5}, {Index: 5}}} {
		b, err := wholePartial[string](nil, 2, indices, bad, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := splitIndices(h, b[wire.HeaderSize:])
		if _, _, err := parsePartial(rest, indices); err == nil {
			t.Errorf("faults %+v accepted", bad)
		}
	}
}

// A DRAIN's statistics survive the round trip; malformed ones are refused.
func TestDrainStats(t *testing.T) {
	ms := []slotMeter{{items: 3, batches: 2, busy: time.Millisecond, spans: []BatchSpan{{Slot: 0, Batch: 4, Start: 8, Count: 2, Begin: 5, End: 9}}}, {items: 1, batches: 1, busy: 7}}
	v := drainStats(time.Second, ms)
	st, ok := parseDrainStats(v, 2)
	if !ok || st.wall != time.Second || len(st.meters) != 2 || st.meters[1].busy != 7 || len(st.meters[0].spans) != 1 || st.meters[0].spans[0].Rank != 2 || st.meters[0].spans[0].Start != 8 {
		t.Fatalf("%+v %v", st, ok)
	}
	for _, bad := range [][]int64{nil, {drainVersion}, {9, 0, 1, 0, 0, 0, 0}, v[:len(v)-1], append(append([]int64(nil), v...), 0)} {
		if _, ok := parseDrainStats(bad, 1); ok {
			t.Errorf("%v accepted", bad)
		}
	}
}
