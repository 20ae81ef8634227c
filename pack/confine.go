package pack

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSourceBytes caps one script, stylesheet, JSON or page file the build
// reads. Assets have their own, smaller cap (Options.MaxAssetBytes).
const maxSourceBytes = 16 << 20

// source reads the app's files, and nothing else. Every file the build reads
// (the page, each script, stylesheet, asset, package.json) goes through it:
//
//   - a reference is cleaned and must stay inside the app's folder
//     (confine): "..", %2e%2e, backslashes, file: URLs and the like are
//     refused before anything is opened;
//   - on disk the folder (symlinks resolved) is opened once as an os.Root,
//     so a path never leaves it, not through "..", an absolute or outward
//     symlink, nor a symlinked directory, and /proc or /dev are out of
//     reach;
//   - a file is opened once without blocking (a FIFO cannot hang the
//     build), checked on the open descriptor to be a regular file, and read
//     with a size cap (a file that grows cannot blow the cap).
type source struct {
	// fsys is what probes stat: Options.FS, the folder through the root on
	// disk, or emptyFS for a page given alone.
	fsys fs.FS
	// root is the page's directory inside fsys ("." on disk).
	root string
	// disk is the app's folder as given, absolute; "" unless on disk.
	// Result.Inputs names files under it.
	disk string
	// dir is the app's folder on disk, opened with its symlinks resolved.
	dir *os.Root
}

// openDisk opens the app folder holding page (a path on disk).
func openDisk(page string) (source, string, error) {
	abs, err := filepath.Abs(page)
	if err != nil {
		return source{}, "", fmt.Errorf("pack: %w", err)
	}
	folder := filepath.Dir(abs)
	real, err := filepath.EvalSymlinks(folder)
	if err != nil {
		return source{}, "", fmt.Errorf("pack: the app's folder: %w", err)
	}
	dir, err := os.OpenRoot(real)
	if err != nil {
		return source{}, "", fmt.Errorf("pack: the app's folder: %w", err)
	}
	return source{fsys: dir.FS(), root: ".", disk: folder, dir: dir}, filepath.Base(abs), nil
}

func (s *source) close() {
	if s.dir != nil {
		s.dir.Close()
	}
}

// refError is a reference the build will not follow: a diagnostic without
// its place, which the caller adds.
type refError struct {
	code, msg, why, fix string
}

func (e *refError) Error() string { return e.msg }

func (e *refError) diag() Diagnostic {
	return Diagnostic{Severity: SeverityError, Code: e.code, Message: e.msg, Why: e.why, Fix: e.fix}
}

const (
	whyOutside = "the build reads only files inside the app's folder, so an app cannot carry away a file of the machine that builds or serves it"
	fixOutside = "copy the file into the app's folder and reference it by a relative path that stays inside (no \"..\" above the folder)"
)

func outside(ref, detail string) *refError {
	return &refError{code: "ref.outside", msg: fmt.Sprintf("%s leads outside the app's folder: %s", quote(ref), detail), why: whyOutside, fix: fixOutside}
}

// confine turns a local reference into a path inside fsys. base is the
// directory it is relative to; a leading "/" means the app's folder, as a
// URL path would. decode applies URL percent-decoding first (an HTML or
// CSS URL; a JS import specifier is a path and is taken as written).
func (s *source) confine(ref, base string, decode bool) (string, error) {
	p := ref
	if decode {
		// A URL parser drops leading and trailing C0 controls and spaces.
		p = strings.TrimFunc(p, func(r rune) bool { return r <= ' ' })
		p = stripQuery(p)
		if d, err := url.PathUnescape(p); err == nil {
			p = d
		}
	}
	switch {
	case strings.ContainsRune(p, '\\'):
		return "", outside(ref, "it holds a backslash, which a browser reads as \"/\"")
	case strings.ContainsAny(p, "\x00\r\n\t"):
		return "", outside(ref, "it holds a control character")
	case hasScheme(p, "file"):
		return "", outside(ref, "a file: URL names a file of the machine, not of the app")
	}
	var joined string
	if rest, ok := strings.CutPrefix(p, "/"); ok {
		joined = rest
	} else {
		joined = joinFS(base, p)
	}
	c := path.Clean("/" + joined)
	if climbs(joined) {
		return "", outside(ref, "its \"..\" climbs above the folder")
	}
	c = strings.TrimPrefix(c, "/")
	if c == "" {
		c = "."
	}
	return c, nil
}

// stripQuery drops a URL's query and fragment.
func stripQuery(ref string) string {
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		return ref[:i]
	}
	return ref
}

// climbs reports whether a slash path, relative to the folder, goes above
// it at any point (lexically, before symlinks).
func climbs(p string) bool {
	depth := 0
	for _, el := range strings.Split(p, "/") {
		switch el {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

func hasScheme(p, scheme string) bool {
	return len(p) > len(scheme) && p[len(scheme)] == ':' && strings.EqualFold(p[:len(scheme)], scheme)
}

// read reads file p (a path inside fsys, from confine) whole, refusing
// anything that is not a regular file inside the folder or is over limit
// bytes. ref names it in errors.
func (s *source) read(p, ref string, limit int64) ([]byte, error) {
	f, err := s.open(p, ref)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("pack: %s: %w", ref, err)
	}
	if err := regular(ref, fi); err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, &tooLargeError{ref: ref, size: fi.Size(), limit: limit}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("pack: reading %s: %w", ref, err)
	}
	if int64(len(data)) > limit {
		return nil, &tooLargeError{ref: ref, size: int64(len(data)), limit: limit}
	}
	return data, nil
}

// tooLargeError is a file over its size cap.
type tooLargeError struct {
	ref         string
	size, limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d-byte limit", quote(e.ref), e.size, e.limit)
}

// open opens p for reading once, without following a link out of the
// folder and without blocking.
func (s *source) open(p, ref string) (fs.File, error) {
	if !fs.ValidPath(p) {
		return nil, outside(ref, "it is not a path inside the folder")
	}
	if s.dir != nil {
		f, err := s.dir.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
		if err != nil {
			return nil, s.explain(p, ref, err)
		}
		return f, nil
	}
	if err := s.checkLinks(p, ref); err != nil {
		return nil, err
	}
	if fi, err := fs.Stat(s.fsys, p); err == nil {
		if err := regular(ref, fi); err != nil {
			return nil, err // before Open: an os.DirFS would block on a FIFO
		}
	}
	f, err := s.fsys.Open(p)
	if err != nil {
		return nil, s.explain(p, ref, err)
	}
	return f, nil
}

// stat stats p inside the folder (a link inside it is followed).
func (s *source) stat(p, ref string) (fs.FileInfo, error) {
	if !fs.ValidPath(p) {
		return nil, outside(ref, "it is not a path inside the folder")
	}
	if s.dir == nil {
		if err := s.checkLinks(p, ref); err != nil {
			return nil, err
		}
	}
	fi, err := fs.Stat(s.fsys, p)
	if err != nil {
		return nil, s.explain(p, ref, err)
	}
	return fi, nil
}

func regular(ref string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		what = "a device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	}
	return &refError{code: "ref.not-file", msg: fmt.Sprintf("%s is %s, not a file", quote(ref), what),
		why: "the build inlines regular files only", fix: "reference a file (for a folder, name the file inside it)"}
}

// explain turns an error from opening or stating p into what the user
// should read: a missing file stays fs.ErrNotExist; any other refusal past
// a symbolic link on the way (os.Root refuses a link that is absolute or
// leads out, at any depth) is ref.outside naming the first link.
func (s *source) explain(p, ref string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if link := s.firstLink(p); link != "" {
		return outside(ref, fmt.Sprintf("%s is a symbolic link out of the folder (a link must be relative and stay inside it)", quote(s.rel(link))))
	}
	return err
}

// firstLink returns the first component of p that is a symbolic link, or "".
func (s *source) firstLink(p string) string {
	q := ""
	for _, el := range strings.Split(p, "/") {
		q = joinFS(q, el)
		var fi fs.FileInfo
		var err error
		if s.dir != nil {
			fi, err = s.dir.Lstat(q)
		} else if l, ok := s.fsys.(fs.ReadLinkFS); ok {
			fi, err = l.Lstat(q)
		} else {
			return ""
		}
		if err != nil {
			return ""
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return q
		}
	}
	return ""
}

// maxLinkHops bounds the links checkLinks follows, as the kernel does.
const maxLinkHops = 40

// checkLinks confines an fs.FS that exposes its links (fs.ReadLinkFS, as
// os.DirFS does): every link on the way to p must be relative and stay
// inside the FS. An FS without links (fstest.MapFS, embed.FS) passes.
func (s *source) checkLinks(p, ref string) error {
	l, ok := s.fsys.(fs.ReadLinkFS)
	if !ok {
		return nil
	}
	rest := strings.Split(p, "/")
	done := ""
	for hops := 0; len(rest) > 0; {
		el := rest[0]
		rest = rest[1:]
		q := joinFS(done, el)
		fi, err := l.Lstat(q)
		if err != nil {
			return nil // a missing file is reported by the read
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = q
			continue
		}
		if hops++; hops > maxLinkHops {
			return outside(ref, "too many symbolic links")
		}
		target, err := l.ReadLink(q)
		if err != nil {
			return outside(ref, fmt.Sprintf("%s is a symbolic link that cannot be read", quote(q)))
		}
		if path.IsAbs(target) || strings.ContainsRune(target, '\\') || climbs(joinFS(done, target)) {
			return outside(ref, fmt.Sprintf("%s is a symbolic link out of the folder (a link must be relative and stay inside it)", quote(q)))
		}
		next := path.Clean(joinFS(done, target))
		rest = append(strings.Split(next, "/"), rest...)
		done = ""
		if next == "." {
			rest = rest[1:]
		}
	}
	return nil
}

// input names a file the build read for Result.Inputs: absolute on disk.
func (s *source) input(p string) string {
	if s.disk != "" {
		return filepath.Join(s.disk, filepath.FromSlash(p))
	}
	return p
}

// rel names p for diagnostics: relative to the page's directory.
func (s *source) rel(p string) string {
	if s.root == "." || s.root == "" {
		return p
	}
	if r, ok := strings.CutPrefix(p, s.root+"/"); ok {
		return r
	}
	return p
}

// ReadPage reads an app's page file from disk the way Build does: it must
// be a regular file inside its folder (a symbolic link out of the folder, a
// FIFO, a device or a directory is refused, and nothing blocks) of at most
// 16 MiB. snuggen serve reads pages it serves as already built through it.
func ReadPage(page string) ([]byte, error) {
	src, name, err := openDisk(page)
	if err != nil {
		return nil, err
	}
	defer src.close()
	data, err := src.read(name, name, maxSourceBytes)
	if err != nil {
		return nil, fmt.Errorf("pack: reading the page %s: %w", page, err)
	}
	return data, nil
}
