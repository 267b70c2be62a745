//go:build mpirt || mpicgo

package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// wtPoint would arrive as {0 0}: msgpack skips unexported fields.
type wtPoint struct{ x, y int }

// wtPerson would lose hid.
type wtPerson struct {
	Name string
	hid  float64
}

// wtSecret keeps unexported state through its own encoding, with
// pointer-receiver methods.
type wtSecret struct{ code int32 }

func (s *wtSecret) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.EncodeInt32(s.code) }

func (s *wtSecret) DecodeMsgpack(dec *msgpack.Decoder) error {
	v, err := dec.DecodeInt32()
	s.code = v
	return err
}

type wtLeaf struct {
	Label  string
	Vals   hataori.Bulk[float64]
	Cplx   hataori.Bulk[complex128]
	Secret wtSecret
	Skip   string `msgpack:"-"`
}

type wtValue struct {
	Rank   int
	Name   string
	Leaves []wtLeaf
	Index  map[string][]int32
	Grid   [2][3]uint16
	Next   *wtValue
	Nil    *wtValue
	Raw    []byte
	When   time.Time
	Scaled float32
}

func wtMake(rank int) wtValue {
	return wtValue{
		Rank: rank, Name: fmt.Sprintf("ränk %d ✓", rank),
		Leaves: []wtLeaf{{Label: "a", Vals: hataori.Bulk[float64]{1.5, float64(rank)}, Cplx: hataori.Bulk[complex128]{complex(0, float64(rank))},
			Secret: wtSecret{code: int32(-rank - 1)}}, {}},
		Index: map[string][]int32{"r": {int32(rank)}, "nil": nil, "empty": {}},
		Grid:  [2][3]uint16{{1, 2, 3}, {uint16(rank), 65535, 0}},
		Next:  &wtValue{Name: "next", Raw: []byte{}},
		Raw:   []byte{0, byte(rank), 255},
		When:  time.Date(2025, 1, 2, 3, 4, 5, 600+rank, time.Local),
	}
}

// TestDataWireTypeMPI: a Broadcast, Scatter or Gather of a type whose
// values would not survive the wire fails in the preflight with the same
// error on every rank (matching ErrUnsupportedType and naming the field),
// before any value is encoded; supported types round-trip exactly.
func TestDataWireTypeMPI(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 120 * time.Second})
		}
		return
	}
	rank, size := mpitest.Init(t)
	world, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	e := &placeEnv{t: t, ctx: context.Background(), world: world, rank: rank, size: size}
	last := size - 1
	// refused runs a call that the type check must stop before any value
	// is encoded.
	refused := func(label string, call func() error) error {
		enc0, _ := wire.Counts()
		err := call()
		if enc1, _ := wire.Counts(); wire.Counting && enc1 != enc0 {
			t.Errorf("%s encoded %d values; the type check must come first", label, enc1-enc0)
		}
		return err
	}

	e.ownMessage()
	err = refused("Broadcast", func() error {
		_, err := hataori.Broadcast(e.ctx, world, 0, someOn(rank == 0, wtPoint{1, 2}))
		return err
	})
	e.expectType("Broadcast of wtPoint", err, 0, "type hataori_test.wtPoint cannot cross ranks: field x is unexported")

	e.ownMessage()
	err = refused("Gather", func() error {
		_, err := hataori.Gather(e.ctx, world, last, wtPerson{Name: "p", hid: float64(rank)})
		return err
	})
	e.expectType("Gather of wtPerson", err, 0, "type hataori_test.wtPerson cannot cross ranks: field hid is unexported")

	e.ownMessage()
	var shards hataori.Maybe[[]any]
	if rank == 0 {
		shards = hataori.Some(make([]any, size))
	}
	err = refused("Scatter", func() error {
		_, err := hataori.Scatter(e.ctx, world, 0, shards)
		return err
	})
	e.expectType("Scatter of any", err, 0, "type interface {} cannot cross ranks: it has interface type interface {}")

	e.ownMessage()
	err = refused("Gather of a slice", func() error {
		_, err := hataori.Gather(e.ctx, world, 0, []wtPoint{{1, 2}})
		return err
	})
	e.expectType("Gather of []wtPoint", err, 0, "field [i].x is unexported")

	// Only the last rank calls with a type that cannot cross: its failure
	// is what every rank returns. (The others encode their values in their
	// local preflight, but no frame moves.)
	e.ownMessage()
	if rank == last {
		err = refused("Gather of map[string]any", func() error {
			_, err := hataori.Gather(e.ctx, world, 0, map[string]any{"k": 1})
			return err
		})
	} else {
		_, err = hataori.Gather(e.ctx, world, 0, map[string]int{"k": 1})
	}
	e.expectType("Gather with a refused type on the last rank", err, last, "type map[string]interface {} cannot cross ranks: element [k] has interface type")

	// Supported types round-trip exactly.
	for root := 0; root < size; root++ {
		want := wtMake(root)
		got, err := hataori.Broadcast(e.ctx, world, root, someOn(rank == root, want))
		if err != nil || !wtEqual(got, want) {
			t.Errorf("Broadcast root %d = %+v, %v; want %+v", root, got, err, want)
		}
	}
	var all hataori.Maybe[[]wtValue]
	if rank == last {
		vs := make([]wtValue, size)
		for i := range vs {
			vs[i] = wtMake(100 + i)
		}
		all = hataori.Some(vs)
	}
	shard, err := hataori.Scatter(e.ctx, world, last, all)
	if want := wtMake(100 + rank); err != nil || !wtEqual(shard, want) {
		t.Errorf("Scatter = %+v, %v; want %+v", shard, err, want)
	}
	gathered, err := hataori.Gather(e.ctx, world, 0, wtMake(rank))
	switch {
	case err != nil:
		t.Errorf("Gather: %v", err)
	case rank == 0:
		for i, v := range gathered {
			if !wtEqual(v, wtMake(i)) {
				t.Errorf("Gather: value of rank %d = %+v, want %+v", i, v, wtMake(i))
			}
		}
	}
	nums, err := hataori.Gather(e.ctx, world, 0, []complex128{complex(float64(rank), -1)})
	if err != nil || (rank == 0 && (len(nums) != size || nums[last][0] != complex(float64(last), -1))) {
		t.Errorf("Gather of []complex128 = %v, %v", nums, err)
	}
}

// expectType checks a converged type-check failure (see expect) and that
// it matches ErrUnsupportedType.
func (e *placeEnv) expectType(label string, err error, rank int, substr string) {
	e.t.Helper()
	e.expect(label, err, hataori.KindPreflight, rank, substr)
	if !errors.Is(err, hataori.ErrUnsupportedType) {
		e.t.Errorf("%s: errors.Is(%v, ErrUnsupportedType) is false", label, err)
	}
	if err != nil && !strings.Contains(err.Error(), "preflight error reported by rank") {
		e.t.Errorf("%s: %v is not a converged preflight error", label, err)
	}
}

// wtEqual is reflect.DeepEqual, with times compared as instants: a
// time.Time keeps its instant and its zone across ranks; Equal, the weaker check, is enough here.
func wtEqual(a, b wtValue) bool {
	if !a.When.Equal(b.When) {
		return false
	}
	a.When, b.When = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}
