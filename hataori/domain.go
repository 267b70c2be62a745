package hataori

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// PinMode says who owns the CPU placement of a domain's workers.
// The zero value is [Declared].
type PinMode int

const (
	// Declared leaves placement to the caller or the launcher (for example
	// mpirun --bind-to): Hataori pins nothing and reports the CPU set as
	// caller-declared.
	Declared PinMode = iota
	// Managed makes Hataori pin worker i to CPUs[i] and verify the pin
	// (Linux). On other systems it behaves like [Declared].
	Managed
)

// String returns "Declared" or "Managed".
func (m PinMode) String() string {
	switch m {
	case Declared:
		return "Declared"
	case Managed:
		return "Managed"
	}
	return fmt.Sprintf("PinMode(%d)", int(m))
}

// Placement reports what is known about where a domain's workers run.
type Placement int

const (
	// CallerDeclared means Hataori did not pin the workers: the CPU set is
	// the caller's (or the launcher's) declaration.
	CallerDeclared Placement = iota
	// Verified means each worker was pinned to its own declared CPU and
	// the pin was read back from the kernel.
	Verified
)

// String returns "CallerDeclared" or "Verified".
func (p Placement) String() string {
	switch p {
	case CallerDeclared:
		return "CallerDeclared"
	case Verified:
		return "Verified"
	}
	return fmt.Sprintf("Placement(%d)", int(p))
}

// DefaultStartTimeout bounds how long [NewDomain] waits for its workers to
// report when DomainConfig.StartTimeout is zero.
const DefaultStartTimeout = 5 * time.Second

// DomainConfig describes a domain for [NewDomain].
type DomainConfig struct {
	// Workers is the number of worker goroutines: in [Managed] placement
	// each is locked to its own OS thread and pinned to its CPU,
	// otherwise they are ordinary goroutines. It must be at least one, at
	// most len(CPUs) when CPUs is given, and at most the number of CPUs
	// the process may use unless Oversubscribe is set.
	Workers int
	// CPUs is the declared CPU set. Every CPU must be in the process's
	// allowed set, and none may appear twice. [Managed] mode requires it;
	// [Declared] mode may leave it empty (unknown).
	CPUs []int
	// Pinning selects [Managed] (Hataori pins worker i to CPUs[i]) or
	// [Declared] (the caller or launcher owns placement) mode.
	Pinning PinMode
	// StartTimeout bounds the wait for every worker to start (and pin);
	// zero means [DefaultStartTimeout].
	StartTimeout time.Duration
	// Oversubscribe allows more workers than the process may use CPUs
	// (its affinity mask, as set by a launcher's binding or taskset).
	// Without it such a domain is refused with [ErrTooManyWorkers]: under
	// mpirun a rank bound to one core would otherwise time-share all its
	// workers on that core.
	Oversubscribe bool
}

// Seams for the domain tests: pinCPU pins the calling thread (a test
// replaces it to make a pin fail), and workerStartHook, when set, runs in
// each new worker before it reports (to delay one).
var (
	pinCPU          = pinThread
	workerStartHook func(worker int)
)

// Domain is a rank-local execution resource: a fixed set of worker
// goroutines that [MapIn] and [Pmap] run callbacks on. At most one operation is
// admitted at a time; a second one fails at once with [ErrDomainBusy].
//
// # Workers, slots and GOMAXPROCS
//
// In [Managed] placement each worker is locked to its own OS thread, pinned
// to its CPU; otherwise workers are ordinary goroutines (a hand-off to one
// costs well under a microsecond, against 10–50 µs for a locked thread).
// Under Pmap an [Outer] domain offers one slot per worker: W batches run at
// once, each worker running its batch's items in order. A busy worker needs
// one of the runtime's GOMAXPROCS Ps, and the coordinator (the goroutine
// that calls Pmap) needs one more to answer other ranks while the workers
// compute: Pmap raises GOMAXPROCS to W+1 for the duration of the call when
// it is lower (under mpirun -n 1, Open MPI binds the rank to one core and
// Go starts with GOMAXPROCS 1) and restores it afterwards. On a node where
// the launcher started more ranks than there are CPUs it raises it to W+2
// instead (an idle P, without which the runtime takes the coordinator's P
// during its MPI calls) and leaves it raised for the rest of the process:
// there each change stops the world for up to a hundred milliseconds.
//
// Go's default GOMAXPROCS is the number of CPUs the process may use (its
// affinity mask and cgroup quota). Under mpirun with several ranks per node
// bind each rank to its share (Open MPI: --map-by slot:PE=k --bind-to core;
// MPICH: -bind-to core:k) and size the domain to that share;
// [NewLocalDomain] sizes itself to min(GOMAXPROCS, allowed CPUs), and
// [NewDomain] refuses more workers than allowed CPUs unless
// DomainConfig.Oversubscribe is set.
//
// In Managed mode on Linux worker i is pinned to CPUs[i]. The threads of
// Managed workers never return to the runtime's thread pool (a locked
// goroutine that exits takes its thread with it), so a pinned CPU mask
// never leaks to other goroutines.
type Domain struct {
	id        int
	cpus      []int
	placement atomic.Int32 // Placement
	pinOn     bool
	pin       func(cpu int) error
	workers   []*domainWorker
	wg        sync.WaitGroup

	busy         atomic.Bool // admission: one operation at a time
	closed       atomic.Bool
	lent         atomic.Bool // an Inner item holds the domain
	parBusy      atomic.Bool // a Parallel call is running
	shuttingDown atomic.Bool
	shutdownOnce sync.Once
	shutDown     chan struct{}

	foreign *foreignExec // set only on the carrier domains of package lanes
}

var nextDomainID atomic.Int64

// NewDomain starts a domain of cfg.Workers workers. It validates the
// configuration, starts every worker (pinning it in [Managed] mode on Linux)
// and waits, at most cfg.StartTimeout, for each to report. Any failure
// returns a *[DomainError] wrapping [ErrInvalidPinning], [ErrNoWorkers],
// [ErrCPUNotAllowed], [ErrDuplicateCPU], [ErrTooManyWorkers], [ErrPinFailed] or
// [ErrStartTimeout], and
// stops every worker already started (a worker stuck in start-up stops as
// soon as it gets going). Call Close when done with the domain.
func NewDomain(cfg DomainConfig) (*Domain, error) {
	if err := validateConfig(cfg); err != nil {
		return nil, err
	}
	d := &Domain{
		cpus:     slices.Clone(cfg.CPUs),
		pinOn:    cfg.Pinning == Managed && pinningSupported,
		pin:      pinCPU,
		workers:  make([]*domainWorker, cfg.Workers),
		shutDown: make(chan struct{}),
	}
	if d.pinOn {
		d.placement.Store(int32(Verified))
	}
	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	reports := make(chan workerReport, cfg.Workers)
	for i := range d.workers {
		w := &domainWorker{index: i, cpu: -1, jobs: make(chan workerTask, 1)}
		if d.pinOn {
			w.cpu = d.cpus[i]
		}
		d.workers[i] = w
		d.workerStarting()
		go d.runWorker(w, reports, workerStartHook)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var fail *workerReport
	for range cfg.Workers {
		select {
		case r := <-reports:
			if r.err != nil && (fail == nil || r.worker < fail.worker) {
				fail = &r
			}
		case <-timer.C:
			d.abort(false)
			return nil, &DomainError{Op: "start", CPU: -1, Err: fmt.Errorf("%w (after %v)", ErrStartTimeout, timeout)}
		}
	}
	if fail != nil {
		d.abort(true)
		return nil, &DomainError{Op: "pin", CPU: d.workers[fail.worker].cpu, Err: fmt.Errorf("%w: %w", ErrPinFailed, fail.err)}
	}
	d.id = int(nextDomainID.Add(1) - 1)
	return d, nil
}

// NewLocalDomain starts the default domain for this process: [Declared]
// placement over the CPUs the process may run on, with
// min(runtime.GOMAXPROCS(0), number of allowed CPUs) workers. Lower
// GOMAXPROCS to shrink it.
//
// One exception, on Linux: a rank that a launcher started beside other
// ranks on its node without binding it (Open MPI's --bind-to none or its
// socket binding on a one-socket node, MPICH's default: the rank may run
// on exactly its parent's CPUs) takes only its share of them, so that the
// node's ranks do not each start a worker per CPU: local rank r of L (the
// launcher's OMPI_COMM_WORLD_LOCAL_RANK/_SIZE or MPI_LOCALRANKID/
// MPI_LOCALNRANKS) gets the r-th of L equal, contiguous slices of the
// allowed CPUs (one CPU, shared with its neighbours, when L exceeds
// them), its workers pinned there ([Managed]). For another placement,
// call [NewDomain].
func NewLocalDomain() (*Domain, error) {
	cpus, pinning := allowedCPUs(), Declared
	if r, size, ok := launcherLocal(); ok && sharedWithParent(cpus) {
		cpus, pinning = rankShare(cpus, r, size), Managed
	}
	n := runtime.GOMAXPROCS(0)
	if len(cpus) > 0 {
		n = min(n, len(cpus))
	}
	n = max(n, 1)
	if pinning == Managed {
		cpus = cpus[:n] // one CPU per pinned worker
	}
	return NewDomain(DomainConfig{Workers: n, CPUs: cpus, Pinning: pinning})
}

// firstCPUs returns the CPU numbers 0..n-1.
func firstCPUs(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func validateConfig(cfg DomainConfig) error {
	if cfg.Pinning != Declared && cfg.Pinning != Managed {
		return &DomainError{Op: "validate", CPU: -1, Err: fmt.Errorf("%w: %v (want Declared or Managed)", ErrInvalidPinning, cfg.Pinning)}
	}
	if cfg.Workers < 1 {
		return &DomainError{Op: "validate", CPU: -1, Err: fmt.Errorf("%w (workers = %d)", ErrNoWorkers, cfg.Workers)}
	}
	allowed := make(map[int]bool)
	for _, c := range allowedCPUs() {
		allowed[c] = true
	}
	seen := make(map[int]bool, len(cfg.CPUs))
	for _, c := range cfg.CPUs {
		if c < 0 {
			return &DomainError{Op: "validate", CPU: -1, Err: fmt.Errorf("%w (negative cpu %d)", ErrCPUNotAllowed, c)}
		}
		if len(allowed) > 0 && !allowed[c] {
			return &DomainError{Op: "validate", CPU: c, Err: ErrCPUNotAllowed}
		}
		if seen[c] {
			return &DomainError{Op: "validate", CPU: c, Err: ErrDuplicateCPU}
		}
		seen[c] = true
	}
	if (cfg.Pinning == Managed || len(cfg.CPUs) > 0) && cfg.Workers > len(cfg.CPUs) {
		return &DomainError{Op: "validate", CPU: -1, Err: fmt.Errorf("%w (%d workers, %d cpus)", ErrTooManyWorkers, cfg.Workers, len(cfg.CPUs))}
	}
	if n := len(allowed); n > 0 && cfg.Workers > n && !cfg.Oversubscribe {
		return &DomainError{Op: "validate", CPU: -1, Err: fmt.Errorf(
			"%w: %d workers, but this process may run on %d CPU(s) %v (under mpirun, give each rank its cores, e.g. --map-by slot:PE=%d --bind-to core, or set DomainConfig.Oversubscribe)",
			ErrTooManyWorkers, cfg.Workers, n, allowedCPUs(), cfg.Workers)}
	}
	return nil
}

// ID returns the domain's id, unique within the process: ids count from 0
// in the order [NewDomain] (or [NewLocalDomain]) succeeded, so a rank's first,
// usually only, domain has id 0. With the rank it names a place where
// items run, for example in logs: (rank, domain id). It returns -1 for a
// nil *[Domain].
func (d *Domain) ID() int {
	if d == nil {
		return -1
	}
	return d.id
}

// CPUs returns a copy of the declared CPU set (nil when none was declared).
func (d *Domain) CPUs() []int {
	if d == nil {
		return nil
	}
	return slices.Clone(d.cpus)
}

// Workers returns the number of workers.
func (d *Domain) Workers() int {
	if d == nil {
		return 0
	}
	return len(d.workers)
}

// Placement reports [Verified] when every worker was pinned to its declared
// CPU and the pin was read back ([Managed] mode on Linux), else
// [CallerDeclared].
func (d *Domain) Placement() Placement {
	if d == nil {
		return CallerDeclared
	}
	return Placement(d.placement.Load())
}

// Close stops the domain's workers and waits for them to exit. It is
// idempotent. If an operation is running on the domain, Close marks it
// closed and returns at once; the workers stop when that operation ends.
// After Close every call on the domain fails with [ErrDomainClosed]. Close
// from a worker of any domain fails with [ErrWorkerEntry].
func (d *Domain) Close() error {
	if !d.made() {
		return ErrNoDomain
	}
	if onWorker() {
		return ErrWorkerEntry
	}
	d.closed.Store(true)
	if d.busy.CompareAndSwap(false, true) {
		d.shutdown()
		return nil
	}
	if d.shuttingDown.Load() {
		<-d.shutDown
	}
	return nil
}

// made reports whether d is a domain NewDomain made (not nil, not a zero
// Domain); the calls on any other fail with ErrNoDomain.
func (d *Domain) made() bool { return d != nil && len(d.workers) > 0 }

// admit runs the entry checks of MapIn and of Pmap's domain executor, in
// order, and claims the domain without blocking.
func (d *Domain) admit() (release func(), err error) {
	if !d.made() {
		return nil, ErrNoDomain
	}
	if d.closed.Load() {
		return nil, ErrDomainClosed
	}
	if onWorker() {
		return nil, ErrWorkerEntry
	}
	if !d.busy.CompareAndSwap(false, true) {
		if d.closed.Load() {
			return nil, ErrDomainClosed
		}
		return nil, ErrDomainBusy
	}
	if d.closed.Load() {
		d.release()
		return nil, ErrDomainClosed
	}
	return d.release, nil
}

// release ends an admission; a Close that came meanwhile is carried out.
func (d *Domain) release() {
	d.busy.Store(false)
	if d.closed.Load() && d.busy.CompareAndSwap(false, true) {
		d.shutdown()
	}
}

// shutdown stops the workers; the caller holds the admission for good.
func (d *Domain) shutdown() { d.stopWorkers(!onWorker()) }

// abort stops the workers of a domain whose construction failed; wait says
// whether every worker has reported (and so can be waited for).
func (d *Domain) abort(wait bool) {
	d.closed.Store(true)
	d.busy.Store(true)
	d.stopWorkers(wait)
}

func (d *Domain) stopWorkers(wait bool) {
	d.shutdownOnce.Do(func() {
		d.shuttingDown.Store(true)
		for _, w := range d.workers {
			close(w.jobs)
		}
		if wait {
			d.wg.Wait()
		}
		close(d.shutDown)
	})
}
