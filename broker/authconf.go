package broker

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/rocketgo/rocketgo/broker/auth"
)

// authDir is where the auth metadata lives (Java's authConfigPath is
// <storePathRootDir>/config, its RocksDB stores under it).
func authDir(cfg *Config) string { return filepath.Join(cfg.StorePathRootDir, "config", "auth") }

// authKeys are the ACL 2.0 keys. GET_BROKER_CONFIG leaves them out, as
// Java's does (its AuthConfig is not part of the broker's Configuration):
// initAuthenticationUser and innerClientAuthenticationCredentials carry
// passwords.
var authKeys = map[string]bool{
	"authenticationEnabled":                true,
	"authorizationEnabled":                 true,
	"authenticationMetadataProvider":       true,
	"authorizationMetadataProvider":        true,
	"initAuthenticationUser":               true,
	"innerClientAuthenticationCredentials": true,
	"authenticationWhitelist":              true,
	"authorizationWhitelist":               true,
	"migrateAuthFromV1Enabled":             true,
}

// wantsAuth reports whether any ACL 2.0 key is set: only then does the
// broker open the auth metadata and serve the AUTH_* admin codes (Java
// needs a metadata provider configured for them).
func wantsAuth(cfg *Config) bool {
	return cfg.AuthenticationEnabled || cfg.AuthorizationEnabled ||
		cfg.AuthenticationMetadataProvider != "" || cfg.AuthorizationMetadataProvider != "" ||
		cfg.InitAuthenticationUser != "" || cfg.InnerClientAuthenticationCredentials != "" ||
		cfg.MigrateAuthFromV1Enabled
}

// openAuth opens the auth service when the configuration asks for one;
// nil otherwise.
func openAuth(cfg *Config, log *slog.Logger) (*auth.Service, error) {
	if !wantsAuth(cfg) {
		return nil, nil
	}
	ac := auth.Config{
		AuthenticationEnabled:                cfg.AuthenticationEnabled,
		AuthorizationEnabled:                 cfg.AuthorizationEnabled,
		InitAuthenticationUser:               cfg.InitAuthenticationUser,
		InnerClientAuthenticationCredentials: cfg.InnerClientAuthenticationCredentials,
		AuthenticationWhitelist:              cfg.AuthenticationWhitelist,
		AuthorizationWhitelist:               cfg.AuthorizationWhitelist,
		MigrateAuthFromV1Enabled:             cfg.MigrateAuthFromV1Enabled,
	}
	// Like Java's PlainPermissionManager: ${rocketmq.home.dir}/conf/plain_acl.yml.
	if home := os.Getenv("ROCKETMQ_HOME"); home != "" {
		ac.PlainACLFile = filepath.Join(home, "conf", "plain_acl.yml")
	}
	return auth.Open(ac, authDir(cfg), log.With("component", "auth"))
}

// Auth is the broker's auth service, nil when no ACL 2.0 key is set.
func (b *Broker) Auth() *auth.Service { return b.auth }

func (b *Broker) closeAuth() {
	if b.auth != nil {
		if err := b.auth.Close(); err != nil {
			b.log.Error("close auth metadata", "err", err)
		}
	}
}
