package openurl

import "testing"

// TestReadable: the Unicode a URL's ASCII form hides is shown, what could
// be mistaken for something else is not.
func TestReadable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://example.com/docs", "https://example.com/docs"},
		{"https://xn--pple-43d.com/", "https://аpple.com/"}, // Cyrillic а: the homograph shows
		{"https://xn--mnchen-3ya.de:8443/a", "https://münchen.de:8443/a"},
		{"https://de.wikipedia.org/wiki/Z%C3%BCrich?q=caf%C3%A9#%C3%A9", "https://de.wikipedia.org/wiki/Zürich?q=café#é"},
		{"https://x.example/a%2Fb%20c%3F", "https://x.example/a%2Fb%20c%3F"},         // ASCII escapes stay
		{"https://x.example/%E2%80%AEexe.txt", "https://x.example/%E2%80%AEexe.txt"}, // a right-to-left override stays escaped
		{"https://x.example/%E2%80%8B", "https://x.example/%E2%80%8B"},               // zero-width space
		{"https://x.example/%C3", "https://x.example/%C3"},                           // half a character
		{"https://x.example/%C3%BC%FF%C3%BC", "https://x.example/ü%FFü"},
		{"https://xn--zz.example/", "https://xn--zz.example/"}, // no valid Punycode
		{"https://[2001:db8::1]:443/", "https://[2001:db8::1]:443/"},
		{"mailto:x", "mailto:x"},
	} {
		if got := Readable(c.in); got != c.want {
			t.Errorf("Readable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
