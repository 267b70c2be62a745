//go:build (mpirt || mpicgo) && !linux

package hataori

import "time"

// WaitStderrRead reports false: off Linux it cannot tell whether standard
// error was read (see the Linux version).
func WaitStderrRead(bound time.Duration) bool { return false }
