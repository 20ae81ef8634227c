// Package atomicfile writes a file so that a reader sees the old contents or
// the new, never a part: the data goes to a temporary file in the same
// directory, gets its mode, is synced (Write; not Replace), and is renamed
// over the target. A failed write leaves the old file intact and no
// temporary file behind.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data and mode perm. The directory must exist. The
// data is synced before the rename, so after a crash path holds the old
// contents or the new.
func Write(path string, data []byte, perm fs.FileMode) error { return write(path, data, perm, true) }

// Replace is Write without the sync, for a file derived from others that is
// written again by running what wrote it (a build's page and manifest): a
// reader still sees the old contents or the new and a failed write leaves
// the old file, but a power loss soon after may leave it empty, as with
// other build tools' outputs (go build, esbuild and Vite do not sync). The
// sync cost 4 ms and more per build on an ext4 disk, more than the bundling.
func Replace(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, false)
}

func write(path string, data []byte, perm fs.FileMode, sync bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
