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
type Clicks = askgate.Clicks

// ErrNoUI is a Confirmer's "nobody to ask" (a headless host, a closed page),
// the same error as openurl.ErrNoUI.
var ErrNoUI = askgate.ErrNoUI

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
	switch err := s.gate.Claim(ctx, app, s.c); {
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
// "gpj.exe" around, a zero-width character, a blank-looking filler such as
// U+2800 or U+3164 padding the name, a line break), climb out of the
// download folder (a / or \, "." and ".."), hide (a leading dot), or be
// changed by the file system (trailing dots or spaces, a Windows device
// name) is refused. What the file does when opened is decided by its type:
// the extension must be one of frame.SaveFileExtensions, types that open as
// data in a viewer or editor (rules.json SAVE_FILE_EXTENSIONS); any other
// (a program, script, shortcut, disk image, installer, macro document) is
// refused, and so is a name without one, which a browser would complete
// from the media type. Characters Windows refuses in names (< > : " | ? *)
// become "_", as browsers do for downloads, so "notes 10:30.md" saves as
// "notes 10_30.md".
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
		case invisible(r):
			return "", fmt.Errorf("the file name holds U+%04X, an invisible, blank-looking or control character that can make a name read as another", r)
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
	switch {
	case ext == "":
		return "", errors.New("the file name has no extension: name the type of its data (.txt, .json, .csv, .md, .pdf, an image…)")
	case !inert()[ext[1:]]:
		return "", fmt.Errorf("the file name ends in %s, not a type the host saves: only data types a viewer or editor opens are saved (.txt, .json, .csv, .md, .html, .pdf, an image, .zip…), never one that runs, installs, mounts or links when opened", ext)
	}
	return out, nil
}

// invisible reports a character that shows as nothing, as blank, or not at
// all, so that a name holding it reads as another: anything not graphic
// (controls, format characters such as the bidi controls and zero-width
// joiners, line and paragraph separators, private use, surrogates,
// unassigned code points), noncharacters, spaces other than U+0020, the
// default-ignorable code points (the Hangul fillers U+115F, U+1160, U+3164,
// U+FFA0, the combining grapheme joiner, variation selectors, tags) and the
// blank-looking symbols of blankLooking.
func invisible(r rune) bool {
	return r == utf8.RuneError || !unicode.IsGraphic(r) || isNoncharacter(r) ||
		(unicode.Is(unicode.Zs, r) && r != ' ') ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(blankLooking, r)
}

// blankLooking are graphic characters that render blank or nearly so in
// common fonts without being spaces or default-ignorable: the Braille
// pattern blank U+2800, the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0,
// listed again beside the property), the Khmer inherent vowels U+17B4 and
// U+17B5, the Mongolian vowel separator U+180E, the Ogham space mark
// U+1680, the combining grapheme joiner U+034F, the musical symbol null
// notehead U+1D159, the Khitan small script filler U+16FE4 (a combining
// mark that draws nothing) and the object replacement character U+FFFC.
var blankLooking = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x034F, Hi: 0x034F, Stride: 1},
		{Lo: 0x115F, Hi: 0x1160, Stride: 1},
		{Lo: 0x1680, Hi: 0x1680, Stride: 1},
		{Lo: 0x17B4, Hi: 0x17B5, Stride: 1},
		{Lo: 0x180E, Hi: 0x180E, Stride: 1},
		{Lo: 0x2800, Hi: 0x2800, Stride: 1},
		{Lo: 0x3164, Hi: 0x3164, Stride: 1},
		{Lo: 0xFFA0, Hi: 0xFFA0, Stride: 1},
		{Lo: 0xFFFC, Hi: 0xFFFC, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x16FE4, Hi: 0x16FE4, Stride: 1},
		{Lo: 0x1D159, Hi: 0x1D159, Stride: 1},
	},
}

// MimeType checks a media type ("type/subtype", no parameters, RFC 6838
// characters) and returns it in lower case. It must be one of
// frame.SaveFileMediaTypes (rules.json SAVE_FILE_MEDIA_TYPES: "text/*",
// "application/*+json" and the like): the type of data, never of a program,
// which a browser could use to rename the file.
func MimeType(mt string) (string, error) {
	t, sub, ok := strings.Cut(mt, "/")
	if !ok || !restrictedName(t) || !restrictedName(sub) {
		return "", fmt.Errorf("mimeType %q is not a media type such as text/csv", mt)
	}
	mt = strings.ToLower(mt)
	for _, p := range frame.SaveFileMediaTypes {
		if ok, _ := path.Match(p, mt); ok {
			return mt, nil
		}
	}
	return "", fmt.Errorf("mimeType %q is not a type of data the host saves (text/*, image/*, audio/*, video/*, application/json, application/pdf, application/zip, application/octet-stream…)", mt)
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

// inert is frame.SaveFileExtensions as a set.
var inert = sync.OnceValue(func() map[string]bool {
	m := make(map[string]bool, len(frame.SaveFileExtensions))
	for _, e := range frame.SaveFileExtensions {
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
		reason = frame.Truncate(reason, frame.SaveFileResultReasonMaxLength)
		r.Reason = &reason
	}
	return r
}
