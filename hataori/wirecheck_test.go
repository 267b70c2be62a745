//lint:file-ignore U1000 the test types carry unexported and unused fields on purpose: they are what the type check must refuse

package hataori

//lint:file-ignore U1000 the test types carry unexported fields nothing reads on purpose: they are what CheckType refuses (or, tagged, leaves out)

import (
	"errors"
	"strings"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/wire"
)

type wcPoint struct{ x, y int }

var _ = wcPoint{x: 1, y: 2} // the fields exist only to be refused

type wcSample struct {
	Name   string
	Values Bulk[float64]
}

func TestCheckWireTypes(t *testing.T) {
	if err := checkWireTypes[int, []float64](); err != nil {
		t.Errorf("checkWireTypes[int, []float64] = %v", err)
	}
	if err := checkWireTypes[wcSample, map[string]Bulk[int32]](); err != nil {
		t.Errorf("checkWireTypes[wcSample, map[string]Bulk[int32]] = %v", err)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{checkWireTypes[wcPoint, int](), "hataori: type hataori.wcPoint cannot cross ranks: field x is unexported"},
		{checkWireTypes[int, []any](), "hataori: type []interface {} cannot cross ranks: element [i] has interface type"},
		{checkWireTypes[any, wcPoint](), "hataori: type interface {} cannot cross ranks"}, // T first
		{checkWireType[chan int](), "hataori: type chan int cannot cross ranks"},
	} {
		var we *wire.Error
		if !errors.As(c.err, &we) || we.Kind != wire.ErrType || !errors.Is(c.err, ErrUnsupportedType) {
			t.Errorf("%v: want a *wire.Error of kind ErrType matching ErrUnsupportedType", c.err)
			continue
		}
		if !strings.HasPrefix(c.err.Error(), c.want) {
			t.Errorf("message %q, want prefix %q", c.err, c.want)
		}
	}
}

// TestWireTypeFailureRoundTrip follows a type-check failure through the
// preflight: the local failure, what the ranks agree on, and the cause of
// the CollectiveError every rank returns.
func TestWireTypeFailureRoundTrip(t *testing.T) {
	f := wireTypeFailure(checkWireType[wcPoint]())
	if f.Code != failType || !strings.HasPrefix(f.Message, "type hataori.wcPoint cannot cross ranks: field x is unexported") {
		t.Fatalf("failure %+v", f)
	}
	agreed := &agreedFailure{Rank: 1, Code: f.Code, Message: f.Message}
	cause := wireTypeCause(agreed)
	if !errors.Is(cause, ErrUnsupportedType) || cause.Error() != "hataori: "+f.Message {
		t.Fatalf("cause %v", cause)
	}
	pe := &CollectiveError{Kind: KindPreflight, Rank: 1, Op: "Gather", Message: agreed.Message, err: cause}
	var err error = pe
	if !errors.Is(err, ErrUnsupportedType) || !errors.Is(err, KindPreflight) || errors.Is(err, KindWire) {
		t.Errorf("errors.Is on %v: ErrUnsupportedType %v, KindPreflight %v, KindWire %v", err,
			errors.Is(err, ErrUnsupportedType), errors.Is(err, KindPreflight), errors.Is(err, KindWire))
	}
	want := "hataori: Gather preflight error reported by rank 1: type hataori.wcPoint cannot cross ranks: field x is unexported"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q, want prefix %q", err, want)
	}
	if c := wireTypeCause(&agreedFailure{Code: failEncode, Message: "x"}); c != nil {
		t.Errorf("cause of an encode failure = %v, want nil", c)
	}
	if c := wireTypeCause(nil); c != nil {
		t.Errorf("cause of no failure = %v, want nil", c)
	}
	if errors.Is(&CollectiveError{Kind: KindPreflight, Message: "m"}, ErrUnsupportedType) {
		t.Error("a CollectiveError without a type cause matches ErrUnsupportedType")
	}
}
