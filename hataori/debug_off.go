//go:build !hataoridebug

package hataori

// Without the hataoridebug tag the coordinator records no events.

func debugTaskSent()       {}
func debugResultReceived() {}
func debugPrefetched(int)  {}
