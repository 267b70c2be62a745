package lanes

import (
	"context"
	"sync"
	"time"
)

// Control is the cancellation signal of one run, shared by every lane body
// and the coordinator. It is a [context.Context]: pass it to code that takes
// a context, and it ends with the run. It is cancelled when a lane body
// returns an error or panics, when the coordinator leaves (by returning, by
// error or by panic), when the run's context is done, when any holder calls
// Cancel, and in any case once every lane has been joined. Its deadline and
// values are the run's context's.
//
// A Control is valid only for the run that created it.
type Control struct {
	parent context.Context
	once   sync.Once
	done   chan struct{}
}

var _ context.Context = (*Control)(nil)

func newControl(parent context.Context) *Control {
	return &Control{parent: parent, done: make(chan struct{})}
}

// Cancel cancels the control, releasing every goroutine waiting on Done.
// It may be called any number of times, from any goroutine.
func (c *Control) Cancel() { c.once.Do(func() { close(c.done) }) }

// Done returns a channel that is closed when the control is cancelled.
func (c *Control) Done() <-chan struct{} { return c.done }

// Canceled reports whether the control has been cancelled; the same as
// Err() != nil.
func (c *Control) Canceled() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Err returns nil while the control is not cancelled; then the run's
// context's error when that context is done, else [context.Canceled].
func (c *Control) Err() error {
	if !c.Canceled() {
		return nil
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	return context.Canceled
}

// Deadline returns the run's context's deadline.
func (c *Control) Deadline() (deadline time.Time, ok bool) { return c.parent.Deadline() }

// Value returns the run's context's value for key.
func (c *Control) Value(key any) any { return c.parent.Value(key) }
