package store

import (
	"encoding/json"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/muster-io/muster/internal/security"
)

// Security keys in the shared Pebble DB:
//
//	's' 'a' id(16 bytes)                  → JSON ACL binding
//	's' 'u' mechanism(1 byte) user        → JSON SCRAM credential (salt and keys, never a password)
const (
	prefixSecurity = 's'
	kindACL        = 'a'
	kindScram      = 'u'
)

// SecurityPebble is security.Store over the broker's Pebble DB. Every change is one synced batch.
type SecurityPebble struct{ db *pebble.DB }

// NewSecurityPebble returns the security store inside db.
func NewSecurityPebble(db *pebble.DB) *SecurityPebble { return &SecurityPebble{db: db} }

type storedACL struct {
	ResourceType int8   `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  int8   `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    int8   `json:"operation"`
	Permission   int8   `json:"permission"`
}

type storedScram struct {
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
	Iterations int32  `json:"iterations"`
}

func aclKey(id [16]byte) []byte { return append([]byte{prefixSecurity, kindACL}, id[:]...) }

func scramKey(k security.ScramKey) []byte {
	return append([]byte{prefixSecurity, kindScram, byte(k.Mechanism)}, k.User...)
}

func (s *SecurityPebble) scan(kind byte, fn func(k, v []byte) error) error {
	lo := []byte{prefixSecurity, kind}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: []byte{prefixSecurity, kind + 1}})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// LoadACLs implements security.Store.
func (s *SecurityPebble) LoadACLs() ([]security.StoredBinding, error) {
	var out []security.StoredBinding
	err := s.scan(kindACL, func(k, v []byte) error {
		if len(k) != 18 {
			return fmt.Errorf("store: corrupt ACL key %x", k)
		}
		var a storedACL
		if err := json.Unmarshal(v, &a); err != nil {
			return fmt.Errorf("store: corrupt ACL %x: %w", k, err)
		}
		out = append(out, security.StoredBinding{ID: [16]byte(k[2:]), Binding: security.Binding{
			ResourceType: security.ResourceType(a.ResourceType), ResourceName: a.ResourceName,
			PatternType: security.PatternType(a.PatternType), Principal: a.Principal, Host: a.Host,
			Operation: security.Operation(a.Operation), Permission: security.Permission(a.Permission),
		}})
		return nil
	})
	return out, err
}

// ChangeACLs implements security.Store.
func (s *SecurityPebble) ChangeACLs(add []security.StoredBinding, remove [][16]byte) error {
	b := s.db.NewBatch()
	defer b.Close()
	for _, id := range remove {
		if err := b.Delete(aclKey(id), nil); err != nil {
			return err
		}
	}
	for _, sb := range add {
		x := sb.Binding
		v, _ := json.Marshal(storedACL{int8(x.ResourceType), x.ResourceName, int8(x.PatternType), x.Principal, x.Host, int8(x.Operation), int8(x.Permission)})
		if err := b.Set(aclKey(sb.ID), v, nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("store: writing ACLs: %w", err)
	}
	return nil
}

// LoadScramCredentials implements security.Store.
func (s *SecurityPebble) LoadScramCredentials() ([]security.ScramCredential, error) {
	var out []security.ScramCredential
	err := s.scan(kindScram, func(k, v []byte) error {
		if len(k) < 4 {
			return fmt.Errorf("store: corrupt SCRAM key %x", k)
		}
		var c storedScram
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("store: corrupt SCRAM credential %q: %w", k[3:], err)
		}
		out = append(out, security.ScramCredential{User: string(k[3:]), Mechanism: security.ScramMechanism(k[2]),
			Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations})
		return nil
	})
	return out, err
}

// ChangeScramCredentials implements security.Store.
func (s *SecurityPebble) ChangeScramCredentials(upsert []security.ScramCredential, remove []security.ScramKey) error {
	b := s.db.NewBatch()
	defer b.Close()
	for _, k := range remove {
		if err := b.Delete(scramKey(k), nil); err != nil {
			return err
		}
	}
	for _, c := range upsert {
		v, _ := json.Marshal(storedScram{c.Salt, c.StoredKey, c.ServerKey, c.Iterations})
		if err := b.Set(scramKey(security.ScramKey{User: c.User, Mechanism: c.Mechanism}), v, nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("store: writing SCRAM credentials: %w", err)
	}
	return nil
}
