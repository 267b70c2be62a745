//go:build !mpirt && !mpicgo

package main

import "errors"

func run(sweep) (*record, error) {
	return nil, errors.New("running a sweep needs MPI: build with -tags mpirt (or mpicgo) and start it under mpirun; or draw saved spans with -in")
}
