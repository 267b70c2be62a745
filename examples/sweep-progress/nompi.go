//go:build !mpirt && !mpicgo

package main

import "errors"

func run(int, int, bool) error {
	return errors.New("this example runs across MPI ranks: build it with -tags mpirt (or mpicgo) and start it under mpirun (see the package comment)")
}
