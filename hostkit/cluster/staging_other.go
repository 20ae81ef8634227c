//go:build !linux

package cluster

// isMemoryFS: the default memory staging is Linux's /dev/shm; elsewhere
// uploads are staged beside the databases unless Config.StagingDir names
// a directory.
func isMemoryFS(string, uint64) bool { return false }

func ownedByMe(string) bool { return false }

func processRuns(int) bool { return true }
