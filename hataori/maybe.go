package hataori

// Maybe holds a value or nothing. Collective calls use it where only one
// rank supplies a value, so that "this rank supplies nothing" ([None]) stays
// distinct from "this rank supplies an empty value" ([Some] of an empty slice).
type Maybe[T any] struct {
	v  T
	ok bool
}

// Some returns a [Maybe] holding v.
func Some[T any](v T) Maybe[T] { return Maybe[T]{v: v, ok: true} }

// None returns an empty [Maybe].
func None[T any]() Maybe[T] { return Maybe[T]{} }

// Get returns the value and whether there is one.
func (m Maybe[T]) Get() (T, bool) { return m.v, m.ok }

// Present reports whether m holds a value.
func (m Maybe[T]) Present() bool { return m.ok }
