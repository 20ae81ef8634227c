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

// mimeType is fixed (not the system's mime table) so output is the same on
// every machine; "" for an extension it does not know. A switch, not a map
// built in every process's start.
func mimeType(ext string) string {
	switch ext {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	case ".avif":
		return "image/avif"
	case ".svg":
		return "image/svg+xml"
	case ".ico":
		return "image/x-icon"
	case ".bmp":
		return "image/bmp"
	case ".woff":
		return "font/woff"
	case ".woff2":
		return "font/woff2"
	case ".ttf":
		return "font/ttf"
	case ".otf":
		return "font/otf"
	case ".eot":
		return "application/vnd.ms-fontobject"
	case ".mp3":
		return "audio/mpeg"
	case ".wav":
		return "audio/wav"
	case ".ogg":
		return "audio/ogg"
	case ".m4a":
		return "audio/mp4"
	case ".mp4":
		return "video/mp4"
	case ".webm":
		return "video/webm"
	case ".vtt":
		return "text/vtt"
	case ".txt":
		return "text/plain"
	case ".json":
		return "application/json"
	}
	return ""
}

func isAsset(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	return mimeType(ext) != "" && ext != ".json" && ext != ".txt"
}

func dataURI(p string, data []byte) string {
	mt := mimeType(strings.ToLower(path.Ext(p)))
	if mt == "" {
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
