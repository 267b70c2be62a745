package hataori

import (
	"errors"
	"reflect"

	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// checkWireTypes is the preflight type check of a collective call that
// moves values of type T one way and values of type U the other (Pmap:
// items and results): nil when both cross ranks exactly, otherwise the
// *wire.Error (kind wire.ErrType, matching ErrUnsupportedType) for T, or
// else for U. It is cached per type, so a repeated call costs two map
// lookups. Turn a non-nil result into the local preflight failure with
// wireTypeFailure and, after the ranks agreed on a failure of code
// failType, rebuild the cause every rank returns with wireTypeCause.
func checkWireTypes[T, U any]() error {
	if err := checkWireType[T](); err != nil {
		return err
	}
	return checkWireType[U]()
}

// checkWireType is checkWireTypes for the one value type of a data collective
// call.
func checkWireType[T any]() error { return wire.CheckType(reflect.TypeFor[T]()) }

// wireTypeFailure is the preflight failure for err, an error of
// checkWireTypes: code failType, and the type check's message without its
// "hataori: " prefix (the collective error adds its own).
func wireTypeFailure(err error) *failure {
	msg := err.Error()
	var we *wire.Error
	if errors.As(err, &we) {
		msg = we.Detail
	}
	return &failure{Code: failType, Message: msg}
}

// wireTypeCause returns the cause of an agreed preflight failure, the same
// on every rank: for code failType a *wire.Error of kind wire.ErrType
// carrying the agreed message (so errors.Is(err, ErrUnsupportedType)
// holds), for any other code nil.
func wireTypeCause(a *agreedFailure) error {
	if a == nil || a.Code != failType {
		return nil
	}
	return &wire.Error{Kind: wire.ErrType, Detail: a.Message}
}

// preflightCause is what the error of an agreed preflight failure unwraps
// to: the rebuilt type error for failType (wireTypeCause, equal on every
// rank), otherwise the agreed cause (the failing rank's own error there,
// its registered sentinel on every other rank), or nil.
func preflightCause(a *agreedFailure) error {
	if c := wireTypeCause(a); c != nil {
		return c
	}
	if a == nil {
		return nil
	}
	return a.Cause
}
