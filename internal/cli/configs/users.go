// This file is the users entity of `muster configs` (kafka-configs.sh):
// SCRAM credentials, altered through AlterUserScramCredentials and described through
// DescribeUserScramCredentials, as kafka-configs.sh --entity-type users does:
//
//	--alter --entity-type users --entity-name alice --add-config 'SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]'
//	--alter --entity-type users --entity-name alice --delete-config 'SCRAM-SHA-512'
//	--describe --entity-type users [--entity-name alice]
//
// The client derives the salted password (PBKDF2 with a random salt); the password never
// reaches the broker.

package configs

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/muster-io/muster/internal/cli/clikit"
	"github.com/muster-io/muster/internal/security"
)

// ScramConfig is one SCRAM entry of --add-config: MECHANISM=[iterations=N,password=P].
type ScramConfig struct {
	Mechanism  security.ScramMechanism
	Iterations int32
	Password   string
}

// defaultScramIterations is kafka-configs.sh's default when iterations= is not given.
const defaultScramIterations = 4096

// ParseScramConfigs parses an --add-config value for users. Entries are separated by commas
// outside brackets; keys other than SCRAM mechanisms (quota configs) are refused with a message.
func ParseScramConfigs(s string) ([]ScramConfig, error) {
	var out []ScramConfig
	for _, entry := range splitScramEntries(s) {
		name, val, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, clikit.Usagef("Invalid --add-config entry '%s': want SCRAM-SHA-256=[password=...]", entry)
		}
		m, ok := security.ParseScramMechanism(strings.TrimSpace(name))
		if !ok {
			return nil, clikit.Usagef("Unsupported user config '%s': muster supports SCRAM-SHA-256 and SCRAM-SHA-512 credentials (quotas are not supported)", name)
		}
		val = strings.TrimSpace(val)
		if !strings.HasPrefix(val, "[") || !strings.HasSuffix(val, "]") {
			return nil, clikit.Usagef("Invalid value for %s: want [iterations=N,password=P] or [password=P]", name)
		}
		c, err := scramEntry(m, name, val[1:len(val)-1])
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// scramEntry parses the inside of one SCRAM value: iterations=N,password=P.
func scramEntry(m security.ScramMechanism, name, val string) (ScramConfig, error) {
	c := ScramConfig{Mechanism: m, Iterations: defaultScramIterations}
	{
		for _, kv := range strings.Split(val, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return c, clikit.Usagef("Invalid value for %s: '%s' is not key=value", name, kv)
			}
			switch strings.TrimSpace(k) {
			case "password":
				c.Password = v
			case "iterations":
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					return c, clikit.Usagef("Invalid iterations for %s: %s", name, v)
				}
				c.Iterations = int32(n)
			default:
				return c, clikit.Usagef("Invalid key '%s' for %s (iterations, password)", k, name)
			}
		}
	}
	if c.Password == "" {
		return c, clikit.Usagef("%s needs a password: %s=[password=...]", name, name)
	}
	return c, nil
}

// splitScramEntries splits on commas that are not inside brackets.
func splitScramEntries(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				if e := strings.TrimSpace(s[start:i]); e != "" {
					out = append(out, e)
				}
				start = i + 1
			}
		}
	}
	if e := strings.TrimSpace(s[start:]); e != "" {
		out = append(out, e)
	}
	return out
}

// AlterUsers applies --add-config and --delete-config to the SCRAM credentials of users (one
// AlterUserScramCredentials request) and prints kafka-configs.sh's confirmation per user.
func AlterUsers(ctx context.Context, adm *clikit.Admin, out io.Writer, users []string, addConfig string, deleteConfig []string) error {
	adds, err := ParseScramConfigs(addConfig)
	if err != nil {
		return err
	}
	return alterScram(ctx, adm, out, users, adds, deleteConfig)
}

// alterScram sends one AlterUserScramCredentials for users.
func alterScram(ctx context.Context, adm *clikit.Admin, out io.Writer, users []string, adds []ScramConfig, deleteConfig []string) error {
	if len(users) == 0 {
		return clikit.Usagef("--entity-name must be specified with --alter of users")
	}
	var dels []security.ScramMechanism
	for _, d := range deleteConfig {
		for _, n := range strings.Split(d, ",") {
			if n = strings.TrimSpace(n); n == "" {
				continue
			}
			m, ok := security.ParseScramMechanism(n)
			if !ok {
				return clikit.Usagef("Unsupported user config '%s' in --delete-config (SCRAM-SHA-256, SCRAM-SHA-512)", n)
			}
			dels = append(dels, m)
		}
	}
	if len(adds)+len(dels) == 0 {
		return clikit.Usagef("--alter of users needs --add-config or --delete-config")
	}
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	for _, u := range users {
		for _, m := range dels {
			d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
			d.Name, d.Mechanism = u, int8(m)
			req.Deletions = append(req.Deletions, d)
		}
		for _, c := range adds {
			salt := make([]byte, 24)
			rand.Read(salt)
			salted, err := security.SaltPassword(c.Mechanism, c.Password, salt, c.Iterations)
			if err != nil {
				return err
			}
			up := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
			up.Name, up.Mechanism, up.Iterations, up.Salt, up.SaltedPassword = u, int8(c.Mechanism), c.Iterations, salt, salted
			req.Upsertions = append(req.Upsertions, up)
		}
	}
	cctx, cancel := adm.Ctx(ctx)
	defer cancel()
	resp, err := req.RequestWith(cctx, adm.Kcl)
	if err != nil {
		return err
	}
	var failed []string
	for _, r := range resp.Results {
		if e := kerr.ErrorForCode(r.ErrorCode); e != nil {
			msg := e.Error()
			if r.ErrorMessage != nil && *r.ErrorMessage != "" {
				msg += ": " + *r.ErrorMessage
			}
			failed = append(failed, fmt.Sprintf("user %s: %s", r.User, msg))
			continue
		}
		fmt.Fprintf(out, "Completed updating config for user %s.\n", r.User)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return nil
}

// DescribeUsers prints the SCRAM credentials of users (every user with one when users is empty)
// as kafka-configs.sh does: mechanisms and iterations, never salts or keys.
func DescribeUsers(ctx context.Context, adm *clikit.Admin, out io.Writer, users []string) error {
	req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, u := range users {
		ru := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		ru.Name = u
		req.Users = append(req.Users, ru)
	}
	cctx, cancel := adm.Ctx(ctx)
	defer cancel()
	resp, err := req.RequestWith(cctx, adm.Kcl)
	if err != nil {
		return err
	}
	if e := kerr.ErrorForCode(resp.ErrorCode); e != nil {
		return e
	}
	for _, r := range resp.Results {
		if r.ErrorCode == kerr.ResourceNotFound.Code {
			continue // kafka-configs.sh prints nothing for a user without credentials
		}
		if e := kerr.ErrorForCode(r.ErrorCode); e != nil {
			return fmt.Errorf("user %s: %v", r.User, e)
		}
		var parts []string
		for _, ci := range r.CredentialInfos {
			parts = append(parts, fmt.Sprintf("%s=iterations=%d", security.ScramMechanism(ci.Mechanism), ci.Iterations))
		}
		fmt.Fprintf(out, "SCRAM credential configs for user-principal '%s' are %s\n", r.User, strings.Join(parts, ", "))
	}
	return nil
}

// usersKind is --entity-type users: SCRAM credentials (quotas are not supported).
var usersKind = &entityKind{
	name: "users", singular: "user",
	checkName: func(n string) error {
		if n == "" {
			return usagef("A user name must not be empty")
		}
		return nil
	},
	validConfigs: func() []string { return []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} },
	describe: func(ctx context.Context, r *runner, tg *target) error {
		var names []string
		if !tg.all && !tg.def {
			names = []string{tg.name}
		}
		return DescribeUsers(ctx, r.cl, r.stdout, names)
	},
	alter: func(ctx context.Context, r *runner, tg *target, adds []configEntry, deletes []string) error {
		if tg.def || tg.name == "" {
			return usagef("--alter of users needs --entity-name (SCRAM credentials have no default entity)")
		}
		var scrams []ScramConfig
		for _, e := range adds {
			m, ok := security.ParseScramMechanism(e.name)
			if !ok {
				return usagef("Unsupported user config '%s': muster supports SCRAM-SHA-256 and SCRAM-SHA-512 credentials (quotas are not supported)", e.name)
			}
			c, err := scramEntry(m, e.name, e.value)
			if err != nil {
				return err
			}
			scrams = append(scrams, c)
		}
		return alterScram(ctx, r.cl, r.stdout, []string{tg.name}, scrams, deletes)
	},
}
