package auth

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// The Java keys of the auth module, as broker.conf, namesrv.conf and
// controller.conf spell them.
var configKeys = map[string]func(c *Config, v string) error{
	"authenticationEnabled": func(c *Config, v string) error { return setBool(&c.AuthenticationEnabled, v) },
	"authorizationEnabled":  func(c *Config, v string) error { return setBool(&c.AuthorizationEnabled, v) },
	"initAuthenticationUser": func(c *Config, v string) error {
		c.InitAuthenticationUser = v
		return nil
	},
	"innerClientAuthenticationCredentials": func(c *Config, v string) error {
		c.InnerClientAuthenticationCredentials = v
		return nil
	},
	"authenticationWhitelist": func(c *Config, v string) error { c.AuthenticationWhitelist = v; return nil },
	"authorizationWhitelist":  func(c *Config, v string) error { c.AuthorizationWhitelist = v; return nil },
	// Named providers: ours is the only implementation, the names are
	// accepted so a Java config file works unchanged.
	"authenticationProvider":         func(*Config, string) error { return nil },
	"authorizationProvider":          func(*Config, string) error { return nil },
	"authenticationMetadataProvider": func(*Config, string) error { return nil },
	"authorizationMetadataProvider":  func(*Config, string) error { return nil },
}

func setBool(dst *bool, v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("auth: not a boolean: %q", v)
	}
	*dst = b
	return nil
}

// IsConfigKey reports whether key is one of the auth module's keys. A
// server refuses them in remote config updates: they carry passwords and
// decide who may do anything.
func IsConfigKey(key string) bool {
	_, ok := configKeys[key]
	return ok
}

// SetConfigKey sets key (IsConfigKey) in c.
func (c *Config) SetConfigKey(key, value string) error {
	set, ok := configKeys[key]
	if !ok {
		return fmt.Errorf("auth: unknown key %q", key)
	}
	if err := set(c, value); err != nil {
		return fmt.Errorf("auth: %s: %w", key, err)
	}
	return nil
}

// Guard is the middleware of a server with no ACL admin of its own (the
// name server and the controller, where Java checks nothing): a request
// whose code guarded reports must be signed by an enabled user
// (Authenticate) allowed Update on the cluster cluster(req) names, which a
// super user always is — the broker's inner credentials and the
// operator's initAuthenticationUser. Other requests pass unchecked.
// Refusals answer NO_PERMISSION.
func (s *Service) Guard(guarded func(code int32) bool, cluster func(req *codec.Frame) string) transport.Middleware {
	return func(c *transport.Conn, req *codec.Frame) *codec.Frame {
		if !s.cfg.AuthenticationEnabled || !guarded(req.Code) {
			return nil
		}
		user, remark, ok := s.Authenticate(req)
		if !ok {
			return codec.NewResponse(req, int32(codec.RespNoPermission), remark)
		}
		if user == "" { // a whitelisted code
			return nil
		}
		var ip netip.Addr
		if ap, err := netip.ParseAddrPort(c.RemoteAddr()); err == nil {
			ip = ap.Addr().Unmap()
		}
		res := [1]Resource{Cluster(cluster(req))}
		if remark, ok := s.authorizeAlways(user, req.Code, ip, ActionUpdate, res[:]); !ok {
			return codec.NewResponse(req, int32(codec.RespNoPermission), remark)
		}
		return nil
	}
}

// authorizeAlways is Authorize whether or not authorizationEnabled is set:
// a guarded code needs a user allowed to act, not only a valid signature.
func (s *Service) authorizeAlways(user string, code int32, ip netip.Addr, action Action, res []Resource) (string, bool) {
	if s.cfg.AuthorizationEnabled {
		return s.Authorize(user, code, ip, action, res)
	}
	super, err := s.IsSuperUser(user)
	if err == nil && super {
		return "", true
	}
	return remarks.GuardNeedsSuperUser, false
}
