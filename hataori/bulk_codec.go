//go:build mpirt || mpicgo

package hataori

import (
	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/vmihailenco/msgpack/v5"
)

// The wire codec of Bulk, in builds with an MPI backend only (without one
// nothing crosses ranks). These methods are an implementation detail of how
// a Bulk travels (msgpack calls them for a Bulk anywhere inside a value,
// and the wire type check trusts a type that has them); call sites in user
// code are not supported.

// EncodeMsgpack writes b as one msgpack bin value of little-endian bytes
// (msgpack nil for a nil b). Implementation detail of the wire codec.
func (b Bulk[E]) EncodeMsgpack(enc *msgpack.Encoder) error { return wire.EncodeBulk(enc, []E(b)) }

// DecodeMsgpack reads what EncodeMsgpack wrote into *b, as a new slice.
// Implementation detail of the wire codec.
func (b *Bulk[E]) DecodeMsgpack(dec *msgpack.Decoder) error {
	s, err := wire.DecodeBulk[E](dec)
	if err != nil {
		return err
	}
	*b = s
	return nil
}
