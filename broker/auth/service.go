package auth

import (
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/compat/remarks"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// Config is the broker's auth settings (Java's AuthConfig keys).
type Config struct {
	AuthenticationEnabled bool
	AuthorizationEnabled  bool
	// InitAuthenticationUser is Java's JSON {"username":…,"password":…},
	// created as a super user at start when absent.
	InitAuthenticationUser string
	// InnerClientAuthenticationCredentials is Java's JSON
	// {"accessKey":…,"secretKey":…}: the broker's own credentials towards
	// other brokers, created as a super user at start when absent.
	InnerClientAuthenticationCredentials string
	// AuthenticationWhitelist and AuthorizationWhitelist are
	// comma-separated request codes that skip the check.
	AuthenticationWhitelist string
	AuthorizationWhitelist  string
	// MigrateAuthFromV1Enabled turns the accounts of PlainACLFile (ACL 1.0
	// plain_acl.yml) into users and ACLs at start (Java's AuthMigrator).
	MigrateAuthFromV1Enabled bool
	PlainACLFile             string
}

// Service is the broker's auth: users, ACLs, checks. Safe for concurrent use.
//
// Reads (Authenticate, Authorize, Get*, List*) are lock-free: one atomic
// load of an immutable snapshot. Writers serialize on writeMu, persist
// first, then publish a changed copy of the snapshot (copy-on-write: admin
// changes are rare, checks are per request).
type Service struct {
	cfg       Config
	log       *slog.Logger
	store     *metaStore
	authnSkip map[int32]bool // whitelisted request codes, read-only after Open
	authzSkip map[int32]bool
	signers   sync.Pool // *signer

	writeMu sync.Mutex                // serializes writers
	state   atomic.Pointer[authState] // replaced, never changed, under writeMu
}

// authState is one immutable snapshot of the metadata; its maps and the
// values they point to are never written once published.
type authState struct {
	users map[string]*User // by username
	acls  map[string]*ACL  // by username (the only subject type)
	// decided remembers authorization outcomes of this snapshot (the one
	// thing in it that changes, behind its own lock).
	decided *decisions
}

// publish stores a copy of the current snapshot changed by edit. Callers
// hold writeMu.
func (s *Service) publish(edit func(users map[string]*User, acls map[string]*ACL)) {
	old := s.state.Load()
	next := &authState{users: maps.Clone(old.users), acls: maps.Clone(old.acls), decided: newDecisions()}
	edit(next.users, next.acls)
	keyUsers(next.users)
	s.state.Store(next)
}

// keyUsers computes the keyed HMAC states of the users that lack those of
// their password: new and changed ones, not yet published.
func keyUsers(users map[string]*User) {
	for _, u := range users {
		if u.mac == nil || u.mac.secret != u.Password {
			u.mac = newMacKey(u.Password)
		}
	}
}

// Open loads the metadata under dir (created if missing), creates the
// configured super users and migrates ACL 1.0 accounts when asked.
func Open(cfg Config, dir string, log *slog.Logger) (*Service, error) {
	if log == nil {
		log = slog.Default()
	}
	st, err := openMetaStore(dir)
	if err != nil {
		return nil, err
	}
	users, acls, err := st.load()
	if err != nil {
		st.close()
		return nil, err
	}
	s := &Service{
		cfg: cfg, log: log, store: st,
		authnSkip: parseWhitelist(cfg.AuthenticationWhitelist),
		authzSkip: parseWhitelist(cfg.AuthorizationWhitelist),
	}
	keyUsers(users)
	s.state.Store(&authState{users: users, acls: acls, decided: newDecisions()})
	s.signers.New = func() any { return newSigner() }
	if err := s.initUsers(); err != nil {
		st.close()
		return nil, err
	}
	if cfg.MigrateAuthFromV1Enabled {
		s.migrateV1(cfg.PlainACLFile)
	}
	return s, nil
}

// Close closes the metadata store.
func (s *Service) Close() error { return s.store.close() }

// Config is the configuration the service was opened with.
func (s *Service) Config() Config { return s.cfg }

// parseWhitelist reads "10, 11" into a set. Java compares the trimmed
// strings with the decimal code, so a token that is not a plain decimal
// never matches.
func parseWhitelist(list string) map[int32]bool {
	set := map[int32]bool{}
	for _, tok := range strings.Split(list, ",") {
		tok = strings.TrimSpace(tok)
		n, err := strconv.ParseInt(tok, 10, 32)
		if err != nil || strconv.FormatInt(n, 10) != tok {
			continue
		}
		set[int32(n)] = true
	}
	return set
}

// initUsers is Java's AuthenticationMetadataManagerImpl.initUser.
func (s *Service) initUsers() error {
	if !isBlank(s.cfg.InitAuthenticationUser) {
		var v struct {
			Username string `json:"username"`
			Password string `json:"password"`
		}
		if err := fastjson.Unmarshal([]byte(s.cfg.InitAuthenticationUser), &v); err != nil {
			return fmt.Errorf("auth: Init authentication user error: initAuthenticationUser: %w", err)
		}
		if err := s.createIfAbsent(User{Username: v.Username, Password: v.Password, Type: UserSuper}); err != nil {
			return fmt.Errorf("auth: Init authentication user error: %w", err)
		}
	}
	if !isBlank(s.cfg.InnerClientAuthenticationCredentials) {
		var v struct {
			AccessKey string `json:"accessKey"`
			SecretKey string `json:"secretKey"`
		}
		if err := fastjson.Unmarshal([]byte(s.cfg.InnerClientAuthenticationCredentials), &v); err != nil {
			return fmt.Errorf("auth: Init inner client authentication credentials error: %w", err)
		}
		if err := s.createIfAbsent(User{Username: v.AccessKey, Password: v.SecretKey, Type: UserSuper}); err != nil {
			return fmt.Errorf("auth: Init inner client authentication credentials error: %w", err)
		}
	}
	return nil
}

func (s *Service) createIfAbsent(u User) error {
	if isBlank(u.Username) {
		return denied(remarks.AuthUsernameBlank)
	}
	if _, ok := s.user(u.Username); ok {
		return nil
	}
	return s.CreateUser(u)
}

func (s *Service) user(name string) (*User, bool) {
	u, ok := s.state.Load().users[name]
	return u, ok
}

// Authenticate verifies req's signature; ok=false gives the remark for NO_PERMISSION (16). user is "" when authentication is off or whitelisted.
//
// Like Java's DefaultAuthenticationHandler: the user is the AccessKey,
// it must exist and be enabled, and Signature must be the HMAC-SHA1 of
// the request under its password. The returned name is the stored one
// (it does not alias req). A pass allocates nothing.
func (s *Service) Authenticate(req *codec.Frame) (user string, remark string, ok bool) {
	if !s.cfg.AuthenticationEnabled || s.authnSkip[req.Code] {
		return "", "", true
	}
	ak, _ := req.Get(KeyAccessKey)
	if ak == "" {
		return "", remarks.AuthUsernameNull, false
	}
	if len(ak) > MaxUsernameLen {
		// compat: Java echoes the whole name; we cut it.
		return "", remarks.AuthUserNotFound(ak[:64] + "..."), false
	}
	u, found := s.user(ak)
	if !found {
		return "", remarks.AuthUserNotFound(ak), false
	}
	if u.Status == UserDisabled {
		return "", remarks.AuthUserDisabled(ak), false
	}
	sig, _ := req.Get(KeySignature)
	sg := s.signers.Get().(*signer)
	good := sg.verify(req, u.Password, u.mac, sig)
	s.signers.Put(sg)
	if !good {
		return "", remarks.AuthSignatureFailed, false
	}
	return u.Username, "", true
}

// RequestUser is the AccessKey req names, unverified. Java's authorization
// takes its subject from there even when authentication is off or the
// code is on the authentication whitelist; the result aliases req.
func RequestUser(req *codec.Frame) string { return req.Value(KeyAccessKey) }

// Authorize checks that user may do action on each resource from sourceIP.
//
// Like Java 5.3.3's DefaultAuthorizationProvider: codes on the whitelist
// pass; a super user passes; otherwise every resource must be allowed by
// the user's ACL (see decide). A pass allocates nothing.
func (s *Service) Authorize(user string, code int32, sourceIP netip.Addr, action Action, res []Resource) (remark string, ok bool) {
	if !s.cfg.AuthorizationEnabled || s.authzSkip[code] {
		return "", true
	}
	return s.AuthorizeUser(user, sourceIP, action, res)
}

// Exempt reports whether Authorize passes user's requests of code
// whatever they target: authorization off, a whitelisted code or a super
// user. A caller may then skip building the targets' source and
// resources (one lookup instead of one per resource).
func (s *Service) Exempt(user string, code int32) bool {
	if !s.cfg.AuthorizationEnabled || s.authzSkip[code] {
		return true
	}
	u, ok := s.state.Load().users[user]
	return ok && u.Type == UserSuper
}

// CreateUser adds a user (Java's createUser): unset type is Normal, unset
// status enabled.
func (s *Service) CreateUser(u User) error {
	if err := validateUser(&u, true); err != nil {
		return err
	}
	if u.Type == 0 {
		u.Type = UserNormal
	}
	if u.Status == 0 {
		u.Status = UserEnabled
	}
	u.Username, u.Password = strings.Clone(u.Username), strings.Clone(u.Password) // may alias a request
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, ok := s.user(u.Username); ok {
		return denied(remarks.AuthUserExisted)
	}
	if err := s.store.putUser(&u); err != nil {
		return err
	}
	s.publish(func(users map[string]*User, _ map[string]*ACL) { users[u.Username] = &u })
	return nil
}

// UpdateUser changes the set fields of an existing user (Java's
// updateUser: a blank password, unset type or status keep the old one).
func (s *Service) UpdateUser(u User) error {
	if err := validateUser(&u, false); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	old, ok := s.user(u.Username)
	if !ok {
		return denied(remarks.AuthUserNotExist)
	}
	nu := *old
	if !isBlank(u.Password) {
		nu.Password = strings.Clone(u.Password) // may alias a request
	}
	if u.Type != 0 {
		nu.Type = u.Type
	}
	if u.Status != 0 {
		nu.Status = u.Status
	}
	if err := s.store.putUser(&nu); err != nil {
		return err
	}
	s.publish(func(users map[string]*User, _ map[string]*ACL) { users[nu.Username] = &nu })
	return nil
}

// DeleteUser removes a user and its ACL; a missing user is no error.
func (s *Service) DeleteUser(username string) error {
	if isBlank(username) {
		return denied(remarks.AuthUsernameBlank)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.store.deleteUser(username); err != nil {
		return err
	}
	s.publish(func(users map[string]*User, acls map[string]*ACL) {
		delete(users, username)
		delete(acls, username)
	})
	return nil
}

// GetUser returns a user; ok is false when there is none.
func (s *Service) GetUser(username string) (u User, ok bool, err error) {
	if isBlank(username) {
		return User{}, false, denied(remarks.AuthUsernameBlank)
	}
	p, ok := s.user(username)
	if !ok {
		return User{}, false, nil
	}
	return p.public(), true, nil
}

// IsSuperUser is Java's isSuperUser: an unknown user is an error.
func (s *Service) IsSuperUser(username string) (bool, error) {
	u, ok, err := s.GetUser(username)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, denied(remarks.AuthSuperUserNotFound(username))
	}
	return u.Type == UserSuper, nil
}

// ListUsers returns the users whose name contains filter (all for a
// blank filter), by name in byte order as Java's RocksDB iterates.
func (s *Service) ListUsers(filter string) []User {
	st := s.state.Load()
	out := make([]User, 0, len(st.users))
	for name, u := range st.users {
		if isBlank(filter) || strings.Contains(name, filter) {
			out = append(out, u.public())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Username < out[j].Username })
	return out
}

// PutACL is Java's createAcl and updateAcl (the same code): validate, the
// user must exist, then merge into the user's ACL or create it.
func (s *Service) PutACL(a ACL) error {
	if err := validateACL(&a); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, ok := s.user(a.Username); !ok {
		return denied(remarks.AuthSubjectOfNotExist(a.Subject()))
	}
	old := s.state.Load().acls[a.Username]
	var next *ACL
	if old == nil {
		next = a.clone()
	} else {
		next = old.clone()
		next.merge(a.clone().Policies)
	}
	next.compile()
	if err := s.store.putACL(next); err != nil {
		return err
	}
	s.publish(func(_ map[string]*User, acls map[string]*ACL) { acls[next.Username] = next })
	return nil
}

// DeleteACL is Java's deleteAcl: with a resource, remove that entry from
// the policy of type policyType (Custom when 0), and the ACL when nothing
// is left; without one (ok false), remove the whole ACL.
func (s *Service) DeleteACL(username string, policyType PolicyType, res ResourcePattern, hasResource bool) error {
	if policyType == 0 {
		policyType = PolicyCustom
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, ok := s.user(username); !ok {
		return denied(remarks.AuthSubjectNotExist)
	}
	old := s.state.Load().acls[username]
	if old == nil {
		return denied(remarks.AuthACLNotExist)
	}
	var next *ACL
	if hasResource {
		next = old.clone()
		next.deleteEntry(policyType, res)
	}
	if next == nil || len(next.Policies) == 0 {
		if err := s.store.deleteACL(username); err != nil {
			return err
		}
		s.publish(func(_ map[string]*User, acls map[string]*ACL) { delete(acls, username) })
		return nil
	}
	next.compile()
	if err := s.store.putACL(next); err != nil {
		return err
	}
	s.publish(func(_ map[string]*User, acls map[string]*ACL) { acls[username] = next })
	return nil
}

// GetACL is Java's getAcl: the user must exist; ok is false when it has
// no ACL.
func (s *Service) GetACL(username string) (a ACL, ok bool, err error) {
	st := s.state.Load()
	_, found := st.users[username]
	p := st.acls[username]
	if !found {
		return ACL{}, false, denied(remarks.AuthSubjectNotExist)
	}
	if p == nil {
		return ACL{}, false, nil
	}
	return *p.clone(), true, nil
}

// ListACLs is Java's LocalAuthorizationMetadataProvider.listAcl: ACLs
// whose subject key contains subjectFilter; of those, only the entries
// whose resource key contains resourceFilter, dropping emptied policies
// and ACLs.
//
// compat: Java filters the entries only when the subject key does not
// itself contain resourceFilter.
func (s *Service) ListACLs(subjectFilter, resourceFilter string) []ACL {
	st := s.state.Load()
	all := make([]*ACL, 0, len(st.acls))
	for _, a := range st.acls {
		all = append(all, a)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Subject() < all[j].Subject() })
	var out []ACL
	for _, p := range all {
		key := p.Subject()
		if !isBlank(subjectFilter) && !strings.Contains(key, subjectFilter) {
			continue
		}
		a := p.clone()
		filter := !isBlank(resourceFilter) && !strings.Contains(key, resourceFilter)
		policies := a.Policies[:0]
		for _, pol := range a.Policies {
			if filter {
				entries := pol.Entries[:0]
				for _, e := range pol.Entries {
					if strings.Contains(e.Resource.Key(), resourceFilter) {
						entries = append(entries, e)
					}
				}
				pol.Entries = entries
			}
			if len(pol.Entries) > 0 {
				policies = append(policies, pol)
			}
		}
		a.Policies = policies
		if len(a.Policies) > 0 {
			out = append(out, *a)
		}
	}
	return out
}
