package hataori

import "github.com/hataori/hataori-go/hataori/internal/wire"

// Number is the set of element types a Bulk slice may hold.
type Number = wire.Number

// Bulk is a numeric slice that crosses ranks as one block of little-endian
// bytes instead of element by element. A value of type []float64, []int64,
// []byte, … passed directly (as a Pmap item or result, or a Broadcast, Scatter or Gather value)
// already travels in bulk; declare numeric slices nested inside structs as
// Bulk to get the same:
//
//	type Sample struct {
//		Name   string
//		Values hataori.Bulk[float64]
//	}
//
// Bulk converts freely to and from []E.
type Bulk[E Number] = wire.Bulk[E]
