package mpiabi_test

import (
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/hataori/hataori-go/mpiabi"
)

// BenchmarkCallOverhead compares, on the fake library, a plain
// purego.SyscallN call of MPIABI_Iprobe with a literal argument list (the
// baseline, which allocates its argument list) with Lib.Iprobe, and reports
// the ratio of the two measured in one run (interleaved batches).
func BenchmarkCallOverhead(b *testing.B) {
	path := buildFixture(b, "fake.c", nil)
	l, err := mpiabi.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW)
	if err != nil {
		b.Fatal(err)
	}
	fn, err := purego.Dlsym(h, "MPIABI_Iprobe")
	if err != nil {
		b.Fatal(err)
	}
	st := new(mpiabi.Status)
	flag := new(int32)
	base := func() {
		purego.SyscallN(fn, 1, 0, uintptr(l.CommWorld), uintptr(unsafe.Pointer(flag)), uintptr(unsafe.Pointer(st)))
	}
	lib := func() { _, _ = l.Iprobe(1, 0, l.CommWorld, st) }
	allocsBase, allocsLib := testing.AllocsPerRun(100, base), testing.AllocsPerRun(100, lib)
	const batch = 1000 // calls per timed batch, amortising the clock
	var tBase, tLib time.Duration
	calls := 0
	for b.Loop() {
		t0 := time.Now()
		for range batch {
			base()
		}
		t1 := time.Now()
		for range batch {
			lib()
		}
		tBase += t1.Sub(t0)
		tLib += time.Since(t1)
		calls += batch
	}
	b.ReportMetric(float64(tBase.Nanoseconds())/float64(calls), "ns/SyscallN")
	b.ReportMetric(float64(tLib.Nanoseconds())/float64(calls), "ns/Iprobe")
	b.ReportMetric(float64(tLib)/float64(tBase), "Iprobe/SyscallN")
	b.ReportMetric(allocsBase, "allocs/SyscallN")
	b.ReportMetric(allocsLib, "allocs/Iprobe")
}
