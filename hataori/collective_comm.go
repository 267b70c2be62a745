package hataori

import "fmt"

// openCollective starts a collective call on c: it duplicates c into the
// call's private communicator and reads rank and size. A Comm that cannot be
// used at all (ErrNoMPI, ErrInvalidComm) is returned as an error before any
// MPI call; an MPI failure of the duplication aborts the job with
// ExitTransport, since peers are already inside the collective call.
func openCollective(c Comm) (*collective, error) {
	h, err := c.handle()
	if err != nil {
		return nil, err
	}
	k, err := openCollectiveOn(h)
	if err != nil {
		abortJob(ExitTransport, fmt.Sprintf("cannot duplicate the communicator for a collective call: %v", mpiErr(err)))
	}
	return k, nil
}
