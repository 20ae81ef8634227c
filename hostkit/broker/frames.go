package broker

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/events"
)

var (
	errTooLarge = errors.New("the answer does not fit its frame's size class")
	errInvalid  = errors.New("the host built an invalid frame")
)

func capabilities(o Options) frame.Capabilities {
	net, openURL, saveFile := o.Net != nil, o.OpenURL != nil, o.SaveFile != nil
	return frame.Capabilities{
		Streaming: o.Agent != nil,
		DB:        o.DB != nil,
		Auth:      auth(o.Net),
		Net:       &net,
		OpenURL:   &openURL,
		SaveFile:  &saveFile,
	}
}

// auth is host-ready's auth flag: whether the net handler injects
// credentials (it says so by an Auth() bool method).
func auth(h NetHandler) bool {
	a, ok := h.(interface{ Auth() bool })
	return ok && a.Auth()
}

// hostReady is the host-ready of an instance: locale is the page's
// (Session.SetLocale), else Options.Locale.
func hostReady(instanceID string, o Options, theme frame.Theme, locale string) *frame.HostReady {
	hr := &frame.HostReady{
		InstanceID:       instanceID,
		ProtocolVersions: frame.ProtocolVersions,
		Capabilities:     capabilities(o),
		Theme:            theme,
	}
	if locale == "" {
		locale = o.Locale
	}
	if locale != "" {
		hr.Locale = &locale
	}
	return hr
}

func themeEvent(t frame.Theme) (*frame.HostEvent, error) { return events.Theme(t) }

// checkEvent holds a host-event to the event table (R7) before it is sent.
func checkEvent(ev *frame.HostEvent) error {
	if err := events.Check(ev); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	return nil
}

func resizeHeight(e *frame.AppEvent) (int, error) { return events.ResizeHeight(e) }

// errorFrame is the error answer of the paired response type (generated from
// rules.json: an open-url-result refuses with "CODE: message" as its reason).
func errorFrame(respType, rid string, e *frame.Error) frame.Frame {
	return frame.ErrorAnswer(respType, rid, e)
}

func hostError(respType, msg string) frame.Frame {
	return errorFrame(respType, "", frame.NewError(frame.CodeHostError, msg))
}

// sizeError replaces an answer that cannot be encoded or does not fit.
func sizeError(respType, rid string, err error) frame.Frame {
	code := frame.CodeHostError
	if errors.Is(err, errTooLarge) {
		switch respType {
		case frame.TypeDBResponse:
			code = frame.CodeDBResultTooLarge
		case frame.TypeNetResponse:
			code = frame.CodeNetSizeExceeded
		}
	}
	msg := "the host could not encode its answer"
	switch {
	case errors.Is(err, errTooLarge):
		msg = "the answer is larger than the frame's size class allows"
	case errors.Is(err, errInvalid):
		msg = frame.Truncate(err.Error(), 500)
	}
	return errorFrame(respType, rid, frame.NewError(code, msg))
}

func streamingFrame(rid, text string, seq int) *frame.AppResponse {
	t := true
	return &frame.AppResponse{RequestID: rid, OK: true, Streaming: &t, Text: &text, Seq: &seq}
}

func finalFrame(rid string, data json.RawMessage) *frame.AppResponse {
	f := false
	return &frame.AppResponse{RequestID: rid, OK: true, Streaming: &f, Data: data}
}

func isStreaming(r *frame.AppResponse) bool { return r.Streaming != nil && *r.Streaming }

func isStreamingFrame(f frame.Frame) bool {
	r, ok := f.(*frame.AppResponse)
	return ok && r.OK && isStreaming(r)
}

// answer is a handler's answer as a frame: nil when the handler returned a
// nil pointer (a typed nil in an interface would not compare equal to nil).
func answer[F interface {
	*T
	frame.Frame
}, T any](f F) frame.Frame {
	if f == nil {
		return nil
	}
	return f
}
