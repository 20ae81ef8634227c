package netgate

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
)

// answer turns an upstream response into a net-response: the body decoded
// from every content encoding it is labelled with (or refused), read at most
// MaxNetResponseBodyBytes (capped while reading), scrubbed, text cut at a
// UTF-8 boundary or binary as base64, headers through the whitelist, and the
// whole frame within MaxNetFrameBytes. carried says the chain carried a
// connection's credential: then compressed data inside the body is
// inflated and searched too.
func (g *Gate) answer(ctx context.Context, resp *http.Response, method string, carried bool) (*frame.NetResponse, *failure) {
	defer resp.Body.Close()
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		return nil, fail(frame.CodeNetFetchFailed, fmt.Sprintf("the upstream answered status %d", resp.StatusCode))
	}
	var r io.Reader = resp.Body
	decoded := resp.Uncompressed
	if method != http.MethodHead {
		dr, did, f := g.decodeContent(ctx, resp)
		if f != nil {
			return nil, f
		}
		defer dr.Close()
		r, decoded = dr, decoded || did
	}
	sc := g.cfg.scrub
	limit := int64(frame.MaxNetResponseBodyBytes)
	data, err := io.ReadAll(io.LimitReader(r, limit+int64(sc.margin())+1))
	if err != nil {
		return nil, g.readFailure(ctx, err)
	}
	truncated := int64(len(data)) > limit
	if carried {
		if f := sc.checkCompressed(data); f != nil {
			return nil, f
		}
	}
	data, scrubbed := sc.scrub(data)
	if truncated {
		data = sc.cutPartial(data[:min(int64(len(data)), limit)])
	}
	changed := truncated || decoded || scrubbed

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
	out.Headers = filterHeaders(resp.Header, sc, changed)
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
// values scrubbed, a name holding a secret dropped, names lower-cased,
// repeated values joined. A content-length that no longer describes the
// body is dropped.
func filterHeaders(h http.Header, sc *scrubber, bodyChanged bool) map[string]string {
	out := map[string]string{}
	for name, values := range h {
		lower := strings.ToLower(name)
		if !frame.ResponseHeaderAllowed(lower) || frame.IsStripHeader(lower) {
			continue
		}
		if bodyChanged && lower == "content-length" {
			continue
		}
		// The x-ratelimit-* glob lets the upstream choose part of a name;
		// a name that holds a secret is dropped (a name cannot be redacted).
		if sc.found([]byte(lower)) {
			continue
		}
		v := sc.scrubString(strings.Join(values, ", "))
		out[lower] = v
	}
	return out
}
