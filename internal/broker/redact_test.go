package broker

import "testing"

// TestRedactURL: no form of a PostgreSQL connection string shows its password in a message.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://muster:pw123@db:5432/muster":                          "postgres://muster:***@db:5432/muster",
		"postgres://muster@db:5432/muster":                                "postgres://muster@db:5432/muster",
		"postgres://db/muster?user=muster&password=pw123&sslmode=disable": "postgres://db/muster?user=muster&password=***&sslmode=disable",
		"host=127.0.0.1 port=1 user=muster password=pw123 dbname=muster":  "host=127.0.0.1 port=1 user=muster password=*** dbname=muster",
		"host=db password = 'p w\\'x' dbname=muster":                      "host=db password = *** dbname=muster",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
