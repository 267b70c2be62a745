package mpitest

import "time"

// killGrace is how long a cancelled command gets to end after SIGTERM
// before every process it left is killed (Contain).
const killGrace = 3 * time.Second
