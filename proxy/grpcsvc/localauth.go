package grpcsvc

import (
	"fmt"
	"strings"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// LocalAuth is local mode's auth (rocketgo, mqbroker enableGrpcProxy):
// the broker's switches and whitelists, its users and ACLs, and the
// identity the endpoint forwards with. svc nil (no ACL 2.0 key set) is no
// auth at all.
//
// Java's local-mode proxy calls the broker's processors in-process, past
// the broker's own checks; ours reaches the broker through its remoting
// port, so it signs what it forwards as a super user the broker itself
// creates: innerClientAuthenticationCredentials, else
// initAuthenticationUser. signer is nil when neither is set (the broker
// then refuses forwarded requests if its authentication is on).
func LocalAuth(svc *auth.Service) (cfg AuthConfig, authority Authority, signer func(*codec.Frame), err error) {
	if svc == nil {
		return AuthConfig{}, nil, nil, nil
	}
	ac := svc.Config()
	cfg = AuthConfig{AuthenticationEnabled: ac.AuthenticationEnabled, AuthorizationEnabled: ac.AuthorizationEnabled,
		AuthenticationWhitelist: ac.AuthenticationWhitelist, AuthorizationWhitelist: ac.AuthorizationWhitelist}
	creds, ok, err := auth.ParseCredentials(ac.InnerClientAuthenticationCredentials)
	if err != nil {
		return cfg, nil, nil, err
	}
	if !ok && strings.TrimSpace(ac.InitAuthenticationUser) != "" {
		var v struct {
			Username string `json:"username"`
			Password string `json:"password"`
		}
		if err := fastjson.Unmarshal([]byte(ac.InitAuthenticationUser), &v); err != nil {
			return cfg, nil, nil, fmt.Errorf("grpcsvc: initAuthenticationUser: %w", err)
		}
		creds, ok = auth.Credentials{AccessKey: v.Username, SecretKey: v.Password}, v.Username != ""
	}
	if ok {
		signer = creds.Signer()
	}
	return cfg, LocalAuthority{Svc: svc}, signer, nil
}
