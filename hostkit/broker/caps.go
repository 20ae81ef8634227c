package broker

import (
	"context"

	"github.com/snuggen/snuggen/frame"
)

// Call identifies who asked: the host's own view of the caller, never
// anything the frame claims. The broker's handlers receive it, and it rides
// in their context (CallFrom), so a confirm dialog deep inside a capability
// can be routed back to the right iframe.
type Call struct {
	User       string   // the signed-in user (Broker.OpenUser); "" for the one local user
	App        string   // the installed app's host key
	InstanceID string   // the host-minted instanceId
	RequestID  string   // the request being answered
	Session    *Session // the instance; transports map it to their connection
	// WriteID is the identity a replicated host gives a db write it may
	// send again (to the database's next owner): Store applies a write
	// with one at most once (store.ExecOnce, store.KVSetOnce). "" for none.
	WriteID string
}

// callKey is the context key of the request a handler runs for.
type callKey struct{}

// CallFrom returns the Call a handler's context carries.
func CallFrom(ctx context.Context) (Call, bool) {
	r, ok := ctx.Value(callKey{}).(*request)
	if !ok {
		return Call{}, false
	}
	return r.call, true
}

// PassLane lets the next request of the handler's app database run before
// the handler returns: a DBHandler calls it once its request's effect is
// in order (its write committed, its read taken), when what is left to do
// is only to wait (a replicated host's upload). Requests still run one at
// a time up to that point and in the order received (see lane.go). It
// does nothing outside a db-request's handler or when called again.
func PassLane(ctx context.Context) {
	if r, ok := ctx.Value(callKey{}).(*request); ok {
		if n := r.nextInLane(); n != nil {
			r.s.b.dispatch(n)
		}
	}
}

// AgentHandler answers app-message. stream sends cumulative text (streaming
// app-response frames) and may be called until AppMessage returns; the
// returned frame is the terminal (final data or error). ctx ends when the
// request is cancelled, superseded or timed out: return promptly then (the
// answer is dropped).
type AgentHandler interface {
	AppMessage(ctx context.Context, c Call, m *frame.AppMessage, stream func(text string)) *frame.AppResponse
}

// DBHandler answers db-request with its terminal db-response. The broker
// calls it for one app database (one Call.User and Call.App) one request at
// a time, in the order the requests were received (see lane.go), the next
// once the handler returned or called PassLane.
type DBHandler interface {
	DBRequest(ctx context.Context, c Call, r *frame.DBRequest) *frame.DBResponse
}

// nowDB is the store's DBHandler (Store), which can answer some requests
// at once: the fast route of a db-request. The broker offers each
// db-request that finds no earlier request of its database running or
// waiting to dbRequestNow, on the goroutine that received it (a
// transport's read loop), before it starts a worker. It never waits: it
// answers a kvGet on a database that is open and free (a bounded
// primary-key read), and returns nil otherwise, having done nothing; the
// broker then calls DBRequest on a worker, the reference route, which
// answers byte for byte the same (TestKVGetNowAnswersAsDBRequest).
type nowDB interface {
	DBHandler
	dbRequestNow(c Call, r *frame.DBRequest) *frame.DBResponse
}

// NetHandler answers net-request with its terminal net-response.
type NetHandler interface {
	NetRequest(ctx context.Context, c Call, r *frame.NetRequest) *frame.NetResponse
}

// OpenURLHandler answers open-url-request with its open-url-result.
type OpenURLHandler interface {
	OpenURLRequest(ctx context.Context, c Call, r *frame.OpenURLRequest) *frame.OpenURLResult
}

// SaveFileHandler answers save-file-request with its save-file-result.
type SaveFileHandler interface {
	SaveFileRequest(ctx context.Context, c Call, r *frame.SaveFileRequest) *frame.SaveFileResult
}

// AgentFunc adapts a function to AgentHandler.
type AgentFunc func(ctx context.Context, c Call, m *frame.AppMessage, stream func(text string)) *frame.AppResponse

// AppMessage calls f.
func (f AgentFunc) AppMessage(ctx context.Context, c Call, m *frame.AppMessage, stream func(string)) *frame.AppResponse {
	return f(ctx, c, m, stream)
}

// DBFunc adapts a function to DBHandler.
type DBFunc func(ctx context.Context, c Call, r *frame.DBRequest) *frame.DBResponse

// DBRequest calls f.
func (f DBFunc) DBRequest(ctx context.Context, c Call, r *frame.DBRequest) *frame.DBResponse {
	return f(ctx, c, r)
}

// NetFunc adapts a function to NetHandler.
type NetFunc func(ctx context.Context, c Call, r *frame.NetRequest) *frame.NetResponse

// NetRequest calls f.
func (f NetFunc) NetRequest(ctx context.Context, c Call, r *frame.NetRequest) *frame.NetResponse {
	return f(ctx, c, r)
}

// OpenURLFunc adapts a function to OpenURLHandler.
type OpenURLFunc func(ctx context.Context, c Call, r *frame.OpenURLRequest) *frame.OpenURLResult

// OpenURLRequest calls f.
func (f OpenURLFunc) OpenURLRequest(ctx context.Context, c Call, r *frame.OpenURLRequest) *frame.OpenURLResult {
	return f(ctx, c, r)
}

// SaveFileFunc adapts a function to SaveFileHandler.
type SaveFileFunc func(ctx context.Context, c Call, r *frame.SaveFileRequest) *frame.SaveFileResult

// SaveFileRequest calls f.
func (f SaveFileFunc) SaveFileRequest(ctx context.Context, c Call, r *frame.SaveFileRequest) *frame.SaveFileResult {
	return f(ctx, c, r)
}
