package hataori

import (
	"context"
	"fmt"
)

// Map applies f to every item, one after another on the calling goroutine,
// and returns the results in input order.
//
// It stops at the first error and returns a *[MapError] carrying that item's
// index and the error's bounded message; the callback's error stays
// reachable with errors.Is and errors.As. When ctx ends, Map starts no
// further item and returns an error wrapping ctx.Err(). A panic in f is
// re-raised on the caller as a *[PanicError] holding the original value and
// stack.
//
// Map has no concurrency: f needs no synchronisation.
//
// Nil arguments follow one policy across Hataori's calls: a nil ctx means
// context.Background(), and a nil f fails with [ErrNilCallback] before any
// item runs (in a collective call, on every rank).
func Map[T, U any](ctx context.Context, items []T, f func(T) (U, error)) ([]U, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if f == nil {
		return nil, ErrNilCallback
	}
	if err := ctx.Err(); err != nil {
		return nil, canceledError("Map", err)
	}
	out := make([]U, len(items))
	done := ctx.Done()
	normal := false
	defer func() {
		if !normal {
			// A nil recover means runtime.Goexit: let it carry on.
			if r := recover(); r != nil {
				panic(capturePanic(r))
			}
		}
	}()
	for i := range items {
		if done != nil {
			select {
			case <-done:
				normal = true
				return nil, canceledError("Map", ctx.Err())
			default:
			}
		}
		u, err := f(items[i])
		if err != nil {
			normal = true
			return nil, newMapError(i, err)
		}
		out[i] = u
	}
	normal = true
	return out, nil
}

// canceledError wraps a context's error for the local calls.
func canceledError(op string, err error) error {
	return fmt.Errorf("hataori: %s stopped: %w", op, err)
}
