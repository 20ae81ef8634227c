package cluster

import (
	"errors"
	"os"
	"syscall"
)

// Memory file systems, as statfs names them.
const (
	tmpfsMagic = 0x01021994
	ramfsMagic = 0x858458f6
)

// isMemoryFS reports whether dir is a directory on a memory file system
// (tmpfs, ramfs) with at least free bytes available.
func isMemoryFS(dir string, free uint64) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	if st.Type != tmpfsMagic && st.Type != ramfsMagic {
		return false
	}
	return st.Bavail*uint64(st.Bsize) >= free
}

// ownedByMe reports whether dir (not followed if a link) is a directory
// this process's user owns.
func ownedByMe(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// processRuns reports whether a process pid exists (one of another user's
// counts: its directory is not ours to judge).
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
