package pack

import (
	"encoding/base64"
	"net/url"
	"path"
	"strings"
)

// refKind classifies a URL found in the page.
type refKind int

const (
	refEmpty    refKind = iota
	refFragment         // "#x"
	refData             // data: or blob:
	refRemote           // http:, https: or protocol-relative
	refScheme           // another scheme (mailto:, javascript:, file:, ...)
	refLocal            // a path relative to the page or the app root
)

func classifyRef(ref string) refKind {
	ref = strings.TrimSpace(ref)
	switch {
	case ref == "":
		return refEmpty
	case strings.HasPrefix(ref, "#"):
		return refFragment
	case strings.HasPrefix(ref, "//"):
		return refRemote
	}
	if i := strings.IndexAny(ref, ":/?#"); i > 0 && ref[i] == ':' {
		scheme := strings.ToLower(ref[:i])
		switch scheme {
		case "data", "blob":
			return refData
		case "http", "https":
			return refRemote
		}
		return refScheme
	}
	return refLocal
}

// remoteCheck decides whether a remote reference may stay in the output: it
// must be https and its host on the CDN allowlist. It returns a diagnostic
// template (message, why, fix) when it may not.
func remoteCheck(ref, what string) (msg, why, fix string, ok bool) {
	u, err := url.Parse(strings.TrimSpace(ref))
	if err != nil || u.Host == "" {
		return "cannot read the URL " + quote(ref), "a " + what + " must be an https URL on the CDN allowlist or a local file",
			"fix the URL, or download the file next to the page and reference it by a relative path", false
	}
	if !allowedHost(u.Hostname()) {
		return what + " from " + u.Hostname() + " is not on the CDN allowlist",
			"the sandbox loads scripts, styles, images and fonts only from " + allowlistText(),
			"download the file next to the page and reference it by a relative path (it is inlined), or load it from an allowlisted CDN", false
	}
	if u.Scheme != "https" {
		return what + " " + quote(ref) + " is not https", "the sandbox's CSP allows the CDN allowlist over https only",
			"write https://" + u.Host + u.EscapedPath(), false
	}
	return "", "", "", true
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return "\"" + s + "\""
}

// mimeTypes is fixed (not the system's mime table) so output is the same on
// every machine.
var mimeTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".avif": "image/avif", ".svg": "image/svg+xml", ".ico": "image/x-icon",
	".bmp":  "image/bmp",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
	".eot": "application/vnd.ms-fontobject",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".m4a": "audio/mp4",
	".mp4": "video/mp4", ".webm": "video/webm",
	".vtt": "text/vtt", ".txt": "text/plain", ".json": "application/json",
}

func isAsset(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	_, ok := mimeTypes[ext]
	return ok && ext != ".json" && ext != ".txt"
}

func dataURI(p string, data []byte) string {
	mt, ok := mimeTypes[strings.ToLower(path.Ext(p))]
	if !ok {
		mt = "application/octet-stream"
	}
	return "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(data)
}

func joinFS(dir, p string) string {
	if dir == "" || dir == "." {
		return p
	}
	return dir + "/" + p
}

// cleanFS cleans an FS path; a path that climbs out of the root keeps its
// leading "../" so fs.ValidPath rejects it.
func cleanFS(p string) string {
	return path.Clean(p)
}
