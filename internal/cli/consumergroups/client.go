package consumergroups

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// admin wraps the franz-go client and admin client with the --timeout.
type admin struct {
	kcl     *kgo.Client
	adm     *kadm.Client
	timeout time.Duration
}

func newAdmin(o *options, stderr io.Writer) (*admin, error) {
	var seeds []string
	for _, s := range strings.Split(o.bootstrap, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	timeout := time.Duration(o.timeoutMs) * time.Millisecond
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DialTimeout(timeout), kgo.ClientID("muster-consumer-groups")}
	extra, err := loadCommandConfig(o.commandConfig, o.verbose, stderr)
	if err != nil {
		return nil, err
	}
	opts = append(opts, extra...)
	kcl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	adm := kadm.NewClient(kcl)
	adm.SetTimeoutMillis(int32(min(o.timeoutMs, 1<<31-1)))
	return &admin{kcl: kcl, adm: adm, timeout: timeout}, nil
}

// ctx returns a context bounded by --timeout for one broker operation.
func (a *admin) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, a.timeout)
}

func (a *admin) close() { a.kcl.Close() }
