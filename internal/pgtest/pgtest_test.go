package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestServer starts the server, creates two databases and runs a query in one.
func TestServer(t *testing.T) {
	s := Shared(t)
	u1, u2 := s.Database(t), s.Database(t)
	if u1 == u2 {
		t.Fatal("databases not distinct")
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var fsync string
	if err := c.QueryRow(ctx, "SHOW fsync").Scan(&fsync); err != nil || fsync != "on" {
		t.Fatalf("fsync = %q, %v", fsync, err)
	}
}
