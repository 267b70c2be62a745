package lanes_test

import "golang.org/x/sys/unix"

// threadID is the calling OS thread's id (thread_selfid on darwin).
func threadID() int {
	id, _, _ := unix.Syscall(unix.SYS_THREAD_SELFID, 0, 0, 0)
	return int(id)
}
