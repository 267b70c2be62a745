package hataori

import "testing"

// TestTraceOffAllocatesNothing shows that tracing costs nothing without the
// hataoridebug tag: tracef is inlined to nothing, so its arguments (values
// that would need a heap cell once boxed) are never boxed, with or without
// a hook, and the hook is never called. With the tag it shows that events
// reach the hook.
func TestTraceOffAllocatesNothing(t *testing.T) {
	n := int64(1) << 40
	noHook := testing.AllocsPerRun(100, func() {
		n++
		tracef("send kind=%s to=%d bytes=%d", "TASK", n, n+1)
	})
	if !traceOn && noHook != 0 {
		t.Fatalf("tracing off, no hook: tracef allocates %v times per call, want 0", noHook)
	}
	var got []string
	pmapTrace = func(ev string) { got = append(got, ev) }
	defer func() { pmapTrace = nil }()
	rank, bytes := int64(1)<<40, int64(1)<<41
	allocs := testing.AllocsPerRun(100, func() {
		rank++
		tracef("recv-result rank=%d bytes=%d", rank, bytes+rank)
	})
	if traceOn {
		if len(got) == 0 || got[len(got)-1] != "recv-result rank=1099511627877 bytes=3298534883429" {
			t.Fatalf("hataoridebug build: traced %d events, last %q", len(got), got[len(got)-1:])
		}
		return
	}
	if allocs != 0 || len(got) != 0 {
		t.Fatalf("tracing off: tracef allocates %v times per call and delivered %d events, want 0 and 0", allocs, len(got))
	}
}
