package hataori

import (
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/coll"
)

func TestParseEntryTimeout(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"", DefaultEntryTimeout, false},
		{"off", 0, false},
		{"0", 0, false},
		{"90s", 90 * time.Second, false},
		{"20m", 20 * time.Minute, false},
		{"-1s", DefaultEntryTimeout, true},
		{"soon", DefaultEntryTimeout, true},
		{"10", DefaultEntryTimeout, true},
	} {
		got, err := parseEntryTimeout(c.in)
		if got != c.want || (err != nil) != c.bad {
			t.Errorf("parseEntryTimeout(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestSetEntryTimeout(t *testing.T) {
	defer SetEntryTimeout(SetEntryTimeout(time.Second))
	if got := currentEntryTimeout(); got != time.Second {
		t.Fatalf("after SetEntryTimeout(1s) the bound is %v", got)
	}
	if prev := SetEntryTimeout(-time.Minute); prev != time.Second {
		t.Errorf("SetEntryTimeout returned %v, want the previous 1s", prev)
	}
	if got := currentEntryTimeout(); got != 0 {
		t.Errorf("a negative bound gives %v, want 0 (none)", got)
	}
	// The bound runs from beginEntry and ends at entered.
	SetEntryTimeout(time.Hour)
	beginEntry("Pmap")
	if op, rank, deadline := coll.EntryState(); deadline.IsZero() || op != "Pmap" || rank != -1 {
		t.Errorf("beginEntry: op %q rank %d deadline %v", op, rank, deadline)
	}
	coll.Entered()
	if _, _, deadline := coll.EntryState(); !deadline.IsZero() {
		t.Errorf("entered left the deadline %v", deadline)
	}
	SetEntryTimeout(0)
	beginEntry("Broadcast")
	if _, _, deadline := coll.EntryState(); !deadline.IsZero() {
		t.Errorf("no bound, yet a deadline %v", deadline)
	}
	coll.Entered()
}

// TestEntryTimeoutEnvIsColls: the variable go doc names is the one the
// collective layer reads.
func TestEntryTimeoutEnvIsColls(t *testing.T) {
	if EntryTimeoutEnv != coll.EntryTimeoutEnv {
		t.Fatalf("EntryTimeoutEnv = %q, the collective layer reads %q", EntryTimeoutEnv, coll.EntryTimeoutEnv)
	}
}
