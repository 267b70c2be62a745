// Package errmsg bounds error messages that cross rank boundaries.
package errmsg

import "unicode/utf8"

// Max is the largest message, in bytes, that Hataori reports or transmits.
const Max = 4096

// Bound returns s cut to at most Max bytes, only at a UTF-8 character
// boundary, so the result is valid UTF-8 whenever s is.
func Bound(s string) string {
	if len(s) <= Max {
		return s
	}
	cut := Max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
