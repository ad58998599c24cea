package grpcsvc

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	gstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/compat/remarks"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// AuthConfig is what the endpoint reads of Java's AuthConfig keys. The
// whitelists hold gRPC request message names
// ("apache.rocketmq.v2.QueryRouteRequest"), Java's rpcCode for gRPC.
type AuthConfig struct {
	AuthenticationEnabled   bool
	AuthorizationEnabled    bool
	AuthenticationWhitelist string
	AuthorizationWhitelist  string
}

// Authority holds the users and ACLs the endpoint checks against: the
// broker's own (LocalAuthority, local mode) or a broker's read over
// remoting (ClusterAuthority, mqproxy).
type Authority interface {
	// User returns the account named name; ok is false when there is none.
	User(ctx context.Context, name string) (u auth.User, ok bool, err error)
	// Authorize decides whether user may do action on res from ip; remark
	// is the refusal's text.
	Authorize(ctx context.Context, user string, ip netip.Addr, action auth.Action, res auth.Resource) (remark string, ok bool, err error)
}

// LocalAuthority is Authority on the broker's auth service of this
// process (Java's LocalMetadataService).
type LocalAuthority struct{ Svc *auth.Service }

// User implements Authority.
func (l LocalAuthority) User(_ context.Context, name string) (auth.User, bool, error) {
	return l.Svc.GetUser(name)
}

// Authorize implements Authority.
func (l LocalAuthority) Authorize(_ context.Context, user string, ip netip.Addr, action auth.Action, res auth.Resource) (string, bool, error) {
	one := [1]auth.Resource{res}
	remark, ok := l.Svc.AuthorizeUser(user, ip, action, one[:])
	return remark, ok, nil
}

// The metadata keys of Java's GrpcConstants the checks read.
const (
	mdAuthorization = "authorization"
	mdDateTime      = "x-mq-date-time"
	mdAuthAK        = "x-mq-authorization-ak"
)

// authorizer is Java 5.3.3's gRPC AuthenticationPipeline followed by its
// AuthorizationPipeline (GrpcMessagingApplication runs them before every
// request, the Telemetry stream's commands included). A refusal is a
// Status with Code UNAUTHORIZED and the auth module's message, in the
// response the method would have answered.
type authorizer struct {
	log       *slog.Logger
	cfg       AuthConfig
	authority Authority
	authnSkip map[string]bool
	authzSkip map[string]bool
}

func newAuthorizer(cfg AuthConfig, a Authority, log *slog.Logger) (*authorizer, error) {
	if a == nil {
		return nil, errors.New("grpcsvc: auth enabled without an Authority")
	}
	return &authorizer{log: log, cfg: cfg, authority: a, authnSkip: nameList(cfg.AuthenticationWhitelist), authzSkip: nameList(cfg.AuthorizationWhitelist)}, nil
}

// nameList reads a comma-separated whitelist (trimmed entries, as Java's
// StringUtils.split and trim).
func nameList(s string) map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			m[n] = true
		}
	}
	return m
}

func unauthorized(msg string) error { return fail(v2.Code_UNAUTHORIZED, msg) }

// check passes req or returns the refusal, which it logs (Java's auth
// audit log): a refused Telemetry settings command reaches no SDK
// exception, the SDKs ignore a status without a command there.
func (a *authorizer) check(ctx context.Context, req proto.Message) error {
	err := a.decide(ctx, req)
	if err != nil {
		a.log.Info("grpc request refused", "rpc", req.ProtoReflect().Descriptor().FullName(), "remote", peerIP(ctx), "reason", errStatus(err).GetMessage())
	}
	return err
}

func (a *authorizer) decide(ctx context.Context, req proto.Message) error {
	rpc := string(req.ProtoReflect().Descriptor().FullName())
	md, _ := metadata.FromIncomingContext(ctx)
	subject := mdValue(md, mdAuthAK)
	if a.cfg.AuthenticationEnabled {
		cred, err := parseCredential(mdValue(md, mdAuthorization), mdValue(md, mdDateTime))
		if err != nil {
			return err
		}
		if !a.authnSkip[rpc] {
			if err := a.authenticate(ctx, cred); err != nil {
				return err
			}
		}
		// compat: Java keeps an x-mq-authorization-ak the client sent
		// itself (putHeaderIfNotExist); we take the authenticated name.
		if cred.username != "" {
			subject = cred.username
		}
	}
	if !a.cfg.AuthorizationEnabled {
		return nil
	}
	var buf [4]target
	targets, err := grpcTargets(buf[:0], req)
	if err != nil || len(targets) == 0 || a.authzSkip[rpc] {
		return err
	}
	ip := peerIP(ctx)
	for _, t := range targets {
		remark, ok, err := a.authority.Authorize(ctx, subject, ip, t.action, t.res)
		if err != nil {
			return unauthorized(remarks.AuthorizationFailed)
		}
		if !ok {
			return unauthorized(remark)
		}
	}
	return nil
}

// authenticate is DefaultAuthenticationHandler on a parsed credential.
func (a *authorizer) authenticate(ctx context.Context, c credential) error {
	if c.username == "" {
		return unauthorized(remarks.AuthUsernameNull)
	}
	if len(c.username) > auth.MaxUsernameLen {
		// compat: Java echoes the whole name; we cut it (as the broker does).
		return unauthorized(remarks.AuthUserNotFound(c.username[:64] + "..."))
	}
	u, ok, err := a.authority.User(ctx, c.username)
	if err != nil {
		return unauthorized(remarks.GRPCAuthnFailedGeneric)
	}
	if !ok {
		return unauthorized(remarks.AuthUserNotFound(c.username))
	}
	if u.Status == auth.UserDisabled {
		return unauthorized(remarks.AuthUserDisabled(c.username))
	}
	if !c.hasSig || !signatureMatches(u.Password, c.content, c.signature) {
		return unauthorized(remarks.AuthSignatureFailed)
	}
	return nil
}

// signatureMatches compares sig with HMAC-SHA1(key=password, content) in
// constant time (Java compares the Base64 texts of both: the same bytes).
func signatureMatches(password string, content, sig []byte) bool {
	m := hmac.New(sha1.New, []byte(password))
	m.Write(content)
	return hmac.Equal(m.Sum(nil), sig)
}

func mdValue(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func peerIP(ctx context.Context) netip.Addr {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		// compat: Java reads rpc-remote-address, which a client may send
		// itself (putHeaderIfNotExist); we use the connection's peer.
		return sourceIP(p.Addr.String())
	}
	return netip.Addr{}
}

func sourceIP(remote string) netip.Addr {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// credential is what DefaultAuthenticationContextBuilder reads from the
// metadata the SDKs sign (rocketmq-clients' Signature.sign):
//
//	authorization: MQv2-HMAC-SHA1 Credential=<ak>, SignedHeaders=x-mq-date-time, Signature=<hex>
//	x-mq-date-time: 20240102T030405Z
//
// Signature is hex(HMAC-SHA1(key = the user's password, x-mq-date-time)).
// The algorithm name and SignedHeaders are not checked, nor the time's
// age (as Java).
type credential struct {
	username  string
	signature []byte
	hasSig    bool
	content   []byte
}

// parseCredential is DefaultAuthenticationContextBuilder.build: an empty
// authorization gives no username; anything malformed is refused with
// Java's message.
func parseCredential(authz, datetime string) (credential, error) {
	var c credential
	if authz == "" {
		return c, nil
	}
	if datetime == "" {
		return c, unauthorized(remarks.GRPCAuthDatetimeNull)
	}
	_, rest, ok := strings.Cut(authz, " ")
	if !ok {
		return c, unauthorized(remarks.GRPCAuthHeaderBad)
	}
	for _, kv := range javaSplit(rest, ",") {
		k, v, ok := strings.Cut(javaTrim(kv), "=")
		if !ok {
			return c, unauthorized(remarks.GRPCAuthKeyValuesBad(1))
		}
		switch k {
		case "Credential":
			parts := javaSplit(v, "/")
			if len(parts) == 0 {
				return c, unauthorized(remarks.GRPCAuthCredentialBad(0))
			}
			c.username = parts[0]
		case "Signature":
			// Java: Hex.decodeHex (either case); odd length or a non-hex
			// digit fails the whole context.
			sig, err := hex.DecodeString(v)
			if err != nil {
				return c, unauthorized(remarks.GRPCAuthContextError)
			}
			c.signature, c.hasSig = sig, true
		}
	}
	c.content = []byte(datetime)
	return c, nil
}

// javaSplit is Java's String.split(sep) for a literal sep: no match gives
// s itself; otherwise trailing empty strings are dropped.
func javaSplit(s, sep string) []string {
	if !strings.Contains(s, sep) {
		return []string{s}
	}
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// javaTrim is Java's String.trim: it strips every char <= ' '.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// target is one resource a request needs an action on.
type target struct {
	res    auth.Resource
	action auth.Action
}

// grpcTargets is DefaultAuthorizationContextBuilder.build(Metadata, …):
// which resource each request needs which action on. Requests it does not
// name (offsets …) need none.
func grpcTargets(dst []target, req proto.Message) ([]target, error) {
	topic := func(dst []target, r *v2.Resource, a auth.Action) ([]target, error) {
		if strings.TrimSpace(r.GetName()) == "" {
			return dst, unauthorized(remarks.GRPCAuthTopicNull)
		}
		return append(dst, target{auth.Topic(r.GetName()), a}), nil
	}
	group := func(dst []target, r *v2.Resource) ([]target, error) {
		if strings.TrimSpace(r.GetName()) == "" {
			return dst, unauthorized(remarks.GRPCAuthGroupNull)
		}
		return append(dst, target{auth.Group(r.GetName()), auth.ActionSub}), nil
	}
	sub := func(dst []target, g, t *v2.Resource) ([]target, error) {
		dst, err := group(dst, g)
		if err != nil {
			return dst, err
		}
		return topic(dst, t, auth.ActionSub)
	}
	switch r := req.(type) {
	case *v2.SendMessageRequest:
		if len(r.GetMessages()) == 0 {
			return dst, unauthorized(remarks.GRPCAuthMessageNull)
		}
		return topic(dst, r.GetMessages()[0].GetTopic(), auth.ActionPub)
	case *v2.RecallMessageRequest:
		return topic(dst, r.GetTopic(), auth.ActionPub)
	case *v2.EndTransactionRequest:
		return topic(dst, r.GetTopic(), auth.ActionPub)
	case *v2.HeartbeatRequest:
		switch r.GetClientType() {
		case v2.ClientType_PUSH_CONSUMER, v2.ClientType_SIMPLE_CONSUMER, v2.ClientType_PULL_CONSUMER:
			return group(dst, r.GetGroup())
		}
		return dst, nil
	case *v2.ReceiveMessageRequest:
		if r.GetMessageQueue() == nil {
			return dst, unauthorized(remarks.GRPCAuthQueueNull)
		}
		return sub(dst, r.GetGroup(), r.GetMessageQueue().GetTopic())
	case *v2.PullMessageRequest:
		// ours: Java 5.3.3 names no resource for it (it does not serve
		// it); a pull reads the queue as a receive does.
		if r.GetMessageQueue() == nil {
			return dst, unauthorized(remarks.GRPCAuthQueueNull)
		}
		return sub(dst, r.GetGroup(), r.GetMessageQueue().GetTopic())
	case *v2.AckMessageRequest:
		return sub(dst, r.GetGroup(), r.GetTopic())
	case *v2.ForwardMessageToDeadLetterQueueRequest:
		return sub(dst, r.GetGroup(), r.GetTopic())
	case *v2.NotifyClientTerminationRequest:
		if strings.TrimSpace(r.GetGroup().GetName()) == "" {
			return dst, nil
		}
		return group(dst, r.GetGroup())
	case *v2.ChangeInvisibleDurationRequest:
		return group(dst, r.GetGroup())
	case *v2.QueryRouteRequest:
		return topic(dst, r.GetTopic(), auth.ActionPub|auth.ActionSub)
	case *v2.QueryAssignmentRequest:
		return sub(dst, r.GetGroup(), r.GetTopic())
	case *v2.TelemetryCommand:
		st := r.GetSettings()
		if st == nil {
			return dst, nil
		}
		pub, subs := st.GetPublishing(), st.GetSubscription()
		if pub == nil && subs == nil {
			// Java throws an AclException here, which is no auth
			// exception: INTERNAL_SERVER_ERROR.
			return dst, fail(v2.Code_INTERNAL_SERVER_ERROR, remarks.GRPCAuthNoPubSub)
		}
		var err error
		for _, t := range pub.GetTopics() {
			if dst, err = topic(dst, t, auth.ActionPub); err != nil {
				return dst, err
			}
		}
		if subs != nil {
			if dst, err = group(dst, subs.GetGroup()); err != nil {
				return dst, err
			}
			for _, e := range subs.GetSubscriptions() {
				if dst, err = topic(dst, e.GetTopic(), auth.ActionSub); err != nil {
					return dst, err
				}
			}
		}
		return dst, nil
	}
	return dst, nil
}

// unaryRefusal builds the response of each unary method around a refusal's
// status (Java's statusResponseCreator).
var unaryRefusal = map[string]func(*v2.Status) any{
	v2.MessagingService_QueryRoute_FullMethodName: func(s *v2.Status) any { return &v2.QueryRouteResponse{Status: s} },
	v2.MessagingService_Heartbeat_FullMethodName:  func(s *v2.Status) any { return &v2.HeartbeatResponse{Status: s} },
	v2.MessagingService_SendMessage_FullMethodName: func(s *v2.Status) any {
		return &v2.SendMessageResponse{Status: s}
	},
	v2.MessagingService_QueryAssignment_FullMethodName: func(s *v2.Status) any { return &v2.QueryAssignmentResponse{Status: s} },
	v2.MessagingService_AckMessage_FullMethodName:      func(s *v2.Status) any { return &v2.AckMessageResponse{Status: s} },
	v2.MessagingService_ForwardMessageToDeadLetterQueue_FullMethodName: func(s *v2.Status) any {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: s}
	},
	v2.MessagingService_UpdateOffset_FullMethodName:   func(s *v2.Status) any { return &v2.UpdateOffsetResponse{Status: s} },
	v2.MessagingService_GetOffset_FullMethodName:      func(s *v2.Status) any { return &v2.GetOffsetResponse{Status: s} },
	v2.MessagingService_QueryOffset_FullMethodName:    func(s *v2.Status) any { return &v2.QueryOffsetResponse{Status: s} },
	v2.MessagingService_EndTransaction_FullMethodName: func(s *v2.Status) any { return &v2.EndTransactionResponse{Status: s} },
	v2.MessagingService_NotifyClientTermination_FullMethodName: func(s *v2.Status) any {
		return &v2.NotifyClientTerminationResponse{Status: s}
	},
	v2.MessagingService_ChangeInvisibleDuration_FullMethodName: func(s *v2.Status) any {
		return &v2.ChangeInvisibleDurationResponse{Status: s}
	},
	v2.MessagingService_RecallMessage_FullMethodName: func(s *v2.Status) any { return &v2.RecallMessageResponse{Status: s} },
}

// unary is the grpc.UnaryServerInterceptor running the checks.
func (a *authorizer) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if msg, ok := req.(proto.Message); ok {
		if err := a.check(ctx, msg); err != nil {
			st := errStatus(err)
			if mk := unaryRefusal[info.FullMethod]; mk != nil {
				return mk(st), nil
			}
			return nil, gstatus.Error(codes.PermissionDenied, st.GetMessage())
		}
	}
	return handler(ctx, req)
}

// errRefusalSent ends a server stream whose request was refused after the
// refusal went out in its first response.
var errRefusalSent = errors.New("grpcsvc: refusal sent")

// stream is the grpc.StreamServerInterceptor running the checks on every
// message a client sends: a refused ReceiveMessage or PullMessage gets one
// response with the status and ends; a refused Telemetry command gets a TelemetryCommand
// with the status and the stream goes on (Java writes the status with
// onNext and keeps the stream).
func (a *authorizer) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	w := &authStream{ServerStream: ss, a: a, method: info.FullMethod}
	if err := handler(srv, w); !errors.Is(err, errRefusalSent) {
		return err
	}
	return nil
}

// authStream checks what RecvMsg reads. Its SendMsg is serialized: a
// refusal goes out from the reading goroutine while the handler may be
// sending from another.
type authStream struct {
	grpc.ServerStream
	a      *authorizer
	method string
	mu     sync.Mutex
}

func (w *authStream) SendMsg(m any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ServerStream.SendMsg(m)
}

func (w *authStream) RecvMsg(m any) error {
	for {
		if err := w.ServerStream.RecvMsg(m); err != nil {
			return err
		}
		msg, ok := m.(proto.Message)
		if !ok {
			return nil
		}
		err := w.a.check(w.Context(), msg)
		if err == nil {
			return nil
		}
		st := errStatus(err)
		switch w.method {
		case v2.MessagingService_ReceiveMessage_FullMethodName:
			if err := w.SendMsg(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}}); err != nil {
				return err
			}
			return errRefusalSent
		case v2.MessagingService_PullMessage_FullMethodName:
			if err := w.SendMsg(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_Status{Status: st}}); err != nil {
				return err
			}
			return errRefusalSent
		case v2.MessagingService_Telemetry_FullMethodName:
			if err := w.SendMsg(&v2.TelemetryCommand{Status: st}); err != nil {
				return err
			}
		default:
			return gstatus.Error(codes.PermissionDenied, st.GetMessage())
		}
	}
}
