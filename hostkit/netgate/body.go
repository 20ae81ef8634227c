package netgate

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
)

// redacted replaces every secret value in what goes back to the app.
const redacted = "[REDACTED]"

// secretForms are the spellings of a secret the scrub looks for: as is, and
// as an echo server would most likely re-encode it (URL, JSON, base64).
func secretForms(secret string) []string {
	forms := []string{secret}
	add := func(s string) {
		if len(s) >= MinSecretLength && !strings.Contains(strings.Join(forms, "\x00"), s) {
			forms = append(forms, s)
		}
	}
	q := url.QueryEscape(secret)
	add(q)
	add(strings.ReplaceAll(q, "+", "%20"))
	add(lowerEscapes(q))
	add(url.PathEscape(secret))
	if b, err := json.Marshal(secret); err == nil {
		add(string(b[1 : len(b)-1]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(secret) == nil {
		s := strings.TrimSpace(buf.String())
		add(s[1 : len(s)-1])
	}
	add(base64.StdEncoding.EncodeToString([]byte(secret)))
	add(base64.RawURLEncoding.EncodeToString([]byte(secret)))
	return forms
}

// lowerEscapes spells percent-escapes with lower-case hex digits.
func lowerEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1] = byte(unicode.ToLower(rune(b[i+1])))
			b[i+2] = byte(unicode.ToLower(rune(b[i+2])))
		}
	}
	return string(b)
}

// scrubBytes replaces every form of every secret with [REDACTED].
func scrubBytes(b []byte, forms []string) []byte {
	for _, f := range forms {
		if bytes.Contains(b, []byte(f)) {
			b = bytes.ReplaceAll(b, []byte(f), []byte(redacted))
		}
	}
	return b
}

// cutPartialSecret drops a tail that is the beginning of a secret form: a
// body cut at the cap must not end with the first half of a token.
func cutPartialSecret(b []byte, forms []string) []byte {
	for _, f := range forms {
		for k := min(len(f)-1, len(b)); k > 0; k-- {
			if bytes.HasSuffix(b, []byte(f[:k])) {
				b = b[:len(b)-k]
				break
			}
		}
	}
	return b
}

// answer turns an upstream response into a net-response: the body read at
// most MaxNetResponseBodyBytes (capped while reading), decoded from gzip,
// scrubbed, text cut at a UTF-8 boundary or binary as base64, headers
// through the whitelist, and the whole frame within MaxNetFrameBytes.
func (g *Gate) answer(ctx context.Context, resp *http.Response, method string) (*frame.NetResponse, *failure) {
	defer resp.Body.Close()
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		return nil, fail(frame.CodeNetFetchFailed, fmt.Sprintf("the upstream answered status %d", resp.StatusCode))
	}
	var r io.Reader = resp.Body
	decoded := resp.Uncompressed
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		if method == http.MethodHead {
			break
		}
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, g.readFailure(ctx, fmt.Errorf("gzip: %w", err))
		}
		defer zr.Close()
		r, decoded = zr, true
	default:
		return nil, fail(frame.CodeNetFetchFailed, fmt.Sprintf("the upstream sent content-encoding %q, which the host cannot decode to scrub", enc))
	}
	forms := g.cfg.forms
	limit := int64(frame.MaxNetResponseBodyBytes)
	data, err := io.ReadAll(io.LimitReader(r, limit+int64(g.cfg.longestForm)+1))
	if err != nil {
		return nil, g.readFailure(ctx, err)
	}
	truncated := int64(len(data)) > limit
	n := len(data)
	data = scrubBytes(data, forms)
	if truncated {
		data = cutPartialSecret(data[:min(int64(len(data)), limit)], forms)
	}
	changed := truncated || decoded || len(data) != n

	ct := resp.Header.Get("Content-Type")
	out := &frame.NetResponse{OK: true}
	status := resp.StatusCode
	out.Status = &status
	text := data
	if truncated {
		text = trimPartialRune(text)
	}
	if isText(ct, text) {
		s := string(text)
		out.Body = &s
		enc := frame.BodyEncodingUtf8
		out.BodyEncoding = &enc
	} else {
		if truncated {
			return nil, fail(frame.CodeNetSizeExceeded, fmt.Sprintf("the binary answer is larger than %d bytes", frame.MaxNetResponseBodyBytes))
		}
		s := base64.StdEncoding.EncodeToString(data)
		out.Body = &s
		enc := frame.BodyEncodingBase64
		out.BodyEncoding = &enc
	}
	if truncated {
		tr := true
		out.Truncated = &tr
	}
	out.Headers = filterHeaders(resp.Header, forms, changed)
	if frameBound(out) > frame.MaxNetFrameBytes {
		// Only an answer that might not fit pays for an exact measure.
		raw, err := frame.Marshal(out)
		if err != nil {
			return nil, fail(frame.CodeHostError, fmt.Sprintf("the answer cannot be encoded: %v", err))
		}
		if len(raw) > frame.MaxNetFrameBytes {
			return nil, fail(frame.CodeNetSizeExceeded, fmt.Sprintf("the answer takes %d bytes as a frame; the limit is %d", len(raw), frame.MaxNetFrameBytes))
		}
	}
	return out, nil
}

// frameBound is an upper bound of the frame's JSON size: a string byte takes
// at most 6 bytes escaped (\u00XX), and the fixed fields and a requestId of
// 128 code points fit in 1 KiB.
func frameBound(r *frame.NetResponse) int {
	n := 1024
	if r.Body != nil {
		n += 6 * len(*r.Body)
	}
	for k, v := range r.Headers {
		n += 6*(len(k)+len(v)) + 6
	}
	return n
}

func (g *Gate) readFailure(ctx context.Context, err error) *failure {
	if ctx.Err() != nil {
		f := ctxFailure(ctx, g.opts.timeout)
		f.msg += " while reading the body"
		return f
	}
	return fail(frame.CodeNetFetchFailed, fmt.Sprintf("reading the body failed: %v", err))
}

func bodyBytes(r *frame.NetResponse) int {
	if r.Body == nil {
		return 0
	}
	return len(*r.Body)
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// isText decides between a utf8 and a base64 body: the content type must
// not name a binary type, and the bytes must be valid UTF-8.
func isText(contentType string, b []byte) bool {
	if contentType != "" {
		mt, _, err := mime.ParseMediaType(contentType)
		if err != nil {
			return false
		}
		if !textual(mt) {
			return false
		}
	}
	return utf8.Valid(b)
}

func textual(mt string) bool {
	if strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-www-form-urlencoded", "application/x-ndjson", "application/graphql-response+json",
		"application/problem+json", "application/csv", "application/yaml", "application/toml":
		return true
	}
	return false
}

// filterHeaders passes the response-header whitelist only (set-cookie never),
// scrubbed, names lower-cased, repeated values joined. A content-length that
// no longer describes the body is dropped.
func filterHeaders(h http.Header, forms []string, bodyChanged bool) map[string]string {
	out := map[string]string{}
	for name, values := range h {
		lower := strings.ToLower(name)
		if !frame.ResponseHeaderAllowed(lower) || frame.IsStripHeader(lower) {
			continue
		}
		if bodyChanged && lower == "content-length" {
			continue
		}
		v := string(scrubBytes([]byte(strings.Join(values, ", ")), forms))
		out[lower] = v
	}
	return out
}
