//go:build race

package wire

// raceEnabled: allocation counts are not meaningful under -race.
const raceEnabled = true
