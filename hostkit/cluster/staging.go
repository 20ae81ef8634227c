package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Where Litestream stages uploads.
//
// Litestream writes each round's LTX file, fsyncs it and its directory and
// renames it before uploading it (2.1–2.5 ms of every acknowledgement on a
// shared disk, docs/scale.md). Nothing staged is read once it is uploaded,
// and a replica that restarts restores from object storage, so a memory
// file system loses nothing by holding them. By default (Config.StagingDir
// empty) a replica stages in a private directory of its own on /dev/shm
// when that is a memory file system with MinMemoryStaging free, and beside
// each database otherwise; StageBeside keeps them beside the databases.

const (
	// StageBeside as Config.StagingDir stages uploads beside each
	// database, on the data directory's disk.
	StageBeside = "beside"
	// MinMemoryStaging is the space /dev/shm must have free for the
	// default to stage there: uploads are kept about a minute (L0Retention),
	// some 3 KB a round, so even 1,000 rounds a second stay far below it.
	MinMemoryStaging = 1 << 30
	// memoryStagingRoot is where the default looks for memory.
	memoryStagingRoot = "/dev/shm"
	// stagingPattern names the default's private directories.
	stagingPattern = "snuggen-staging-"
	// stagingOwnerFile holds the process id of a private directory's owner.
	stagingOwnerFile = "pid"
)

// stagingDir makes the directory this replica stages uploads in, "" for
// beside each database.
func (c *Cluster) stagingDir() (string, error) {
	switch dir := c.cfg.StagingDir; dir {
	case StageBeside:
		return "", nil
	case "":
		if !isMemoryFS(memoryStagingRoot, c.cfg.minMemoryStaging) {
			c.logf("staging uploads beside the databases, so every acknowledgement waits for the disk: %s is not a memory file system with %d MiB free "+
				"(a container's is often 64 MiB: give it more, as docker run --shm-size=1g does, or give --cluster-staging a directory on a memory file system)",
				memoryStagingRoot, c.cfg.minMemoryStaging>>20)
			return "", nil
		}
		dir, err := privateStaging(memoryStagingRoot)
		if err != nil {
			c.logf("staging beside the databases: %v", err)
			return "", nil
		}
		return dir, nil
	default:
		dir = filepath.Join(dir, "replica-"+c.id)
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("cluster: clear %s: %w", dir, err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("cluster: staging directory: %w", err)
		}
		return dir, nil
	}
}

// privateStaging makes a directory of this process's own under root (a
// new, unpredictable name, mode 0700, as a shared /dev/shm needs), after
// removing those that processes no longer running left there (a replica
// killed before its Close).
func privateStaging(root string) (string, error) {
	sweepStaging(root)
	dir, err := os.MkdirTemp(root, stagingPattern)
	if err != nil {
		return "", fmt.Errorf("staging directory in %s: %w", root, err)
	}
	owner := filepath.Join(dir, stagingOwnerFile)
	if err := os.WriteFile(owner, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return "", errors.Join(fmt.Errorf("staging directory in %s: %w", root, err), os.RemoveAll(dir))
	}
	return dir, nil
}

// sweepStaging removes the private staging directories under root that
// this user's processes left and that no running process owns.
func sweepStaging(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), stagingPattern) {
			continue // a symlink is no directory here: never followed
		}
		dir := filepath.Join(root, e.Name())
		if !ownedByMe(dir) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, stagingOwnerFile))
		if err != nil {
			continue // being made, or not one of ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 || pid == os.Getpid() || processRuns(pid) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}
