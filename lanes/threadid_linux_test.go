package lanes_test

import "golang.org/x/sys/unix"

// threadID is the calling OS thread's id (the tests check which thread a
// lane, a pool worker or the coordinator runs on).
func threadID() int { return unix.Gettid() }
