//go:build !hataoridebug

package hataori

// Without the hataoridebug tag the coordinator records no events and
// traces nothing.

// traceOn is false: tracef and its arguments compile to nothing.
const traceOn = false

func debugTaskSent()       {}
func debugResultReceived() {}
func debugPrefetched(int)  {}
