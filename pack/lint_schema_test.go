package pack

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// Issue 28, careless habits: snug.db.exec("CREATE TABLE …") with no IF
// NOT EXISTS, run on every start, fails the second time the app opens
// (the host keeps its database). It is named on its line with the fix;
// the guide's migration idiom (steps in a list, a step under a version
// check) and IF NOT EXISTS are not.
func TestCreateWithoutIfNotExistsIsDiagnosed(t *testing.T) {
	page := "<!doctype html><title>T</title><script type=\"module\">\n" +
		"await snug.db.exec(\"CREATE TABLE todos (id INTEGER PRIMARY KEY)\");\n" + // 2: flagged
		"await snug.db.exec(\"create table if not exists meta (version int)\");\n" +
		"async function init() {\n" +
		"  await snug.db.script('create table a (x); create index a_x on a(x)');\n" + // 5: flagged twice
		"}\n" +
		"const steps = [\"create table tasks (id integer primary key)\"];\n" +
		"const [{ version }] = await snug.db.query(\"select version from meta\");\n" +
		"for (let v = version; v < steps.length; v++) {\n" +
		"  await snug.db.script(`${steps[v]}; update meta set version = ${v + 1}`);\n" +
		"}\n" +
		"if (version < 2) {\n" +
		"  await snug.db.exec(\"create table b (y)\");\n" +
		"}\n" +
		"if (version < 3) await snug.db.exec(`create table c (z)`);\n" +
		"version < 4 && (await snug.db.exec(\"create table d (z)\"));\n" +
		"try {\n" +
		"  await snug.db.exec(`create virtual table notes using fts5(body)`);\n" + // 18: flagged
		"} catch (e) {\n" +
		"  await snug.db.exec(\"create table e (z)\");\n" +
		"}\n" +
		"// await snug.db.exec(\"create table f (z)\");\n" +
		"const s = \"snug.db.exec('create table g (z)')\";\n" +
		"const v = version\nif (v < 5) await snug.db.exec(\"create table h (z)\")\n" +
		"</script>"
	res, err := Build(context.Background(), Options{Path: "index.html", HTML: []byte(page), Runtime: []byte(testRuntime), Strict: true})
	if err == nil {
		t.Fatal("the strict build passed")
	}
	var got []string
	for _, d := range res.Diagnostics {
		if !strings.Contains(d.Message, "IF NOT EXISTS") {
			continue
		}
		got = append(got, d.Message[:strings.Index(d.Message, " without")])
		if d.Line == 2 && (d.Column != 21 || !strings.Contains(d.Fix, "create table if not exists") || !strings.Contains(d.Why, "DB_SQL_ERROR")) {
			t.Errorf("line 2 diagnosed as %+v", d)
		}
	}
	want := []string{"CREATE TABLE todos", "CREATE TABLE a", "CREATE INDEX a_x", "CREATE TABLE notes"}
	if !slices.Equal(got, want) {
		t.Fatalf("diagnosed %q, want %q", got, want)
	}
}
