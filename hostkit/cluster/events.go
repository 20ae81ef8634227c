package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/snuggen/snuggen/hostkit/netgate"
)

// connectionChannel is the PostgreSQL notification channel that carries
// connection events (a grant or revocation for a connection's origin)
// between replicas, so a user's instances of the app hear of it on every
// replica, not only on the one where the user answered.
const connectionChannel = "snug_connection_events"

// connectionNote is one notification: the event and the replica it was
// made on (which delivered it itself).
type connectionNote struct {
	From       string `json:"from"`
	User       string `json:"user"`
	App        string `json:"app"`
	Connection string `json:"connection"`
	State      string `json:"state"`
}

// Connections carries connection events between replicas through
// PostgreSQL's LISTEN/NOTIFY: deliver runs on this replica for every event
// another replica publishes, until Close; the returned publish sends one
// made here to the others. This replica listens before Connections
// returns. Events are hints (the app reads what it may reach itself): one
// sent while this replica reconnects to PostgreSQL is missed.
func (c *Cluster) Connections(deliver func(netgate.ConnectionEvent)) func(netgate.ConnectionEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return func(netgate.ConnectionEvent) {}
	}
	conn, err := c.listenConn(c.ctx)
	if err != nil {
		c.logf("connection events from other replicas: %v (retrying)", err)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.receiveConnections(conn, deliver)
	}()
	return c.publishConnection
}

// listenConn opens a connection of its own (a pooled one would go back to
// the pool still listening) and listens on the channel.
func (c *Cluster) listenConn(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, c.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, errors.New(redact(err))
	}
	if _, err := conn.Exec(ctx, "LISTEN "+connectionChannel); err != nil {
		conn.Close(context.Background())
		return nil, errors.New(redact(err))
	}
	return conn, nil
}

// receiveConnections delivers the other replicas' events until the
// cluster closes, reconnecting (after a pause that grows to 5 s) when the
// connection fails.
func (c *Cluster) receiveConnections(conn *pgx.Conn, deliver func(netgate.ConnectionEvent)) {
	pause := 100 * time.Millisecond
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	for c.ctx.Err() == nil {
		if conn == nil {
			t := time.NewTimer(pause)
			select {
			case <-c.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			pause = min(2*pause, 5*time.Second)
			var err error
			if conn, err = c.listenConn(c.ctx); err != nil {
				c.logf("connection events from other replicas: %v (retrying)", err)
				continue
			}
		}
		n, err := conn.WaitForNotification(c.ctx)
		if err != nil {
			conn.Close(context.Background())
			conn = nil
			if c.ctx.Err() == nil {
				c.logf("connection events from other replicas: %v (reconnecting)", redact(err))
			}
			continue
		}
		pause = 100 * time.Millisecond
		var note connectionNote
		if json.Unmarshal([]byte(n.Payload), &note) != nil || note.From == c.id {
			continue
		}
		deliver(netgate.ConnectionEvent{User: note.User, App: note.App, Connection: note.Connection, State: note.State})
	}
}

// publishConnection sends an event made on this replica to the others.
func (c *Cluster) publishConnection(e netgate.ConnectionEvent) {
	b, err := json.Marshal(connectionNote{From: c.id, User: e.User, App: e.App, Connection: e.Connection, State: e.State})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	if _, err := c.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, connectionChannel, string(b)); err != nil {
		c.logf("send a connection event to the other replicas: %v", redact(err))
	}
}
