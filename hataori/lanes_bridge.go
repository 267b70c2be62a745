package hataori

import (
	"cmp"
	"context"

	"github.com/hataori/hataori-go/internal/seam"
)

// The bridge to package lanes, which builds on hataori through the hooks
// of internal/seam (so that neither package imports the other): a carrier
// Domain holds the lanes' executor and callback (foreignExec), and
// PmapContext hands such a domain to pmapForeign.

// foreignExec is what a carrier domain of package lanes holds: the lanes'
// executor and the Pmap callback, which takes the slot (the lane index).
type foreignExec struct {
	exec seam.Executor
	fn   any // func(slot int, item T) (U, error)
}

func init() {
	seam.Carrier = func(exec seam.Executor, fn any) any {
		return &Domain{id: -1, foreign: &foreignExec{exec: exec, fn: fn}}
	}
	seam.MapError = func(i int, err error) error { return newMapError(i, err) }
	seam.CapturePanic = func(lane int, r any) any {
		p := capturePanic(r)
		p.Lane = lane
		return p
	}
	seam.Repanic = func(p any) { repanic(p.(*PanicError)) }
}

// pmapForeign is pmapWith on a carrier domain of package lanes (fe): its
// callback takes the slot (the lane index). A nil fn is a nil lanes
// callback: refused in the preflight.
func pmapForeign[T, U any](ctx context.Context, comm Comm, fe *foreignExec, opts Options, in pmapInput[T, U], extra *failure) ([]U, error) {
	if fe.fn == nil {
		g := func(context.Context, int, T) (U, error) { var zero U; return zero, ErrNilCallback }
		return pmapOn(ctx, comm, fe.exec, opts, in, g, cmp.Or(extra, &failure{Code: failDomain, Err: ErrNilCallback, Message: ErrNilCallback.Error()}))
	}
	g, _ := fe.fn.(func(context.Context, int, T) (U, error))
	if g == nil {
		panic("hataori: internal error: lanes callback of the wrong type")
	}
	return pmapOn(ctx, comm, fe.exec, opts, in, g, extra)
}
