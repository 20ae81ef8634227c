// Package savefile is the host's side of the save-file pair: a strict
// save-file-request, already validated by frame.Parse, becomes a question in
// the host's own dialog naming the app, the file name and its size, and the
// file is handed to the browser's download only from the user's click there.
// The answer is a save-file-result: saved, declined (the user said no) or
// refused (policy: a name or type the host will not write, no UI to ask, the
// rate limit) with a reason.
//
// Its limit: it never writes a file itself. The Confirmer (the runner page
// behind hostkit/relay) shows the dialog and saves inside the click handler,
// through the top-level page (a blob URL and an <a download>), because only
// a user gesture in the host's own document may start a download; the
// sandbox gains no capability (it never gets allow-downloads). Where the
// browser then puts the file (a download folder, a save dialog) is the
// browser's and the user's business.
package savefile

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/internal/askgate"
)

// DefaultMimeType is the file's type when the request names none.
const DefaultMimeType = "application/octet-stream"

// MaxNameBytes is the longest file name, in UTF-8 bytes, the host writes:
// what common file systems hold in one path component.
const MaxNameBytes = 255

// DefaultPerMinute is how many save dialogs an app may raise in a minute.
const DefaultPerMinute = 6

// Answer is the user's decision.
type Answer int

const (
	// Declined: the user said no (or closed the dialog).
	Declined Answer = iota
	// Saved: the user clicked Save and the page handed the file to the
	// browser's download from that click.
	Saved
)

// Prompt is what the dialog shows and saves.
type Prompt struct {
	App      string // the installed app's key (the page names it by its installed display name)
	Name     string // the file name, as checked by Name
	MimeType string // the media type, DefaultMimeType when the app gave none
	Data     []byte // the file's bytes
}

// Confirmer shows the host's own save dialog and saves the file only from
// the user's click there. It returns when the user decided, or with ctx's
// error when ctx ended first. ErrNoUI means there is no user to ask.
type Confirmer interface {
	ConfirmSave(ctx context.Context, p Prompt) (Answer, error)
}

// Clicks is what a Confirmer may also tell: whether the request in ctx came
// from the user's own click in the app (an <a download>, a call in a click
// handler). Such a request waits for the app's dialog showing, in order,
// instead of being refused; the limits stay for what an app asks on its own.
type Clicks interface {
	UserClicked(ctx context.Context) bool
}

// ErrNoUI is a Confirmer's "nobody to ask" (a headless host, a closed page).
var ErrNoUI = errors.New("savefile: no user interface to ask")

// Options configure a Saver.
type Options struct {
	// PerMinute limits the dialogs one app may raise per minute
	// (DefaultPerMinute when zero). One app has at most one dialog showing.
	PerMinute int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Saver answers save-file-requests through a Confirmer. It is safe for
// concurrent use.
type Saver struct {
	c    Confirmer
	gate *askgate.Gate
}

// New returns a Saver asking c; a nil c means no UI: every request is
// refused.
func New(c Confirmer, opts Options) *Saver {
	if opts.PerMinute <= 0 {
		opts.PerMinute = DefaultPerMinute
	}
	return &Saver{c: c, gate: askgate.New(opts.PerMinute, opts.Now)}
}

// Save asks the user whether to save f's file for app (the host's own key
// of the installed app) and returns the result frame. A file the host will
// not write (Name, MimeType, the data) is refused without asking.
func (s *Saver) Save(ctx context.Context, app string, f *frame.SaveFileRequest) *frame.SaveFileResult {
	if err := f.Validate(); err != nil {
		return Result(f.RequestID, frame.StatusRefused, frame.CodeMalformed+": "+err.Error())
	}
	p, err := Check(f)
	if err != nil {
		return Result(f.RequestID, frame.StatusRefused, err.Error())
	}
	p.App = app
	if s.c == nil {
		return Result(f.RequestID, frame.StatusRefused, "this host has no dialog to ask the user")
	}
	claim := s.gate.Reserve
	if k, ok := s.c.(Clicks); ok && k.UserClicked(ctx) {
		claim = func(app string) error { return s.gate.Wait(ctx, app) }
	}
	switch err := claim(app); {
	case errors.Is(err, askgate.ErrBusy):
		return Result(f.RequestID, frame.StatusRefused, "another file from this app is waiting for the user")
	case errors.Is(err, askgate.ErrRate):
		return Result(f.RequestID, frame.StatusRefused, "rate limit: too many files offered in the last minute")
	case err != nil:
		return Result(f.RequestID, frame.StatusRefused, "the request ended before its turn")
	}
	defer s.gate.Release(app)
	ans, err := s.c.ConfirmSave(ctx, p)
	switch {
	case errors.Is(err, ErrNoUI):
		return Result(f.RequestID, frame.StatusRefused, "no user interface to ask: the file was not saved")
	case err != nil:
		return Result(f.RequestID, frame.StatusRefused, "the save dialog ended without an answer")
	case ans == Saved:
		return Result(f.RequestID, frame.StatusSaved, "")
	}
	return Result(f.RequestID, frame.StatusDeclined, "the user declined")
}

// Check reads a request as the dialog will show it: the name (Name), the
// media type (MimeType) and the decoded data (at most frame.MaxArtifactBytes).
// Its error is the reason a refusal carries.
func Check(f *frame.SaveFileRequest) (Prompt, error) {
	name, err := Name(f.Name)
	if err != nil {
		return Prompt{}, err
	}
	mt := DefaultMimeType
	if f.MimeType != nil {
		if mt, err = MimeType(*f.MimeType); err != nil {
			return Prompt{}, err
		}
	}
	data, err := base64.StdEncoding.DecodeString(f.Data)
	if err != nil {
		return Prompt{}, errors.New("data is not valid base64")
	}
	if len(data) > frame.MaxArtifactBytes {
		return Prompt{}, fmt.Errorf("the file is %d bytes, past the %d-byte limit", len(data), frame.MaxArtifactBytes)
	}
	return Prompt{Name: name, MimeType: mt, Data: data}, nil
}

// Name checks a file name an app offers and returns the name the host saves
// under. The user reads it in the dialog and finds it on disk, so a name that
// could read differently from what it is (a right-to-left override turning
// "gpj.exe" around, a zero-width character, a line break), climb out of the
// download folder (a / or \, "." and ".."), hide (a leading dot), be changed
// by the file system (trailing dots or spaces, a Windows device name) or run
// as a program when opened (an executable extension) is refused. Characters
// Windows refuses in names (< > : " | ? *) become "_", as browsers do for
// downloads, so "notes 10:30.md" saves as "notes 10_30.md".
func Name(name string) (string, error) {
	if name == "" {
		return "", errors.New("the file name is empty")
	}
	if len(name) > MaxNameBytes {
		return "", fmt.Errorf("the file name is %d bytes of UTF-8, past %d", len(name), MaxNameBytes)
	}
	if !utf8.ValidString(name) {
		return "", errors.New("the file name is not valid UTF-8")
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '/' || r == '\\':
			return "", fmt.Errorf("the file name holds %q: a name, not a path, is saved (no folders)", r)
		case r == utf8.RuneError, unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r),
			unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r), unicode.Is(unicode.Co, r), isNoncharacter(r):
			return "", fmt.Errorf("the file name holds U+%04X, an invisible or control character that can make a name read as another", r)
		case strings.ContainsRune(`<>:"|?*`, r):
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	switch {
	case out == "." || out == "..":
		return "", fmt.Errorf("%q is not a file name", out)
	case strings.HasPrefix(out, "."):
		return "", errors.New("the file name starts with '.', which hides the file on most systems")
	case strings.TrimSpace(out) != out:
		return "", errors.New("the file name starts or ends with a space")
	case strings.HasSuffix(out, "."):
		return "", errors.New("the file name ends with '.', which Windows drops")
	}
	base, ext := out, strings.ToLower(path.Ext(out))
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	if reservedDevice(base) {
		return "", fmt.Errorf("%q is a device name on Windows, not a file", base)
	}
	if ext != "" && executable()[ext[1:]] {
		return "", fmt.Errorf("the file name ends in %s, a type that runs as a program when opened; offer data (.txt, .json, .csv, .md, .html, an image, .zip…) instead", ext)
	}
	return out, nil
}

// MimeType checks a media type ("type/subtype", no parameters, RFC 6838
// characters) and returns it in lower case.
func MimeType(mt string) (string, error) {
	t, sub, ok := strings.Cut(mt, "/")
	if !ok || !restrictedName(t) || !restrictedName(sub) {
		return "", fmt.Errorf("mimeType %q is not a media type such as text/csv", mt)
	}
	return strings.ToLower(mt), nil
}

// restrictedName is RFC 6838's restricted-name: a letter or digit, then up
// to 126 of letters, digits and ! # $ & - ^ _ . +
func restrictedName(s string) bool {
	if s == "" || len(s) > 127 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("!#$&-^_.+", rune(c))) {
			return false
		}
	}
	return true
}

func isNoncharacter(r rune) bool {
	return r >= 0xFDD0 && r <= 0xFDEF || r&0xFFFE == 0xFFFE
}

// reservedDevice reports a Windows device name (CON, PRN, AUX, NUL, COM1-9,
// LPT1-9), whatever its case: "con.txt" opens the console there.
func reservedDevice(base string) bool {
	b := strings.ToUpper(strings.TrimRight(base, " "))
	switch b {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	return len(b) == 4 && (strings.HasPrefix(b, "COM") || strings.HasPrefix(b, "LPT")) && b[3] >= '1' && b[3] <= '9'
}

// executable lists the extensions that run code when the file is opened
// from a download folder on Windows, macOS or a Linux desktop (shell
// scripts, installers, shortcuts, script hosts, packages).
var executable = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields(`exe com scr pif bat cmd msi msp mst msc cpl dll sys drv ocx
		lnk url scf reg inf hta ps1 psm1 psd1 vb vbs vbe js jse wsf wsh ws sct jar
		app dmg pkg mpkg command tool workflow terminal sh bash zsh csh ksh
		desktop appimage deb rpm snap flatpakref apk xapk crx xpi gadget application
		appref-ms settingcontent-ms library-ms diagcab msix msixbundle appx appxbundle`) {
		m[e] = true
	}
	return m
})

// Result builds a save-file-result (status frame.StatusSaved,
// frame.StatusDeclined or frame.StatusRefused); reason is cut to the frame's
// limit and omitted when empty.
func Result(requestID, status, reason string) *frame.SaveFileResult {
	r := &frame.SaveFileResult{RequestID: requestID, Status: status}
	if reason != "" {
		reason = truncate(reason, frame.SaveFileResultReasonMaxLength)
		r.Reason = &reason
	}
	return r
}

func truncate(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
