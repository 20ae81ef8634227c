// Package sse is the streaming HTTP exchange the OpenAI and Anthropic
// backends share: post a JSON body, map the status, read the
// text/event-stream (the WHATWG server-sent events format). Its limit: it
// knows nothing of either API's payloads.
package sse

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/snuggen/snuggen/hostkit/agent"
)

// MaxLine bounds one line of the stream; a longer line is an error, not an
// unbounded allocation.
const MaxLine = 4 << 20

// Event is one dispatched server-sent event.
type Event struct {
	Name string // the "event:" field, "" when absent
	Data string // the "data:" lines joined with "\n"
}

// ErrStop, returned by Read's callback, ends the reading without an error: the
// reply is complete ([DONE], message_stop), and whatever a server sends after
// it is not read.
var ErrStop = errors.New("sse: stop")

// RawLimit is how many bytes of event stream are read for a reply of at
// most maxText bytes of text: the APIs wrap every few characters of text in
// a JSON event of some 200 bytes (id, model, choices…), so a reply at the
// limit may take 16 times its text; beyond that the server is sending
// something other than the reply (comments, empty events, a loop).
func RawLimit(maxText int) int64 { return 16*int64(maxText) + 64<<10 }

// Limit returns r cut at RawLimit(maxText) bytes: reading past it fails with
// an error wrapping agent.ErrReplyTooLarge.
func Limit(r io.Reader, maxText int) io.Reader {
	return &limited{r: r, left: RawLimit(maxText), limit: RawLimit(maxText)}
}

type limited struct {
	r           io.Reader
	left, limit int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, fmt.Errorf("%w: the event stream passed %d bytes", agent.ErrReplyTooLarge, l.limit)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// Read calls fn for each event in r until r ends or fn returns an error
// (ErrStop ends it with nil). It returns r's own error (a dropped connection, a
// cancelled context) as it comes. Whether the stream ended complete is the
// caller's to judge from the events it saw.
func Read(r io.Reader, fn func(Event) error) (err error) {
	defer func() {
		if errors.Is(err, ErrStop) {
			err = nil
		}
	}()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	var ev Event
	var data []string
	pending := false
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if pending {
				ev.Data = strings.Join(data, "\n")
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, data, pending = Event{}, data[:0], false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment, e.g. a keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Name, pending = value, true
		case "data":
			data, pending = append(data, value), true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading event stream: %w", err)
	}
	if pending {
		// A final event without its blank line still counts when complete
		// (some servers close right after the last data line).
		ev.Data = strings.Join(data, "\n")
		return fn(ev)
	}
	return nil
}
