package broker

import (
	"net/netip"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// authCheck is Java 5.3.3's AuthenticationPipeline and
// AuthorizationPipeline as one request middleware: the signature first,
// then every target of the request (authTargets) against the caller's
// ACLs. Refusals answer NO_PERMISSION with the auth module's remark. It
// runs on the workers of every route, so a request is checked once
// whichever processor serves it.
type authCheck struct {
	svc     *auth.Service
	cluster string
	authn   bool
	authz   bool
}

func newAuthCheck(svc *auth.Service, cluster string) *authCheck {
	c := svc.Config()
	return &authCheck{svc: svc, cluster: cluster, authn: c.AuthenticationEnabled, authz: c.AuthorizationEnabled}
}

// enabled reports whether there is anything to check.
func (a *authCheck) enabled() bool { return a != nil && (a.authn || a.authz) }

func denyResp(req *codec.Frame, remark string) *codec.Frame {
	return codec.NewResponse(req, int32(codec.RespNoPermission), remark)
}

// check is the transport.Middleware.
func (a *authCheck) check(c *transport.Conn, req *codec.Frame) *codec.Frame {
	return a.checkFrom(c.RemoteAddr(), req)
}

// checkFrom checks req from the peer at remote ("ip:port").
func (a *authCheck) checkFrom(remote string, req *codec.Frame) *codec.Frame {
	user := ""
	if a.authn {
		u, remark, ok := a.svc.Authenticate(req)
		if !ok {
			return denyResp(req, remark)
		}
		user = u
	}
	if !a.authz {
		return nil
	}
	if user == "" {
		// Java's subject is the request's AccessKey even when
		// authentication is off or skipped the code.
		user = auth.RequestUser(req)
	}
	var buf [4]authTarget
	targets, err := authTargets(buf[:0], req, a.cluster)
	if err != nil {
		return denyResp(req, remarks.AuthorizationContextError)
	}
	if len(targets) == 0 || a.svc.Exempt(user, req.Code) {
		return nil
	}
	ip := sourceIP(remote)
	var one [1]auth.Resource
	for i := range targets {
		one[0] = auth.Resource{Type: auth.ResourceType(targets[i].typ), Name: targets[i].name}
		if remark, ok := a.svc.Authorize(user, req.Code, ip, authAction(targets[i].actions), one[:]); !ok {
			return denyResp(req, remark)
		}
	}
	return nil
}

// unknownCode answers a code no route serves, on the admin pool behind
// the middleware: Java's pipeline checks every request before its
// processor, and the default processor (AdminBrokerProcessor) answers an
// unknown code REQUEST_CODE_NOT_SUPPORTED. So with auth on, an unsigned
// request gets NO_PERMISSION whatever its code; without auth the
// transport answers unknown codes at once, the same way.
func unknownCode(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	return codec.NewResponse(req, int32(codec.RespRequestCodeNotSupported), remarks.RequestCodeNotSupported(req.Code))
}

// authAction maps the header package's action bits onto the auth
// module's (whose bit n is Java's action code n; ours start at ALL).
func authAction(a header.Action) auth.Action { return auth.Action(a) << 1 }

// sourceIP is the address part of "ip:port" (zero when unparsable).
func sourceIP(remote string) netip.Addr {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// superOnly refuses req unless its signer is a super user: with
// authentication on, UPDATE_BROKER_CONFIG (Java checks nothing: it has no
// header to annotate) may move data, addresses, ports and roles.
func (a *authCheck) superOnly(req *codec.Frame) *codec.Frame {
	if !a.enabled() || !a.authn {
		return nil
	}
	super, err := a.svc.IsSuperUser(auth.RequestUser(req))
	if err != nil || !super {
		return denyResp(req, remarks.ConfigNeedsSuperUser)
	}
	return nil
}
