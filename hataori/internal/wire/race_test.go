//go:build race && (mpirt || mpicgo)

package wire

// raceEnabled: allocation counts are not meaningful under -race.
const raceEnabled = true
