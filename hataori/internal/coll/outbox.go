package coll

// Outbox holds a coordinator's nonblocking sends in flight: each entry is
// one message (a frame, and for a segmented RESULT its bodies sent after
// it), whose memory belongs to MPI until every send of the entry has
// completed. The root's TASKs and a remote rank's RESULTs and READYs go
// through one each, so that neither coordinator ever waits in MPI_Send
// (a blocking send spins on the core a slot computes on until the
// receiver's coordinator, perhaps asleep, takes the message). The zero Outbox is empty and ready; one goroutine uses it.
type Outbox struct {
	out []outgoing
}

// outgoing is one entry of an Outbox.
type outgoing struct {
	head     Sending
	headDone bool
	bodies   []Sending // the bodies' sends not yet seen complete
	frame    []byte    // the head's memory (nil: none kept, as for a READY)
	data     [][]byte  // the bodies' memory, referenced until every send completes
}

// Add records a started send: head sends frame (nil when the caller keeps
// no memory to reuse), bodies send data.
func (o *Outbox) Add(head Sending, frame []byte, bodies []Sending, data [][]byte) {
	o.out = append(o.out, outgoing{head: head, frame: frame, bodies: bodies, data: data})
}

// Len is the number of entries not yet complete.
func (o *Outbox) Len() int { return len(o.out) }

// Reap tests the sends of every entry (a send seen complete is not tested
// again) and drops the entries whose sends have all completed, handing
// each one's frame (possibly nil) to reuse. It reports whether any entry
// completed; an error is a transport failure of MPI_Test.
func (o *Outbox) Reap(reuse func(frame []byte)) (bool, error) {
	n := 0
	for i := range o.out {
		p := &o.out[i]
		done, err := p.done()
		if err != nil {
			return false, err
		}
		if !done {
			o.out[n] = *p
			n++
			continue
		}
		reuse(p.frame)
	}
	reaped := n < len(o.out)
	clear(o.out[n:])
	o.out = o.out[:n]
	return reaped, nil
}

// Await reaps until every entry has completed, backing off between idle
// rounds (the receiver is receiving: a coordinator calls it at the end of
// its loop, so that no frame outlives the call).
func (o *Outbox) Await(reuse func(frame []byte)) error {
	var b Backoff
	for len(o.out) > 0 {
		reaped, err := o.Reap(reuse)
		if err != nil {
			return err
		}
		if reaped {
			b.Reset()
			continue
		}
		b.Wait(true, nil, nil)
	}
	return nil
}

// done reports whether every send of p has completed.
func (p *outgoing) done() (bool, error) {
	n := 0
	for _, b := range p.bodies {
		d, err := b.Done()
		if err != nil {
			return false, err
		}
		if !d {
			p.bodies[n] = b
			n++
		}
	}
	p.bodies = p.bodies[:n]
	if !p.headDone {
		d, err := p.head.Done()
		if err != nil {
			return false, err
		}
		p.headDone = d
	}
	return p.headDone && n == 0, nil
}
