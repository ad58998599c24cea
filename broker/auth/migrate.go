package auth

import (
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// plainACL is the shape of ACL 1.0's plain_acl.yml (Java's
// PlainAccessData); only what the migration reads.
type plainACL struct {
	GlobalWhiteRemoteAddresses []string          `yaml:"globalWhiteRemoteAddresses"`
	Accounts                   []plainACLAccount `yaml:"accounts"`
}

type plainACLAccount struct {
	AccessKey          string   `yaml:"accessKey"`
	SecretKey          string   `yaml:"secretKey"`
	WhiteRemoteAddress string   `yaml:"whiteRemoteAddress"`
	Admin              bool     `yaml:"admin"`
	DefaultTopicPerm   string   `yaml:"defaultTopicPerm"`
	DefaultGroupPerm   string   `yaml:"defaultGroupPerm"`
	TopicPerms         []string `yaml:"topicPerms"`
	GroupPerms         []string `yaml:"groupPerms"`
}

func readPlainACL(path string) (*plainACL, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: read %s: %w", path, err)
	}
	var p plainACL
	if err := yaml.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("auth: parse %s: %w", path, err)
	}
	return &p, nil
}

// migrateV1 is Java's AuthMigrator: every account of the ACL 1.0 file
// whose AccessKey is not a user yet becomes a user (super when admin)
// and an ACL: topicPerms and groupPerms make the Custom policy,
// defaultTopicPerm and defaultGroupPerm the Default one ("Topic:*",
// "Group:*"). Failures are logged per account, as Java does; global and
// per-account white addresses are not migrated (Java drops them too).
func (s *Service) migrateV1(path string) {
	if path == "" {
		return
	}
	p, err := readPlainACL(path)
	if err != nil {
		if !os.IsNotExist(err) {
			s.log.Error("[ACL MIGRATE] read ACL 1.0 file", "path", path, "err", err)
		}
		return
	}
	seen := map[string]bool{}
	for _, acc := range p.Accounts {
		if seen[acc.AccessKey] { // Java keeps the first account of a key
			continue
		}
		seen[acc.AccessKey] = true
		if err := s.migrateAccount(&acc); err != nil {
			s.log.Error("[ACL MIGRATE] An error occurred while migrating ACL configurations", "accessKey", acc.AccessKey, "err", err)
		}
	}
}

func (s *Service) migrateAccount(acc *plainACLAccount) error {
	if _, ok := s.user(acc.AccessKey); ok {
		return nil
	}
	u := User{Username: acc.AccessKey, Password: acc.SecretKey, Type: UserNormal}
	if acc.Admin {
		u.Type = UserSuper
	}
	if err := s.CreateUser(u); err != nil {
		return err
	}
	acl := ACL{Username: acc.AccessKey}
	var custom Policy
	for _, tp := range acc.TopicPerms {
		if name, perm, ok := splitPerm(tp); ok {
			custom.Entries = append(custom.Entries, permEntry(ResourcePattern{Type: ResourceTopic, Name: name, Pattern: PatternLiteral}, perm))
		}
	}
	for _, gp := range acc.GroupPerms {
		if name, perm, ok := splitPerm(gp); ok {
			g := Group(name)
			custom.Entries = append(custom.Entries, permEntry(ResourcePattern{Type: ResourceGroup, Name: g.Name, Pattern: PatternLiteral}, perm))
		}
	}
	if len(custom.Entries) > 0 {
		custom.Type = PolicyCustom
		acl.Policies = append(acl.Policies, custom)
	}
	var def Policy
	if perm := strings.TrimSpace(acc.DefaultTopicPerm); perm != "" {
		def.Entries = append(def.Entries, permEntry(ResourcePattern{Type: ResourceTopic, Pattern: PatternAny}, perm))
	}
	if perm := strings.TrimSpace(acc.DefaultGroupPerm); perm != "" {
		def.Entries = append(def.Entries, permEntry(ResourcePattern{Type: ResourceGroup, Pattern: PatternAny}, perm))
	}
	if len(def.Entries) > 0 {
		def.Type = PolicyDefault
		acl.Policies = append(acl.Policies, def)
	}
	if len(acl.Policies) == 0 {
		return nil
	}
	return s.PutACL(acl)
}

// splitPerm reads "name=PERM" like Java's StringUtils.split on '=' (empty
// pieces dropped, exactly two wanted), trimmed.
func splitPerm(s string) (name, perm string, ok bool) {
	var parts []string
	for _, p := range strings.Split(s, "=") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) != 2 {
		return "", "", false
	}
	return strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1]), true
}

// permEntry converts an ACL 1.0 permission: PUB, SUB, PUB|SUB (or
// SUB|PUB) allow those actions; DENY and anything else concern All, and
// only DENY (or a blank) denies.
func permEntry(res ResourcePattern, perm string) Entry {
	e := Entry{Resource: res, Decision: Allow}
	switch perm {
	case "PUB":
		e.Actions = []Action{ActionPub}
	case "SUB":
		e.Actions = []Action{ActionSub}
	case "PUB|SUB", "SUB|PUB":
		e.Actions = []Action{ActionPub, ActionSub}
	default:
		e.Actions = []Action{ActionAll}
	}
	if perm == "DENY" || isBlank(perm) {
		e.Decision = Deny
	}
	return e
}
