package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/snuggen/snuggen/hostkit/store"
)

func Example() {
	dir, _ := os.MkdirTemp("", "snug-store")
	defer os.RemoveAll(dir)
	s, err := store.Open(dir, store.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ctx := context.Background()

	// "todo" is the host's key of the installed app, not its announced appId.
	s.Exec(ctx, "todo", "CREATE TABLE items(id INTEGER PRIMARY KEY, title TEXT)", nil)
	r, _ := s.Exec(ctx, "todo", "INSERT INTO items(title) VALUES (?)", []any{"milk"})
	fmt.Println("changes", r.Changes, "rowid", r.LastInsertRowid)
	r, _ = s.Exec(ctx, "todo", "SELECT id, title FROM items", nil)
	rows, _ := json.Marshal(r.Rows)
	fmt.Println(r.Columns, string(rows))

	s.KVSet(ctx, "todo", "filter", json.RawMessage(`{"done": false}`))
	v, found, _ := s.KVGet(ctx, "todo", "filter")
	fmt.Println(found, string(v))

	_, err = s.Exec(ctx, "todo", "ATTACH 'other.db' AS o", nil)
	var se *store.Error
	if errors.As(err, &se) {
		fmt.Println(se.Code)
	}
	// Output:
	// changes 1 rowid 1
	// [id title] [[1,"milk"]]
	// true {"done":false}
	// DB_SQL_ERROR
}
