// Package stats holds the summary statistics the benchmark programs print.
package stats

import "slices"

// Median returns the median of xs (the mean of the two middle values for
// an even count) without reordering xs, and the zero value for none.
func Median[T ~int64 | ~float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
