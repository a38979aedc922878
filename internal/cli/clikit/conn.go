package clikit

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ConnFlags are the connection flags every admin command takes.
type ConnFlags struct {
	Bootstrap     string // --bootstrap-server, comma-separated host:port list
	CommandConfig string // --command-config, a properties file path
	TimeoutMs     int64  // --timeout, milliseconds per broker operation
	Verbose       bool   // --verbose
}

// AddFlags registers --bootstrap-server, --command-config, --timeout (with
// the given default, in milliseconds) and --verbose on f, in that order.
func (c *ConnFlags) AddFlags(f *pflag.FlagSet, defaultTimeoutMs int64) {
	f.StringVar(&c.Bootstrap, "bootstrap-server", "", "REQUIRED: The server(s) to connect to (host:port[,host:port...]).")
	f.StringVar(&c.CommandConfig, "command-config", "", "Property file containing client configs (client.id, security.protocol, sasl.mechanism, sasl.jaas.config); other keys are ignored.")
	f.Int64Var(&c.TimeoutMs, "timeout", defaultTimeoutMs, "Timeout in milliseconds for each broker operation.")
	f.BoolVar(&c.Verbose, "verbose", false, "Provide additional information, if any, when describing the group.")
}

// Admin wraps the franz-go client and admin client with the --timeout.
type Admin struct {
	Kcl     *kgo.Client
	Adm     *kadm.Client
	timeout time.Duration
}

// NewAdmin builds the client for c: seed brokers from --bootstrap-server,
// dial timeout and admin request timeout from --timeout, client id clientID
// unless --command-config sets client.id. A bad --command-config is a
// *UsageError.
func NewAdmin(c ConnFlags, clientID string, stderr io.Writer) (*Admin, error) {
	var seeds []string
	for _, s := range strings.Split(c.Bootstrap, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	timeout := time.Duration(c.TimeoutMs) * time.Millisecond
	extra, err := CommandConfigOpts(c.CommandConfig, c.Verbose, stderr)
	if err != nil {
		return nil, err
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DialTimeout(timeout), kgo.ClientID(clientID)}, extra...)
	kcl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	adm := kadm.NewClient(kcl)
	adm.SetTimeoutMillis(int32(min(c.TimeoutMs, 1<<31-1)))
	return &Admin{Kcl: kcl, Adm: adm, timeout: timeout}, nil
}

// Ctx returns a context bounded by --timeout for one broker operation.
func (a *Admin) Ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, a.timeout)
}

// Close closes the underlying client.
func (a *Admin) Close() { a.Kcl.Close() }

// Validate checks what every admin command requires of the connection flags: a
// --bootstrap-server and a positive --timeout (*UsageError otherwise).
func (c ConnFlags) Validate() error {
	if strings.TrimSpace(c.Bootstrap) == "" {
		return Usagef("Missing required argument \"[bootstrap-server]\"")
	}
	if c.TimeoutMs <= 0 {
		return Usagef("Option [timeout] must be positive, got %d", c.TimeoutMs)
	}
	return nil
}
