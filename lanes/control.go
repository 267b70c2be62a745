package lanes

import "sync"

// Control is the cancellation signal of one run, shared by every lane body
// and the coordinator, in the style of context.Context. It is cancelled when
// a lane body returns an error or panics, when the coordinator leaves (by
// returning, by error or by panic), when the run's context is done, when any
// holder calls Cancel, and in any case once every lane has been joined.
//
// A Control is valid only for the run that created it.
type Control struct {
	once sync.Once
	done chan struct{}
}

func newControl() *Control { return &Control{done: make(chan struct{})} }

// Cancel cancels the control, releasing every goroutine waiting on Done.
// It may be called any number of times, from any goroutine.
func (c *Control) Cancel() { c.once.Do(func() { close(c.done) }) }

// Done returns a channel that is closed when the control is cancelled.
func (c *Control) Done() <-chan struct{} { return c.done }

// Canceled reports whether the control has been cancelled.
func (c *Control) Canceled() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}
