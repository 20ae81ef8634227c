package savefile_test

import (
	"path"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/savefile"
)

// dangerous are extensions that do something when opened from a download
// folder (run, install, mount, open a remote session or a link, load a
// macro or add-in, change the desktop) and that passed before the host
// decided by an allowlist of inert types (issue 26 item 7), with the older
// denylist's own examples.
var dangerous = []string{
	"rdp", "chm", "xll", "iso", "img", "vhd", "vhdx", "accde", "py", "pyw", "website", "search-ms",
	"searchConnector-ms", "theme", "jnlp", "webloc", "fileloc", "inetloc", "scpt", "wsc", "ps1xml", "cab",
	"exe", "bat", "cmd", "scr", "msi", "lnk", "url", "js", "vbs", "ps1", "jar", "app", "dmg", "pkg", "sh",
	"desktop", "appimage", "deb", "apk", "crx", "docm", "xlsm", "pptm", "xlam", "one", "hta", "msc", "reg",
	"mht", "mhtml", "xhtml", "svgz", "pl", "rb", "php", "command", "tool", "terminal", "shs", "settingcontent-ms",
}

// blanks are characters that show as nothing or as blank space: the
// fillers an attacker pads a name with before a dangerous extension, the
// zero-width and bidi controls, and spaces other than U+0020.
var blanks = []rune{
	0x2800, 0x3164, 0x115F, 0x1160, 0xFFA0, // Braille blank, Hangul fillers
	0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD, 0x034F, 0x180E, 0x17B4, 0x17B5, // zero width, joiners, soft hyphen
	0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C, // bidi
	0x00A0, 0x2000, 0x2007, 0x200A, 0x202F, 0x205F, 0x3000, 0x1680, // spaces that are not U+0020
	0xFE0F, 0xE0101, 0xE0041, 0x1D159, 0xFFFC, 0x2028, 0x2029, 0x0085, 0x0378, // selectors, tags, separators, unassigned
	0x16FE4, 0x1D173, 0x1D17A, 0x2062, 0x13430, 0x1BCA0, // Khitan filler, musical and other format controls
}

// TestInertTypesOnly: a name is saved only with an extension of
// SAVE_FILE_EXTENSIONS; every dangerous type is refused, in any case and
// behind any other extension, and so is a name without one.
func TestInertTypesOnly(t *testing.T) {
	for _, ext := range dangerous {
		for _, name := range []string{"file." + ext, "FILE." + strings.ToUpper(ext), "report.pdf." + ext} {
			if got, err := savefile.Name(name); err == nil {
				t.Errorf("Name(%q) = %q: a dangerous type passed", name, got)
			} else if !strings.Contains(err.Error(), "not a type the host saves") {
				t.Errorf("Name(%q): %v", name, err)
			}
		}
	}
	for _, ext := range frame.SaveFileExtensions {
		if got, err := savefile.Name("data." + ext); err != nil || got != "data."+ext {
			t.Errorf("Name(data.%s) = %q, %v: an inert type was refused", ext, got, err)
		}
	}
	for _, name := range []string{"README", "notes", "Makefile"} {
		if _, err := savefile.Name(name); err == nil || !strings.Contains(err.Error(), "no extension") {
			t.Errorf("Name(%q): %v, want a refusal for the missing extension", name, err)
		}
	}
}

// TestBlankLookingCharacters: every invisible or blank-looking character is
// refused wherever it stands, padding before an extension included.
func TestBlankLookingCharacters(t *testing.T) {
	for _, r := range blanks {
		for _, name := range []string{
			"invoice" + strings.Repeat(string(r), 30) + ".exe",
			"invoice.pdf" + strings.Repeat(string(r), 20) + ".txt",
			"a" + string(r) + "b.txt",
			string(r) + "notes.txt",
		} {
			if got, err := savefile.Name(name); err == nil {
				t.Errorf("Name(%+q) = %q: U+%04X passed", name, got, r)
			}
		}
	}
	for _, name := range []string{"my notes.txt", "Zürich café.csv", "東京 2026.txt", "한글 메모.md", "emoji 🙂.txt", "ñandú.json", "Ελληνικά.md"} {
		if _, err := savefile.Name(name); err != nil {
			t.Errorf("Name(%q): %v: an ordinary name was refused", name, err)
		}
	}
}

func TestMediaTypesOfData(t *testing.T) {
	for in, ok := range map[string]bool{
		"text/csv": true, "image/png": true, "application/json": true, "application/ld+json": true, "application/vnd.sqlite3": true,
		"application/zip": true, "application/octet-stream": true, "application/pdf": true, "image/svg+xml": true,
		"application/x-msdownload": false, "application/x-ms-shortcut": false, "application/java-archive": false,
		"application/x-sh": false, "application/vnd.microsoft.portable-executable": false, "application/x-apple-diskimage": false,
		"application/hta": false, "application/x-msi": false, "application/vnd.ms-cab-compressed": false,
	} {
		if _, err := savefile.MimeType(in); (err == nil) != ok {
			t.Errorf("MimeType(%q): %v, want ok %v", in, err, ok)
		}
	}
}

// FuzzName: whatever the name, one Name accepts has an extension of
// SAVE_FILE_EXTENSIONS and nothing but graphic characters, U+0020 the only
// space, no default-ignorable or blank-looking one, no path. The seed
// corpus is the attacks above (go test runs it; go test -fuzz FuzzName
// searches further).
func FuzzName(f *testing.F) {
	for _, ext := range dangerous {
		f.Add("file." + ext)
	}
	for _, r := range blanks {
		f.Add("invoice" + strings.Repeat(string(r), 8) + ".pdf.exe")
		f.Add("a" + string(r) + ".txt")
	}
	for _, s := range []string{"notes.md", "report 10:30.txt", "archive.tar.gz", "photo.jpg.exe", "x\u202etxt.exe", "../../.bashrc", "con.txt", "notes."} {
		f.Add(s)
	}
	inert := map[string]bool{}
	for _, e := range frame.SaveFileExtensions {
		inert[e] = true
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, err := savefile.Name(name)
		if err != nil {
			return
		}
		if ext := strings.ToLower(path.Ext(got)); ext == "" || !inert[ext[1:]] {
			t.Fatalf("Name(%+q) = %+q: extension %q is not inert", name, got, ext)
		}
		if strings.ContainsAny(got, `/\`) || got == "." || got == ".." || strings.HasPrefix(got, ".") {
			t.Fatalf("Name(%+q) = %+q: a path or a hidden name", name, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Name(%+q) = %+q: not UTF-8", name, got)
		}
		for _, r := range got {
			if !unicode.IsGraphic(r) || (unicode.IsSpace(r) && r != ' ') ||
				unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r) ||
				r == 0x2800 || r == 0x3164 || r == 0xFFA0 {
				t.Fatalf("Name(%+q) = %+q: holds U+%04X", name, got, r)
			}
		}
	})
}
