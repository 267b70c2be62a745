//go:build race

package mpiabi_test

// raceEnabled: the race detector makes sync.Pool (used inside purego) drop
// items at random, so allocation counts are meaningless under -race.
const raceEnabled = true
