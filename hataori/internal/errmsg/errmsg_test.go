package errmsg

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBound(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"short", "hello", 5},
		{"exact", strings.Repeat("a", Max), Max},
		{"ascii long", strings.Repeat("a", Max+10), Max},
		// "é" is 2 bytes: 4096 bytes = 2048 runes exactly.
		{"two-byte exact", strings.Repeat("é", Max), Max},
		// "€" is 3 bytes: 4096 is not a multiple of 3, so the cut backs off to 4095.
		{"three-byte", strings.Repeat("€", 2000), 4095},
		// "𝄞" is 4 bytes: 4096 is a multiple of 4.
		{"four-byte", strings.Repeat("𝄞", 2000), 4096},
		{"offset four-byte", "a" + strings.Repeat("𝄞", 2000), 4093},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Bound(tt.in)
			if len(got) != tt.want {
				t.Fatalf("len = %d, want %d", len(got), tt.want)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("result is not valid UTF-8")
			}
			if !strings.HasPrefix(tt.in, got) {
				t.Fatalf("result is not a prefix of the input")
			}
		})
	}
}
