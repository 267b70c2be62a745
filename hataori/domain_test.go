package hataori

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// newTestDomain starts a declared domain of n workers, closed at cleanup.
func newTestDomain(t *testing.T, n int) *Domain {
	t.Helper()
	d, err := NewDomain(DomainConfig{Oversubscribe: true, Workers: n})
	if err != nil {
		t.Fatalf("NewDomain: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// waitLiveWorkers waits (bounded) until liveWorkers equals want.
func waitLiveWorkers(t *testing.T, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for liveWorkers.Load() != want {
		if time.Now().After(deadline) {
			t.Fatalf("live workers = %d, want %d", liveWorkers.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestNewDomainErrors(t *testing.T) {
	allowed := allowedCPUs()
	outside := slices.Max(allowed) + 1000
	tests := []struct {
		name    string
		cfg     DomainConfig
		want    error
		wantCPU int
	}{
		{"zero workers", DomainConfig{Oversubscribe: true, Workers: 0}, ErrNoWorkers, -1},
		{"negative workers", DomainConfig{Oversubscribe: true, Workers: -3, Pinning: Managed, CPUs: allowed}, ErrNoWorkers, -1},
		{"negative cpu", DomainConfig{Oversubscribe: true, Workers: 1, CPUs: []int{-1}}, ErrCPUNotAllowed, -1},
		{"cpu outside allowed set", DomainConfig{Oversubscribe: true, Workers: 1, CPUs: []int{outside}, Pinning: Managed}, ErrCPUNotAllowed, outside},
		{"declared cpu outside allowed set", DomainConfig{Oversubscribe: true, Workers: 1, CPUs: []int{outside}}, ErrCPUNotAllowed, outside},
		{"duplicate cpu", DomainConfig{Oversubscribe: true, Workers: 1, CPUs: []int{allowed[0], allowed[0]}, Pinning: Managed}, ErrDuplicateCPU, allowed[0]},
		{"too many workers", DomainConfig{Oversubscribe: true, Workers: len(allowed) + 1, CPUs: allowed, Pinning: Managed}, ErrTooManyWorkers, -1},
		{"managed without cpus", DomainConfig{Oversubscribe: true, Workers: 1, Pinning: Managed}, ErrTooManyWorkers, -1},
		{"invalid pinning", DomainConfig{Oversubscribe: true, Workers: 1, Pinning: PinMode(9)}, ErrInvalidPinning, -1},
		{"negative pinning", DomainConfig{Oversubscribe: true, Workers: 1, CPUs: allowed[:1], Pinning: PinMode(-1)}, ErrInvalidPinning, -1},
	}
	base := liveWorkers.Load()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDomain(tt.cfg)
			if d != nil || !errors.Is(err, tt.want) {
				t.Fatalf("NewDomain = %v, %v; want nil, %v", d, err, tt.want)
			}
			var de *DomainError
			if !errors.As(err, &de) || de.Op != "validate" || de.CPU != tt.wantCPU {
				t.Fatalf("err = %#v, want *DomainError{Op: validate, CPU: %d}", err, tt.wantCPU)
			}
			if liveWorkers.Load() != base {
				t.Fatalf("live workers = %d, want %d", liveWorkers.Load(), base)
			}
		})
	}
	// The message names the mode it refused.
	_, err := NewDomain(DomainConfig{Oversubscribe: true, Workers: 1, Pinning: PinMode(9)})
	if want := "hataori: domain validate: invalid pinning mode: PinMode(9) (want Declared or Managed)"; err == nil || err.Error() != want {
		t.Errorf("invalid pinning: %v, want %q", err, want)
	}
}

var errFakePin = errors.New("fake sched_setaffinity failure")

func TestNewDomainPinFailure(t *testing.T) {
	if !pinningSupported {
		t.Skip("no pinning on this system: Managed mode is declared-only")
	}
	allowed := allowedCPUs()
	bad := allowed[len(allowed)-1]
	base := liveWorkers.Load()
	var mu sync.Mutex
	var pinned []int
	cfg := DomainConfig{Oversubscribe: true, Workers: len(allowed), CPUs: allowed, Pinning: Managed}
	defer func() { pinCPU = pinThread }()
	pinCPU = func(cpu int) error {
		mu.Lock()
		pinned = append(pinned, cpu)
		mu.Unlock()
		if cpu == bad {
			return errFakePin
		}
		return pinThread(cpu)
	}
	d, err := NewDomain(cfg)
	if d != nil || !errors.Is(err, ErrPinFailed) || !errors.Is(err, errFakePin) {
		t.Fatalf("NewDomain = %v, %v; want ErrPinFailed wrapping the cause", d, err)
	}
	var de *DomainError
	if !errors.As(err, &de) || de.Op != "pin" || de.CPU != bad {
		t.Fatalf("err = %#v, want Op pin on cpu %d", err, bad)
	}
	slices.Sort(pinned)
	if !slices.Equal(pinned, allowed) {
		t.Errorf("pinned %v, want every cpu of %v once", pinned, allowed)
	}
	// NewDomain waited for every worker, pinned or not: none is left.
	if liveWorkers.Load() != base {
		t.Fatalf("live workers = %d, want %d", liveWorkers.Load(), base)
	}
}

// Managed placement reports Verified where Hataori pins (Linux), and
// CallerDeclared elsewhere.
func TestManagedPlacementReport(t *testing.T) {
	allowed := allowedCPUs()
	d, err := NewDomain(DomainConfig{Oversubscribe: true, Workers: 1, CPUs: allowed[:1], Pinning: Managed})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want := CallerDeclared
	if pinningSupported {
		want = Verified
	}
	if d.Placement() != want {
		t.Fatalf("placement = %v, want %v", d.Placement(), want)
	}
}

func TestNewDomainStartTimeout(t *testing.T) {
	base := liveWorkers.Load()
	hold := make(chan struct{})
	cfg := DomainConfig{Oversubscribe: true, Workers: 3, StartTimeout: 20 * time.Millisecond}
	defer func() { workerStartHook = nil }()
	workerStartHook = func(worker int) {
		if worker == 1 {
			<-hold
		}
	}
	d, err := NewDomain(cfg)
	if d != nil || !errors.Is(err, ErrStartTimeout) {
		t.Fatalf("NewDomain = %v, %v; want ErrStartTimeout", d, err)
	}
	var de *DomainError
	if !errors.As(err, &de) || de.Op != "start" {
		t.Fatalf("err = %#v, want Op start", err)
	}
	close(hold) // the stuck worker gets going and must stop by itself
	waitLiveWorkers(t, base)
}

func TestDomainAccessors(t *testing.T) {
	allowed := allowedCPUs()
	d, err := NewDomain(DomainConfig{Oversubscribe: true, Workers: 1, CPUs: allowed[:1]})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d2 := newTestDomain(t, 2)
	if d2.ID() <= d.ID() || d.ID() < 0 {
		t.Errorf("ids %d then %d, want increasing and >= 0", d.ID(), d2.ID())
	}
	if d.Workers() != 1 || d2.Workers() != 2 {
		t.Errorf("Workers = %d, %d; want 1, 2", d.Workers(), d2.Workers())
	}
	if got := d.CPUs(); !slices.Equal(got, allowed[:1]) {
		t.Errorf("CPUs = %v, want %v", got, allowed[:1])
	}
	cp := d.CPUs()
	cp[0] = -5
	if d.CPUs()[0] == -5 {
		t.Errorf("CPUs returns the domain's own slice")
	}
	if d2.CPUs() != nil {
		t.Errorf("CPUs of an undeclared set = %v, want nil", d2.CPUs())
	}
	if d.Placement() != CallerDeclared {
		t.Errorf("declared domain reports %v", d.Placement())
	}
	var nilDomain *Domain
	if nilDomain.ID() != -1 || nilDomain.Workers() != 0 || nilDomain.CPUs() != nil || nilDomain.Placement() != CallerDeclared {
		t.Errorf("nil domain accessors are not zero")
	}
	if !errors.Is(nilDomain.Close(), ErrNoDomain) {
		t.Errorf("nil Close is not ErrNoDomain")
	}
}

func TestNewLocalDomain(t *testing.T) {
	clearLauncherLocal(t)
	d, err := NewLocalDomain()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want := min(runtime.GOMAXPROCS(0), len(allowedCPUs()))
	if d.Workers() != want || d.Placement() != CallerDeclared || !slices.Equal(d.CPUs(), allowedCPUs()) {
		t.Fatalf("local domain: %d workers %v %v; want %d workers, CallerDeclared, %v",
			d.Workers(), d.Placement(), d.CPUs(), want, allowedCPUs())
	}
}

func TestDomainCloseStopsWorkers(t *testing.T) {
	base := liveWorkers.Load()
	d, err := NewDomain(DomainConfig{Oversubscribe: true, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := liveWorkers.Load() - base; got != 3 {
		t.Fatalf("live workers = %d, want 3", got)
	}
	for i := range 2 {
		if err := d.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	if liveWorkers.Load() != base {
		t.Fatalf("live workers after Close = %d, want %d", liveWorkers.Load()-base, 0)
	}
}

func TestStringers(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{Sequential.String(), "Sequential"},
		{Outer.String(), "Outer"},
		{Inner.String(), "Inner"},
		{LocalMode(7).String(), "LocalMode(7)"},
		{Declared.String(), "Declared"},
		{Managed.String(), "Managed"},
		{PinMode(5).String(), "PinMode(5)"},
		{CallerDeclared.String(), "CallerDeclared"},
		{Verified.String(), "Verified"},
		{Placement(4).String(), "Placement(4)"},
		{(&DomainError{Op: "pin", CPU: 3, Err: ErrPinFailed}).Error(), "hataori: domain pin: cpu 3: pinning a worker failed"},
		{(&DomainError{Op: "validate", CPU: -1, Err: ErrNoWorkers}).Error(), "hataori: domain validate: no workers requested"},
		{fmt.Sprint(&MapError{Index: 3, Message: "m"}), "hataori: item 3: m"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// More workers than the process may use CPUs is refused, naming the CPUs
// and the way out, unless Oversubscribe is set.
func TestNewDomainMoreWorkersThanCPUs(t *testing.T) {
	n := len(allowedCPUs())
	_, err := NewDomain(DomainConfig{Workers: n + 1})
	if !errors.Is(err, ErrTooManyWorkers) || !strings.Contains(err.Error(), "Oversubscribe") {
		t.Fatalf("NewDomain(%d workers on %d CPUs) = %v, want ErrTooManyWorkers naming Oversubscribe", n+1, n, err)
	}
	d, err := NewDomain(DomainConfig{Workers: n + 1, Oversubscribe: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// clearLauncherLocal hides a launcher's local rank and size from the test
// (the test binary may run under mpirun).
func clearLauncherLocal(t *testing.T) {
	for _, v := range []string{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"} {
		t.Setenv(v, "")
	}
}
