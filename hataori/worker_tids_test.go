package hataori

// workerTIDs returns the current thread id of each worker, by slot (for
// the affinity and thread tests).
func (d *Domain) workerTIDs() []int {
	out := make([]int, len(d.workers))
	for i, w := range d.workers {
		out[i] = int(w.tid.Load())
	}
	return out
}
