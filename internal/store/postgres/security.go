package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/muster-io/muster/internal/security"
)

// SecurityChannel is the LISTEN/NOTIFY channel on which a node announces a change of ACLs or
// SCRAM credentials; every node reloads them (and at least every SecurityReread).
const SecurityChannel = "muster_security"

// SecurityReread is how often nodes re-read the shared ACLs and credentials even without a
// notification (databases without LISTEN/NOTIFY, a notification lost while reconnecting).
const SecurityReread = 30 * time.Second

// Security is security.Store in the shared database: ACLs and SCRAM credentials every node
// of the cluster reads. Each change is one transaction.
type Security struct{ db *DB }

// Security returns the shared security store.
func (db *DB) Security() *Security { return &Security{db: db} }

type aclRow struct {
	ResourceType int8   `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  int8   `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    int8   `json:"operation"`
	Permission   int8   `json:"permission"`
}

type scramRow struct {
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
	Iterations int32  `json:"iterations"`
}

func (s *Security) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// LoadACLs implements security.Store.
func (s *Security) LoadACLs() ([]security.StoredBinding, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	var out []security.StoredBinding
	err := s.db.timed("acls", func() error {
		rows, err := s.db.pool.Query(ctx, `SELECT id, binding FROM muster_acls ORDER BY id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id []byte
			var raw string
			if err := rows.Scan(&id, &raw); err != nil {
				return err
			}
			var a aclRow
			if len(id) != 16 || json.Unmarshal([]byte(raw), &a) != nil {
				return fmt.Errorf("cluster store: corrupt ACL %x", id)
			}
			out = append(out, security.StoredBinding{ID: [16]byte(id), Binding: security.Binding{
				ResourceType: security.ResourceType(a.ResourceType), ResourceName: a.ResourceName,
				PatternType: security.PatternType(a.PatternType), Principal: a.Principal, Host: a.Host,
				Operation: security.Operation(a.Operation), Permission: security.Permission(a.Permission),
			}})
		}
		return rows.Err()
	})
	return out, err
}

// ChangeACLs implements security.Store.
func (s *Security) ChangeACLs(add []security.StoredBinding, remove [][16]byte) error {
	ctx, cancel := s.ctx()
	defer cancel()
	err := s.db.tx(ctx, "acls_change", func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, id := range remove {
			b.Queue(`DELETE FROM muster_acls WHERE id = $1`, id[:])
		}
		for _, sb := range add {
			x := sb.Binding
			v, _ := json.Marshal(aclRow{int8(x.ResourceType), x.ResourceName, int8(x.PatternType), x.Principal, x.Host, int8(x.Operation), int8(x.Permission)})
			b.Queue(`INSERT INTO muster_acls (id, binding) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET binding = excluded.binding`, sb.ID[:], string(v))
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("cluster store: writing ACLs: %w", err)
	}
	s.db.notifyOn(ctx, SecurityChannel, "acls")
	return nil
}

// LoadScramCredentials implements security.Store.
func (s *Security) LoadScramCredentials() ([]security.ScramCredential, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	var out []security.ScramCredential
	err := s.db.timed("scram", func() error {
		rows, err := s.db.pool.Query(ctx, `SELECT mechanism, username, credential FROM muster_scram ORDER BY username, mechanism`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var mech int16
			var user, raw string
			if err := rows.Scan(&mech, &user, &raw); err != nil {
				return err
			}
			var c scramRow
			if err := json.Unmarshal([]byte(raw), &c); err != nil {
				return fmt.Errorf("cluster store: corrupt SCRAM credential %q: %w", user, err)
			}
			out = append(out, security.ScramCredential{User: user, Mechanism: security.ScramMechanism(mech),
				Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations})
		}
		return rows.Err()
	})
	return out, err
}

// ChangeScramCredentials implements security.Store.
func (s *Security) ChangeScramCredentials(upsert []security.ScramCredential, remove []security.ScramKey) error {
	ctx, cancel := s.ctx()
	defer cancel()
	err := s.db.tx(ctx, "scram_change", func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, k := range remove {
			b.Queue(`DELETE FROM muster_scram WHERE mechanism = $1 AND username = $2`, int16(k.Mechanism), k.User)
		}
		for _, c := range upsert {
			v, _ := json.Marshal(scramRow{c.Salt, c.StoredKey, c.ServerKey, c.Iterations})
			b.Queue(`INSERT INTO muster_scram (mechanism, username, credential) VALUES ($1, $2, $3)
ON CONFLICT (mechanism, username) DO UPDATE SET credential = excluded.credential`, int16(c.Mechanism), c.User, string(v))
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("cluster store: writing SCRAM credentials: %w", err)
	}
	s.db.notifyOn(ctx, SecurityChannel, "scram")
	return nil
}

var _ security.Store = (*Security)(nil)
