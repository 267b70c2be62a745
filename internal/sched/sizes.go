package sched

import "slices"

// Sizes summarises the sizes of a set of batches (the zero value: none).
type Sizes struct {
	// Batches is how many batches there were.
	Batches int64
	// Min, Median and Max are the smallest, the median (the lower one for
	// an even count, so always a size that was given) and the largest
	// item count.
	Min, Median, Max int
}

// sizeCount is one bucket of a size histogram: Batches batches of Size
// items.
type sizeCount struct {
	size    int
	batches int64
}

// SizeHist is a histogram of batch sizes, sorted by size; the zero value
// is empty. A fixed size has one or two buckets; automatic sizes have one
// per distinct size. The Scheduler keeps one per (rank, slot); an engine
// can keep its own, e.g. per executor slot of a remote rank, whose
// logical slots (with prefetch) are not its executor slots.
type SizeHist []sizeCount

// Add counts one batch of n items.
func (h *SizeHist) Add(n int) { h.add(n) }

// Summary returns the smallest, median and largest size h counts.
func (h SizeHist) Summary() Sizes { return summary(h) }

// add counts one batch of n items; cost O(log buckets), plus a shift when
// n is a new size.
func (h *SizeHist) add(n int) {
	i, found := slices.BinarySearchFunc(*h, n, func(c sizeCount, n int) int { return c.size - n })
	if found {
		(*h)[i].batches++
		return
	}
	*h = slices.Insert(*h, i, sizeCount{size: n, batches: 1})
}

// totals returns the batches and items the histogram counts.
func (h SizeHist) totals() (batches, items int64) {
	for _, c := range h {
		batches += c.batches
		items += c.batches * int64(c.size)
	}
	return batches, items
}

// summary returns the histograms' merged Sizes.
func summary(hs ...SizeHist) Sizes {
	var all SizeHist
	for _, h := range hs {
		for _, c := range h {
			i, found := slices.BinarySearchFunc(all, c.size, func(a sizeCount, n int) int { return a.size - n })
			if found {
				all[i].batches += c.batches
			} else {
				all = slices.Insert(all, i, c)
			}
		}
	}
	n, _ := all.totals()
	if n == 0 {
		return Sizes{}
	}
	s := Sizes{Batches: n, Min: all[0].size, Max: all[len(all)-1].size}
	mid := (n - 1) / 2 // the lower median's rank
	for _, c := range all {
		if mid < c.batches {
			s.Median = c.size
			break
		}
		mid -= c.batches
	}
	return s
}
