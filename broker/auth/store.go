package auth

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rocketgo/rocketgo/codec/body"
)

// metaFile is the bbolt file under the auth directory.
const metaFile = "auth.db"

var (
	bucketUsers = []byte("users") // username → UserInfo JSON
	bucketACLs  = []byte("acls")  // subject key ("User:name") → AclInfo JSON
)

// metaStore persists users and ACLs. Every write is one bbolt
// transaction, fsynced at commit: what a write returned nil for survives
// a crash.
type metaStore struct {
	db *bolt.DB
}

func openMetaStore(dir string) (*metaStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("auth: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, metaFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("auth: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketUsers, bucketACLs} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("auth: init buckets in %s: %w", path, err)
	}
	return &metaStore{db: db}, nil
}

func (m *metaStore) close() error {
	if err := m.db.Close(); err != nil {
		return fmt.Errorf("auth: close metadata: %w", err)
	}
	return nil
}

// load reads everything. A record that does not decode fails the load:
// dropping it silently would change who may do what.
func (m *metaStore) load() (map[string]*User, map[string]*ACL, error) {
	users := map[string]*User{}
	acls := map[string]*ACL{}
	err := m.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketUsers).ForEach(func(k, v []byte) error {
			info, err := body.DecodeUserInfo(v)
			if err != nil {
				return fmt.Errorf("user %q: %w", k, err)
			}
			u := UserFromInfo(&info)
			u.Username = string(k)
			users[u.Username] = &u
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketACLs).ForEach(func(k, v []byte) error {
			info, err := body.DecodeAclInfo(v)
			if err != nil {
				return fmt.Errorf("acl %q: %w", k, err)
			}
			a, ok := ACLFromInfo(&info, string(k))
			if !ok {
				return fmt.Errorf("acl %q: bad subject", k)
			}
			if err := validateACL(&a); err != nil {
				return fmt.Errorf("acl %q: %w", k, err)
			}
			a.compile()
			acls[a.Username] = &a
			return nil
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("auth: load metadata: %w", err)
	}
	return users, acls, nil
}

func (m *metaStore) putUser(u *User) error {
	info := u.Info()
	v := body.AppendUserInfo(nil, &info)
	err := m.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketUsers).Put([]byte(u.Username), v)
	})
	if err != nil {
		return fmt.Errorf("auth: store user %s: %w", u.Username, err)
	}
	return nil
}

// deleteUser removes a user and its ACL in one transaction (Java deletes
// both).
func (m *metaStore) deleteUser(username string) error {
	err := m.db.Update(func(tx *bolt.Tx) error {
		return errors.Join(
			tx.Bucket(bucketUsers).Delete([]byte(username)),
			tx.Bucket(bucketACLs).Delete([]byte(subjectKey(username))))
	})
	if err != nil {
		return fmt.Errorf("auth: delete user %s: %w", username, err)
	}
	return nil
}

func (m *metaStore) putACL(a *ACL) error {
	info := a.Info()
	v := body.AppendAclInfo(nil, &info)
	err := m.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketACLs).Put([]byte(a.Subject()), v)
	})
	if err != nil {
		return fmt.Errorf("auth: store acl of %s: %w", a.Subject(), err)
	}
	return nil
}

func (m *metaStore) deleteACL(username string) error {
	err := m.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketACLs).Delete([]byte(subjectKey(username)))
	})
	if err != nil {
		return fmt.Errorf("auth: delete acl of %s: %w", username, err)
	}
	return nil
}
