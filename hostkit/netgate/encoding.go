package netgate

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/snuggen/snuggen/frame"
)

// maxCodings bounds the content codings the gate undoes on one answer.
const maxCodings = 3

// decodeContent undoes every content coding the answer is labelled with,
// last applied first, so the scrub reads the bytes the app would: gzip
// (x-gzip) and deflate (zlib, or raw deflate as some servers send it). The
// transport asks for gzip only; any other coding (br, zstd, compress, …) is
// refused, never passed on encoded. did reports whether anything was
// decoded here (the transport's own gunzip shows in resp.Uncompressed).
func (g *Gate) decodeContent(ctx context.Context, resp *http.Response) (io.ReadCloser, bool, *failure) {
	var codings []string
	for _, v := range resp.Header.Values("Content-Encoding") {
		for _, tok := range strings.Split(v, ",") {
			tok = strings.ToLower(strings.TrimSpace(tok))
			if tok != "" && tok != "identity" {
				codings = append(codings, tok)
			}
		}
	}
	if len(codings) == 0 {
		return io.NopCloser(resp.Body), false, nil
	}
	if len(codings) > maxCodings {
		return nil, false, fail(frame.CodeNetFetchFailed, fmt.Sprintf("the upstream sent %d content-encodings (%s); the host undoes at most %d", len(codings), strings.Join(codings, ", "), maxCodings))
	}
	var r io.Reader = resp.Body
	var closers []io.Closer
	closeAll := func() error {
		for _, c := range closers {
			c.Close()
		}
		return nil
	}
	for i := len(codings) - 1; i >= 0; i-- {
		switch c := codings[i]; c {
		case "gzip", "x-gzip":
			zr, err := gzip.NewReader(r)
			if errors.Is(err, io.EOF) {
				r = bytes.NewReader(nil) // an empty body
				continue
			}
			if err != nil {
				closeAll()
				return nil, false, g.readFailure(ctx, fmt.Errorf("content-encoding gzip: %w", err))
			}
			closers = append(closers, zr)
			r = zr
		case "deflate":
			zr := inflater(r)
			closers = append(closers, zr)
			r = zr
		default:
			closeAll()
			return nil, false, fail(frame.CodeNetFetchFailed, fmt.Sprintf("the upstream sent content-encoding %q, which the host cannot decode to scrub (it asks for gzip only); the answer is refused rather than passed on encoded", c))
		}
	}
	return readCloser{r, closeAll}, true, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// inflater reads deflate as HTTP means it (a zlib stream) or as many
// servers send it (raw deflate), told apart by the zlib header.
func inflater(r io.Reader) io.ReadCloser {
	br := bufio.NewReader(r)
	if h, err := br.Peek(2); err == nil && zlibHeader(h) {
		if zr, err := zlib.NewReader(br); err == nil {
			return zr
		}
	}
	return flate.NewReader(br)
}

// zlibHeader reports a valid zlib header (RFC 1950): deflate, a window of at
// most 32 KiB, and the check bits.
func zlibHeader(h []byte) bool {
	return len(h) >= 2 && h[0]&0x0f == 8 && h[0]>>4 <= 7 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0
}

// checkCompressed looks inside an answer that carried a credential for
// compressed data the app could inflate itself (a gzip or zlib stream, or
// raw deflate, at the start of the body, nested up to three deep). Such
// data cannot be scrubbed in place, so an answer whose inflated bytes hold
// a secret is refused, and so is one that inflates past inflateBudget (the
// secret could sit beyond it).
func (s *scrubber) checkCompressed(data []byte) *failure {
	if len(s.patterns) == 0 || len(data) == 0 {
		return nil
	}
	budget := inflateBudget
	found, kind := s.searchInflated(data, 0, &budget)
	switch {
	case found:
		return fail(frame.CodeNetFetchFailed, fmt.Sprintf("the answer holds a connection's credential inside %s-compressed data, which the host cannot scrub in place; it is refused", kind))
	case budget < 0:
		return fail(frame.CodeNetSizeExceeded, fmt.Sprintf("the answer is %s-compressed data that inflates past %d MiB; the host cannot search it for the credential, so it is refused", kind, inflateBudget>>20))
	}
	return nil
}

// searchInflated inflates data every way it could be compressed and
// searches the result; budget (shared) goes negative when the inflated
// bytes exceed it.
func (s *scrubber) searchInflated(data []byte, depth int, budget *int) (bool, string) {
	type opener struct {
		kind string
		open func(io.Reader) (io.Reader, error)
	}
	var tries []opener
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		tries = append(tries, opener{"gzip", func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }})
	}
	if zlibHeader(data) {
		tries = append(tries, opener{"zlib", func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) }})
	}
	tries = append(tries, opener{"deflate", func(r io.Reader) (io.Reader, error) { return flate.NewReader(r), nil }})
	for _, t := range tries {
		rd, err := t.open(bytes.NewReader(data))
		if err != nil {
			continue
		}
		// A stream cut short or corrupt still yields what it decoded so
		// far, and the app could read that much too.
		out, _ := io.ReadAll(io.LimitReader(rd, int64(*budget)+1))
		*budget -= len(out)
		if *budget < 0 {
			return false, t.kind
		}
		if len(out) == 0 {
			continue
		}
		if s.found(out) {
			return true, t.kind
		}
		if depth < 2 {
			if found, kind := s.searchInflated(out, depth+1, budget); found || *budget < 0 {
				return found, t.kind + "+" + kind
			}
		}
	}
	return false, ""
}
