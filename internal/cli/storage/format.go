// Package storage is `muster storage`, the offline counterpart of kafka-storage.sh: `format
// --add-scram` writes SCRAM credentials for the first users (an admin listed in super.users)
// straight into a data dir, before or between runs of `muster serve`, so a cluster with SCRAM and
// ACLs can be bootstrapped without an unauthenticated listener.
package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/spf13/cobra"

	"github.com/muster-io/muster/internal/cli/clikit"
	"github.com/muster-io/muster/internal/security"
	"github.com/muster-io/muster/internal/store"
)

// NewCommand returns the `storage` command with its `format` subcommand.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "storage", Short: "Prepare a data dir offline (kafka-storage.sh)", SilenceErrors: true, SilenceUsage: true}
	cmd.AddCommand(formatCommand())
	return cmd
}

func formatCommand() *cobra.Command {
	var dataDir string
	var scrams []string
	cmd := clikit.NewCommand("format", "Create a data dir and add SCRAM credentials to it",
		`Create the data dir if needed and store SCRAM credentials in it, as kafka-storage.sh format --add-scram does:

  muster storage format --data-dir ./muster-data --add-scram 'SCRAM-SHA-256=[name=admin,password=admin-secret]'

Each --add-scram is MECHANISM=[name=USER,password=PASSWORD[,iterations=N]] (iterations 4096..16384,
default 4096) or with salt=... and saltedpassword=... given in base64 instead of a password. Only the
salted keys are stored. The broker must not be running on the data dir.`)
	f := cmd.Flags()
	f.StringVar(&dataDir, "data-dir", "./muster-data", "data dir of the broker (created if missing)")
	f.StringArrayVar(&scrams, "add-scram", nil, "a SCRAM credential to add: SCRAM-SHA-256=[name=alice,password=alice-secret]")
	clikit.Wire(cmd, "", func(err error) string { return err.Error() }, func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return clikit.Usagef("unexpected arguments: %s", strings.Join(args, " "))
		}
		if len(scrams) == 0 {
			return clikit.Usagef("--add-scram is required (muster needs no other formatting)")
		}
		var creds []security.ScramCredential
		for _, s := range scrams {
			cr, err := ParseAddScram(s)
			if err != nil {
				return err
			}
			creds = append(creds, cr)
		}
		if err := Format(dataDir, creds); err != nil {
			return err
		}
		for _, cr := range creds {
			fmt.Fprintf(c.OutOrStdout(), "Added %s credential for user %s to %s\n", cr.Mechanism, cr.User, dataDir)
		}
		return nil
	})
	return cmd
}

// ParseAddScram parses one --add-scram value into a credential.
func ParseAddScram(s string) (security.ScramCredential, error) {
	mechName, val, ok := strings.Cut(s, "=")
	m, mok := security.ParseScramMechanism(strings.TrimSpace(mechName))
	val = strings.TrimSpace(val)
	if !ok || !mok || !strings.HasPrefix(val, "[") || !strings.HasSuffix(val, "]") {
		return security.ScramCredential{}, clikit.Usagef("--add-scram %q: want SCRAM-SHA-256=[name=USER,password=PASSWORD] (or SCRAM-SHA-512)", s)
	}
	kv := map[string]string{}
	for _, part := range strings.Split(val[1:len(val)-1], ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return security.ScramCredential{}, clikit.Usagef("--add-scram %q: %q is not key=value", s, part)
		}
		kv[strings.ToLower(strings.TrimSpace(k))] = strings.Trim(strings.TrimSpace(v), `"`)
	}
	name := kv["name"]
	if name == "" {
		return security.ScramCredential{}, clikit.Usagef("--add-scram %q: name= is required", s)
	}
	iters := int64(4096)
	if it := kv["iterations"]; it != "" {
		n, err := strconv.ParseInt(it, 10, 32)
		if err != nil || n < security.ScramMinIterations || n > security.ScramMaxIterations {
			return security.ScramCredential{}, clikit.Usagef("--add-scram %q: iterations must be between %d and %d", s, security.ScramMinIterations, security.ScramMaxIterations)
		}
		iters = n
	}
	if kv["password"] == "" {
		return security.ScramCredential{}, clikit.Usagef("--add-scram %q: password= is required", s)
	}
	return security.NewScramCredential(name, m, kv["password"], int32(iters))
}

// Format opens (or creates) the data dir's store and writes creds durably.
func Format(dataDir string, creds []security.ScramCredential) error {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	db, err := pebble.Open(filepath.Join(dataDir, "pebble"), &pebble.Options{})
	if err != nil {
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) || strings.Contains(err.Error(), "lock held") {
			return fmt.Errorf("data dir %s is in use (is muster serve running on it?); stop the broker first", dataDir)
		}
		return fmt.Errorf("opening the store in %s: %w", dataDir, err)
	}
	defer db.Close()
	sc, err := security.NewScramCredentials(store.NewSecurityPebble(db))
	if err != nil {
		return err
	}
	return sc.Upsert(creds...)
}
