//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
	"github.com/vmihailenco/msgpack/v5"
)

// The values of a Pmap must come back the same whichever rank computed
// them: the root's own results never cross the wire, the other ranks'
// are decoded on the root. These tests compare every item of a Pmap with
// a local Map of the same function, with remote ranks forced to compute
// some items (remoteGate), so the verdict does not depend on which rank
// ran which item.

// timeJobs runs test on 2 ranks in the machine's own zone and on 4 ranks
// with time.Local = America/New_York (a zone with DST changes, crossed by
// the test's instants).
func timeJobs(t *testing.T, test string) {
	mpitest.Run(t, mpitest.Config{Ranks: 2, Timeout: 120 * time.Second, Test: test})
	mpitest.Run(t, mpitest.Config{Ranks: 4, Timeout: 120 * time.Second, Test: test, Env: []string{"TZ=America/New_York"}})
}

// testZones are the locations the time tests use: UTC, Local, fixed zones
// with and without a name (one called "UTC" that is not time.UTC), and
// two zones loaded from the tz database.
func testZones(t *testing.T) []*time.Location {
	t.Helper()
	var locs []*time.Location
	for _, name := range []string{"Asia/Kolkata", "America/New_York"} {
		l, err := time.LoadLocation(name)
		if err != nil {
			t.Fatalf("no tz database entry %s: %v", name, err)
		}
		locs = append(locs, l)
	}
	return append([]*time.Location{time.UTC, time.Local, time.FixedZone("UTC+5:30", 19800), time.FixedZone("", -3600),
		time.FixedZone("UTC", 0)}, locs...)
}

// timeOf is item i's time: instants 7 min 13 s apart from 2024-03-10 05:00
// UTC (so America/New_York's spring-forward at 07:00 UTC is crossed), in
// zone i mod len(zones), with i nanoseconds; every 23rd item is the zero
// time, every 29th the zero time in a zone.
func timeOf(zones []*time.Location, i int) time.Time {
	switch {
	case i%23 == 5:
		return time.Time{}
	case i%29 == 7:
		return time.Time{}.In(zones[i%len(zones)])
	}
	base := time.Date(2024, 3, 10, 5, 0, 0, 0, time.UTC)
	return base.Add(time.Duration(i)*(7*time.Minute+13*time.Second) + time.Duration(i)).In(zones[i%len(zones)])
}

// timeCarrier holds times the ways a value can: a field, a pointer, a
// slice, a map value, inside a nested struct.
type timeCarrier struct {
	At    time.Time
	Ptr   *time.Time
	List  []time.Time
	ByKey map[string]time.Time
	Inner struct{ When []*time.Time }
	Label string
}

func carrierOf(zones []*time.Location, i int) timeCarrier {
	c := timeCarrier{At: timeOf(zones, i), Label: fmt.Sprint("item ", i), ByKey: map[string]time.Time{}}
	if i%2 == 0 {
		p := timeOf(zones, i+1)
		c.Ptr = &p
	}
	for k := range zones {
		c.List = append(c.List, timeOf(zones, i+k))
		c.ByKey[fmt.Sprint(k)] = timeOf(zones, 3*i+k)
	}
	p := timeOf(zones, i+2)
	c.Inner.When = []*time.Time{nil, &p}
	return c
}

// diffTime says how b differs from a: as an instant, in Zone() name or
// offset, or in Location().String(); "" when they agree in all three.
func diffTime(a, b time.Time) string {
	an, ao := a.Zone()
	bn, bo := b.Zone()
	switch {
	case !a.Equal(b):
		return fmt.Sprintf("instant %v, want %v", b, a)
	case an != bn || ao != bo:
		return fmt.Sprintf("zone (%q, %d), want (%q, %d)", bn, bo, an, ao)
	case a.Location().String() != b.Location().String():
		return fmt.Sprintf("location %q, want %q", b.Location(), a.Location())
	}
	return ""
}

func diffCarrier(a, b timeCarrier) string {
	if d := diffTime(a.At, b.At); d != "" {
		return "At: " + d
	}
	if (a.Ptr == nil) != (b.Ptr == nil) {
		return fmt.Sprintf("Ptr nil %v, want %v", b.Ptr == nil, a.Ptr == nil)
	}
	if a.Ptr != nil {
		if d := diffTime(*a.Ptr, *b.Ptr); d != "" {
			return "Ptr: " + d
		}
	}
	if len(a.List) != len(b.List) || len(a.ByKey) != len(b.ByKey) || len(a.Inner.When) != len(b.Inner.When) || a.Label != b.Label {
		return fmt.Sprintf("shape %+v, want %+v", b, a)
	}
	for k := range a.List {
		if d := diffTime(a.List[k], b.List[k]); d != "" {
			return fmt.Sprintf("List[%d]: %s", k, d)
		}
	}
	for k, v := range a.ByKey {
		w, ok := b.ByKey[k]
		if !ok {
			return fmt.Sprintf("ByKey[%s] missing", k)
		}
		if d := diffTime(v, w); d != "" {
			return fmt.Sprintf("ByKey[%s]: %s", k, d)
		}
	}
	for k, p := range a.Inner.When {
		q := b.Inner.When[k]
		if (p == nil) != (q == nil) {
			return fmt.Sprintf("Inner.When[%d] nil %v, want %v", k, q == nil, p == nil)
		}
		if p != nil {
			if d := diffTime(*p, *q); d != "" {
				return fmt.Sprintf("Inner.When[%d]: %s", k, d)
			}
		}
	}
	return ""
}

// remoteGate makes the root's callbacks wait until at least n items have
// finished, which while the root's own slots wait can only be items that
// other ranks computed: so every call has items from both sides, whatever
// the schedule. The root's coordinator opens it (OnProgress).
type remoteGate struct {
	open chan struct{}
	once sync.Once
	n    int
}

func newRemoteGate(n int) *remoteGate { return &remoteGate{open: make(chan struct{}), n: n} }

func (g *remoteGate) options(o Options) Options {
	o.ProgressEvery = time.Nanosecond
	o.OnProgress = func(p Progress) {
		if p.Done >= g.n || p.Done == p.Total {
			g.once.Do(func() { close(g.open) })
		}
	}
	return o
}

// wait holds a root callback until the gate opens or the call is stopped
// (ctx: a failure elsewhere; an error after a minute, so that a bug fails
// the test instead of hanging it).
func (g *remoteGate) wait(ctx context.Context, rank int) error {
	if rank != 0 {
		return nil
	}
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(time.Minute):
		return errors.New("remote ranks computed nothing for a minute")
	}
}

// pmapVsMap runs f over n items with Pmap (remote ranks forced to compute
// some) and with Map on the root, and reports every index whose results
// differ (diff says how, "" when they agree). It checks that remote ranks
// computed items.
func pmapVsMap[U any](e *rankEnv, what string, d *Domain, mode LocalMode, n int, f func(int) U, diff func(want, got U) string) {
	t := e.t
	t.Helper()
	ctx := context.Background()
	g := newRemoteGate(min(n, max(12, n/4)))
	var remote atomic.Int64
	got, err := PmapContext(ctx, e.world, d, g.options(Options{BatchSize: 1, Mode: mode}), e.items(n), func(ctx context.Context, i int) (U, error) {
		if err := g.wait(ctx, e.rank); err != nil {
			var zero U
			return zero, err
		}
		if e.rank != 0 {
			remote.Add(1)
		}
		return f(i), nil
	})
	if err != nil {
		t.Fatalf("%s: rank %d: %v", what, e.rank, err)
	}
	r := e.sum(remote.Load())
	if e.size > 1 && r == 0 {
		t.Errorf("%s: remote ranks computed no item", what)
	}
	if e.rank == 0 {
		t.Logf("%s: remote ranks computed %d of %d items", what, r, n)
	}
	if e.rank != 0 {
		return
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	want, err := Map(ctx, idx, func(i int) (U, error) { return f(i), nil })
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := range want {
		if msg := diff(want[i], got[i]); msg != "" {
			if bad < 5 {
				t.Errorf("%s: item %d: %s", what, i, msg)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d items differ from a local Map", what, bad, n)
	}
}

// TestPmapTimeMPI: time.Time results (alone and inside a struct) in UTC,
// Local, fixed and tz-database zones come back from every rank as a local
// Map computes them: the same instant, Zone() name and offset, and
// Location().String(); and so do times moved by Broadcast, Scatter and
// Gather.
func TestPmapTimeMPI(t *testing.T) {
	if !mpitest.Child() {
		timeJobs(t, "TestPmapTimeMPI")
		return
	}
	e := newRankEnv(t)
	zones := testZones(t)
	if e.rank == 0 {
		name, off := timeOf(zones, 1).Zone()
		t.Logf("time.Local: %s, at item 1's instant %s %+d", time.Local, name, off)
	}
	const n = 200
	for _, m := range []struct {
		name string
		d    *Domain
		mode LocalMode
	}{{"mpi-only", nil, Sequential}, {"outer", e.dom, Outer}} {
		pmapVsMap(e, m.name+" time.Time", m.d, m.mode, n, func(i int) time.Time { return timeOf(zones, i) }, diffTime)
		pmapVsMap(e, m.name+" struct", m.d, m.mode, n, func(i int) timeCarrier { return carrierOf(zones, i) }, diffCarrier)
	}
	// Items cross too: a Pmap whose items are times returns what each
	// item's rank received.
	ctx := context.Background()
	var items Maybe[[]time.Time]
	if e.rank == 0 {
		xs := make([]time.Time, n)
		for i := range xs {
			xs[i] = timeOf(zones, i)
		}
		items = Some(xs)
	}
	g := newRemoteGate(n / 4)
	echo, err := PmapContext(ctx, e.world, nil, g.options(Options{BatchSize: 1}), items, func(ctx context.Context, x time.Time) (timeCarrier, error) {
		if err := g.wait(ctx, e.rank); err != nil {
			return timeCarrier{}, err
		}
		// What the callback saw, as strings computed where it ran.
		name, off := x.Zone()
		return timeCarrier{At: x, Label: fmt.Sprintf("%s|%s|%d|%d", x.Location(), name, off, x.UnixNano())}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if e.rank == 0 {
		for i, c := range echo {
			x := timeOf(zones, i)
			name, off := x.Zone()
			if want := fmt.Sprintf("%s|%s|%d|%d", x.Location(), name, off, x.UnixNano()); c.Label != want {
				t.Errorf("item %d arrived at its rank as %s, want %s", i, c.Label, want)
			}
			if d := diffTime(x, c.At); d != "" {
				t.Errorf("item %d came back: %s", i, d)
			}
		}
	}

	// Broadcast from every root, Scatter, Gather.
	for root := range e.size {
		var v Maybe[timeCarrier]
		if e.rank == root {
			v = Some(carrierOf(zones, 40+root))
		}
		got, err := Broadcast(ctx, e.world, root, v)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffCarrier(carrierOf(zones, 40+root), got); d != "" {
			t.Errorf("Broadcast from %d: rank %d: %s", root, e.rank, d)
		}
	}
	var shards Maybe[[]timeCarrier]
	if e.rank == 0 {
		s := make([]timeCarrier, e.size)
		for r := range s {
			s[r] = carrierOf(zones, 60+r)
		}
		shards = Some(s)
	}
	mine, err := Scatter(ctx, e.world, 0, shards)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffCarrier(carrierOf(zones, 60+e.rank), mine); d != "" {
		t.Errorf("Scatter: rank %d: %s", e.rank, d)
	}
	all, err := Gather(ctx, e.world, 0, carrierOf(zones, 80+e.rank))
	if err != nil {
		t.Fatal(err)
	}
	for r, c := range all {
		if d := diffCarrier(carrierOf(zones, 80+r), c); d != "" {
			t.Errorf("Gather: from rank %d: %s", r, d)
		}
	}
}

// Types with their own encoding, one of each kind msgpack honours.

// ownCoded keeps unexported state through EncodeMsgpack/DecodeMsgpack.
type ownCoded struct{ a, b int }

func (o ownCoded) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(2); err != nil {
		return err
	}
	if err := enc.EncodeInt(int64(o.a)); err != nil {
		return err
	}
	return enc.EncodeInt(int64(o.b))
}

func (o *ownCoded) DecodeMsgpack(dec *msgpack.Decoder) error {
	if n, err := dec.DecodeArrayLen(); err != nil || n != 2 {
		return fmt.Errorf("ownCoded: want an array of 2, got %d (%v)", n, err)
	}
	var err error
	if o.a, err = dec.DecodeInt(); err != nil {
		return err
	}
	o.b, err = dec.DecodeInt()
	return err
}

// binCoded travels by MarshalBinary/UnmarshalBinary.
type binCoded struct{ v uint32 }

func (b binCoded) MarshalBinary() ([]byte, error) {
	return binary.LittleEndian.AppendUint32(nil, b.v), nil
}

func (b *binCoded) UnmarshalBinary(p []byte) error {
	if len(p) != 4 {
		return errors.New("binCoded: want 4 bytes")
	}
	b.v = binary.LittleEndian.Uint32(p)
	return nil
}

// textCoded travels by MarshalText/UnmarshalText.
type textCoded struct{ s string }

func (c textCoded) MarshalText() ([]byte, error) { return []byte("<" + c.s + ">"), nil }

func (c *textCoded) UnmarshalText(p []byte) error {
	s, ok1 := strings.CutPrefix(string(p), "<")
	s, ok2 := strings.CutSuffix(s, ">")
	if !ok1 || !ok2 {
		return errors.New("textCoded: not <…>")
	}
	c.s = s
	return nil
}

type crossInner struct{ X, Y int }

// crossStruct holds what README's "What crosses ranks" lists, structs by
// exported fields (renamed by tag, an embedded struct inlined).
type crossStruct struct {
	crossInner
	Name   string
	Tagged int `msgpack:"t"`
	Ptr    *crossInner
	Kids   []crossInner
	Arr    [2]float32
	Index  map[int64][]string
	Bulk   Bulk[float64]
	Cplx   Bulk[complex128]
	Own    ownCoded
	Bin    *binCoded
	Text   textCoded
}

// TestPmapCrossesMPI: a value of every kind the README says crosses ranks
// comes back from a remote rank identical (reflect.DeepEqual) to what a
// local Map computes.
func TestPmapCrossesMPI(t *testing.T) {
	if !mpitest.Child() {
		timeJobs(t, "TestPmapCrossesMPI")
		return
	}
	e := newRankEnv(t)
	const n = 24
	crossCheck(e, "int", n, func(i int) int { return i*i - 100 })
	crossCheck(e, "int8", n, func(i int) int8 { return int8(-128 + i) })
	crossCheck(e, "uint64", n, func(i int) uint64 { return math.MaxUint64 - uint64(i) })
	crossCheck(e, "float64", n, func(i int) float64 {
		return []float64{math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 5e-324, math.MaxFloat64, 1.0 / 3}[i%6] * float64(i+1)
	})
	crossCheck(e, "float32", n, func(i int) float32 { return float32(i) / 7 })
	crossCheck(e, "bool", n, func(i int) bool { return i%3 == 0 })
	crossCheck(e, "string", n, func(i int) string { return strings.Repeat("é\xff\x00", i) })
	crossCheck(e, "[]int", n, func(i int) []int {
		switch i % 3 {
		case 0:
			return nil
		case 1:
			return []int{}
		}
		return []int{i, -i}
	})
	crossCheck(e, "[]string", n, func(i int) []string { return []string{fmt.Sprint(i), ""} })
	crossCheck(e, "[3]uint16", n, func(i int) [3]uint16 { return [3]uint16{uint16(i), 65535, 0} })
	crossCheck(e, "map[string]int", n, func(i int) map[string]int {
		switch i % 3 {
		case 0:
			return nil
		case 1:
			return map[string]int{}
		}
		return map[string]int{"a": i, "b": -i}
	})
	crossCheck(e, "map[[2]int]string", n, func(i int) map[[2]int]string { return map[[2]int]string{{i, 1}: "x", {0, i}: ""} })
	crossCheck(e, "*int", n, func(i int) *int {
		if i%2 == 0 {
			return nil
		}
		return &i
	})
	crossCheck(e, "[]float64 (bulk)", n, func(i int) []float64 {
		if i%4 == 0 {
			return nil
		}
		return make([]float64, i%4-1)
	})
	crossCheck(e, "[]byte (bulk)", n, func(i int) []byte { return []byte(strings.Repeat("b", i)) })
	crossCheck(e, "[]complex64 (bulk)", n, func(i int) []complex64 { return []complex64{complex(float32(i), -1)} })
	crossCheck(e, "Bulk[int32]", n, func(i int) Bulk[int32] { return Bulk[int32]{int32(i), -1} })
	crossCheck(e, "ownCoded", n, func(i int) ownCoded { return ownCoded{i, -i} })
	crossCheck(e, "binCoded", n, func(i int) binCoded { return binCoded{uint32(i) * 1e8} })
	crossCheck(e, "textCoded", n, func(i int) textCoded { return textCoded{fmt.Sprint(i)} })
	crossCheck(e, "struct", n, func(i int) crossStruct {
		c := crossStruct{crossInner: crossInner{i, -i}, Name: fmt.Sprint("s", i), Tagged: i, Kids: []crossInner{{1, 2}},
			Arr: [2]float32{1.5, float32(i)}, Index: map[int64][]string{-1: {"a"}, int64(i): nil},
			Bulk: Bulk[float64]{float64(i)}, Cplx: Bulk[complex128]{complex(1, float64(i))}, Own: ownCoded{i, i + 1},
			Text: textCoded{"t"}}
		if i%2 == 1 {
			c.Ptr = &crossInner{i, i}
			c.Bin = &binCoded{uint32(i)}
		}
		return c
	})
	crossCheck(e, "*struct", n, func(i int) *crossInner {
		if i%3 == 0 {
			return nil
		}
		return &crossInner{i, 2 * i}
	})
}

// crossCheck is pmapVsMap with reflect.DeepEqual as the comparison.
func crossCheck[U any](e *rankEnv, what string, n int, f func(int) U) {
	e.t.Helper()
	pmapVsMap(e, what, nil, Sequential, n, f, func(want, got U) string {
		if !reflect.DeepEqual(want, got) {
			return fmt.Sprintf("got %#v, want %#v", got, want)
		}
		return ""
	})
}
