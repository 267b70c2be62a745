//go:build mpirt || mpicgo

package wire

import "github.com/vmihailenco/msgpack/v5"

// Bulk is the tests' bulk slice type, declared as hataori.Bulk is (a named
// numeric slice whose msgpack methods are EncodeBulk and DecodeBulk), so
// that the codec's treatment of such fields is tested here.
type Bulk[E Number] []E

func (b Bulk[E]) EncodeMsgpack(enc *msgpack.Encoder) error { return EncodeBulk(enc, []E(b)) }

func (b *Bulk[E]) DecodeMsgpack(dec *msgpack.Decoder) error {
	s, err := DecodeBulk[E](dec)
	if err != nil {
		return err
	}
	*b = s
	return nil
}
