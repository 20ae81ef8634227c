package broker

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/hostkit/openurl"
	"github.com/snuggen/snuggen/hostkit/savefile"
	"github.com/snuggen/snuggen/hostkit/store"
)

// Agent answers app-message with an agent.Bridge. The Bridge's per-instance
// state (the parse-failure budget) is keyed by the host-minted instanceId and
// forgotten when the instance dies, or, with agent.Options.Budget, kept per
// (user, app) beyond the instance.
func Agent(b *agent.Bridge) AgentHandler { return bridgeAgent{b} }

type bridgeAgent struct{ b *agent.Bridge }

func (a bridgeAgent) AppMessage(ctx context.Context, c Call, m *frame.AppMessage, stream func(string)) *frame.AppResponse {
	data, ferr := a.b.Ask(ctx, agent.Caller{User: c.User, App: c.App, Instance: c.InstanceID}, m, stream)
	if ferr != nil {
		return &frame.AppResponse{RequestID: m.RequestID, OK: false, Error: ferr}
	}
	return finalFrame(m.RequestID, data)
}

func (a bridgeAgent) Forget(instanceKey string) { a.b.Forget(instanceKey) }

func (a bridgeAgent) ResetCall(c Call) error {
	return a.b.ResetCaller(context.Background(), agent.Caller{User: c.User, App: c.App, Instance: c.InstanceID})
}

// OpenURL answers open-url-request with an openurl.Opener; the dialog names
// the installed app by its host key.
func OpenURL(o *openurl.Opener) OpenURLHandler {
	return OpenURLFunc(func(ctx context.Context, c Call, r *frame.OpenURLRequest) *frame.OpenURLResult {
		return o.Open(ctx, c.App, r)
	})
}

// SaveFile answers save-file-request with a savefile.Saver; the dialog names
// the installed app by its host key.
func SaveFile(s *savefile.Saver) SaveFileHandler {
	return SaveFileFunc(func(ctx context.Context, c Call, r *frame.SaveFileRequest) *frame.SaveFileResult {
		return s.Save(ctx, c.App, r)
	})
}

// Store answers db-request with a store.Store, in the namespace of the
// installed app the session was opened for (never the announced appId) and
// its user (store.UserKey(Call.User, Call.App)).
// A *store.Error becomes its code; any other failure is HOST_ERROR without
// the host's details (paths stay on the host).
func Store(s *store.Store) DBHandler { return storeDB{s} }

type storeDB struct{ s *store.Store }

func (d storeDB) DBRequest(ctx context.Context, c Call, r *frame.DBRequest) *frame.DBResponse {
	result, err := d.do(ctx, store.UserKey(c.User, c.App), c.WriteID, r)
	return d.response(ctx, r, result, err)
}

// response is the db-response of a request that gave result or err.
func (d storeDB) response(ctx context.Context, r *frame.DBRequest, result *frame.DBResult, err error) *frame.DBResponse {
	if err != nil {
		var se *store.Error
		if errors.As(err, &se) {
			return &frame.DBResponse{RequestID: r.RequestID, OK: false, Error: frame.NewError(se.Code, se.Message)}
		}
		if ctx.Err() != nil {
			return &frame.DBResponse{RequestID: r.RequestID, OK: false, Error: frame.NewError(frame.CodeCancelled, "the request ended")}
		}
		return &frame.DBResponse{RequestID: r.RequestID, OK: false, Error: frame.NewError(frame.CodeHostError, "the host's database failed")}
	}
	return &frame.DBResponse{RequestID: r.RequestID, OK: true, Result: result}
}

// dbRequestNow answers a kvGet at once when the app's database is open and
// free (store.KVGetNow), and returns nil for every other request or when
// the database is busy. Its answers are DBRequest's, byte for byte
// (TestKVGetNowAnswersAsDBRequest).
func (d storeDB) dbRequestNow(c Call, r *frame.DBRequest) *frame.DBResponse {
	if r.Op != frame.OpKvGet {
		return nil
	}
	v, ok, err := d.s.KVGetNow(store.UserKey(c.User, c.App), deref(r.Key))
	if !ok {
		return nil
	}
	if err != nil {
		return d.response(context.Background(), r, nil, err)
	}
	return &newKVAnswer(r.RequestID, v.Raw, v.Found).resp
}

// kvAnswer holds a kvGet's answer and what it points to, in one allocation.
type kvAnswer struct {
	resp  frame.DBResponse
	res   frame.DBResult
	found bool
}

// newKVAnswer is the answer to request id of a kvGet that found v (found) or
// nothing (the value null).
func newKVAnswer(id string, v json.RawMessage, found bool) *kvAnswer {
	a := &kvAnswer{found: found}
	if !found {
		v = json.RawMessage("null")
	}
	a.res = frame.DBResult{Found: &a.found, Value: v}
	a.resp = frame.DBResponse{RequestID: id, OK: true, Result: &a.res}
	return a
}

// do runs r on app's database; a write with a writeID runs at most once
// per id.
func (d storeDB) do(ctx context.Context, app, writeID string, r *frame.DBRequest) (*frame.DBResult, error) {
	switch r.Op {
	case frame.OpExec:
		var res *store.ExecResult
		var err error
		if writeID != "" {
			res, err = d.s.ExecOnce(ctx, app, writeID, deref(r.SQL), r.Params)
		} else {
			res, err = d.s.Exec(ctx, app, deref(r.SQL), r.Params)
		}
		if err != nil {
			return nil, err
		}
		changes, last := int(res.Changes), int(res.LastInsertRowid)
		cols, rows := res.Columns, res.Rows
		if cols == nil {
			cols = []string{} // a statement without result columns still has the key
		}
		if rows == nil {
			rows = [][]any{}
		}
		return &frame.DBResult{Columns: cols, Rows: rows, Changes: &changes, LastInsertRowid: &last}, nil
	case frame.OpScript:
		if len(r.Params) > 0 {
			return nil, &store.Error{Code: frame.CodeDBSQLError, Message: "a script takes no parameters: run a statement with values through exec"}
		}
		res, err := d.s.Script(ctx, app, deref(r.SQL))
		if err != nil {
			return nil, err
		}
		changes, last := int(res.Changes), int(res.LastInsertRowid)
		return &frame.DBResult{Columns: []string{}, Rows: [][]any{}, Changes: &changes, LastInsertRowid: &last}, nil
	case frame.OpKvGet:
		v, found, err := d.s.KVGet(ctx, app, deref(r.Key))
		if err != nil {
			return nil, err
		}
		return &newKVAnswer(r.RequestID, v, found).res, nil
	case frame.OpKvSet:
		v := r.Value
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		var err error
		if writeID != "" {
			err = d.s.KVSetOnce(ctx, app, writeID, deref(r.Key), v)
		} else {
			err = d.s.KVSet(ctx, app, deref(r.Key), v)
		}
		if err != nil {
			return nil, err
		}
		return &frame.DBResult{}, nil
	case frame.OpExport:
		data, err := d.s.Export(ctx, app)
		if err != nil {
			return nil, err
		}
		enc, n, format := base64.StdEncoding.EncodeToString(data), len(data), frame.FormatSqlite3
		return &frame.DBResult{Data: &enc, Bytes: &n, Format: &format}, nil
	case frame.OpImport:
		data, err := base64.StdEncoding.DecodeString(deref(r.Data))
		if err != nil {
			return nil, &store.Error{Code: frame.CodeDBImportInvalid, Message: "data is not valid base64"}
		}
		n, err := d.s.Import(ctx, app, data)
		if err != nil {
			return nil, err
		}
		return &frame.DBResult{Bytes: &n}, nil
	}
	return nil, &store.Error{Code: frame.CodeMalformed, Message: "unknown op " + r.Op}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Netgate answers net-request with a netgate.Gate. apps, when non-nil,
// describes an installed app for the gate (display name, imported); the Key
// is always the host's own key of the session's app. Host-ready's auth
// capability follows the gate's (a connection is configured). The gate keeps
// grants and the rate ceiling per (Call.User, key).
func Netgate(g *netgate.Gate, apps func(key string) netgate.App) NetHandler {
	return gateNet{g, apps}
}

type gateNet struct {
	g    *netgate.Gate
	apps func(string) netgate.App
}

func (n gateNet) NetRequest(ctx context.Context, c Call, r *frame.NetRequest) *frame.NetResponse {
	app := netgate.App{Key: c.App, Name: c.App}
	if n.apps != nil {
		app = n.apps(c.App)
		app.Key = c.App
	}
	app.User = c.User
	return n.g.Fetch(ctx, app, r)
}

func (n gateNet) Auth() bool { return n.g.Capabilities().Auth }
