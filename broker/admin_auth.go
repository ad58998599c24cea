package broker

import (
	"errors"
	"log/slog"
	"strings"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// authAdmin serves the users and ACLs of ACL 2.0 (AUTH_* 3001–3010) as
// Java's AdminBrokerProcessor does: refusals of the auth module answer
// NO_PERMISSION with its text, anything else SYSTEM_ERROR.
type authAdmin struct {
	auth *auth.Service
	log  *slog.Logger
}

func (a *authAdmin) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqAuthCreateUser, pool, a.createUser)
	r.Handle(codec.ReqAuthUpdateUser, pool, a.updateUser)
	r.Handle(codec.ReqAuthDeleteUser, pool, a.deleteUser)
	r.Handle(codec.ReqAuthGetUser, pool, a.getUser)
	r.Handle(codec.ReqAuthListUser, pool, a.listUser)
	r.Handle(codec.ReqAuthCreateAcl, pool, a.putACL)
	r.Handle(codec.ReqAuthUpdateAcl, pool, a.putACL) // Java's updateAcl is createAcl
	r.Handle(codec.ReqAuthDeleteAcl, pool, a.deleteACL)
	r.Handle(codec.ReqAuthGetAcl, pool, a.getACL)
	r.Handle(codec.ReqAuthListAcl, pool, a.listACL)
}

// reply maps the result of an auth operation (Java's handleAuthException).
func (a *authAdmin) reply(req *codec.Frame, err error) *codec.Frame {
	if err == nil {
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	}
	var d *auth.DeniedError
	if errors.As(err, &d) {
		return codec.NewResponse(req, int32(codec.RespNoPermission), d.Msg)
	}
	a.log.Error("auth admin request failed", "code", codec.RequestCode(req.Code).String(), "err", err)
	return codec.NewResponse(req, int32(codec.RespSystemError), remarks.AuthAdminSystemError)
}

func systemError(req *codec.Frame, remark string) *codec.Frame {
	return codec.NewResponse(req, int32(codec.RespSystemError), remark)
}

// notSuperLogin is Java's isNotSuperUserLogin: a request without an
// AccessKey (authentication off) counts as a super user's.
func (a *authAdmin) notSuperLogin(req *codec.Frame) (bool, error) {
	ak := auth.RequestUser(req)
	if ak == "" {
		return false, nil
	}
	super, err := a.auth.IsSuperUser(ak)
	return !super, err
}

func (a *authAdmin) userBody(req *codec.Frame, username string) (auth.User, *codec.Frame) {
	info, err := body.DecodeUserInfo(req.Body)
	if err != nil || len(req.Body) == 0 {
		return auth.User{}, systemError(req, remarks.AuthAdminUserBodyInvalid)
	}
	info.Username = username
	return auth.UserFromInfo(&info), nil
}

func (a *authAdmin) createUser(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.CreateUserRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	if h.Username == "" {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remarks.AuthAdminNoUsername)
	}
	u, r := a.userBody(req, h.Username)
	if r != nil {
		return r
	}
	if u.Type == auth.UserSuper {
		if not, err := a.notSuperLogin(req); err != nil || not {
			return a.superRefusal(req, err, remarks.AuthAdminSuperCreate)
		}
	}
	return a.reply(req, a.auth.CreateUser(u))
}

// superRefusal answers a failed super-user check made before Java's
// future starts: SYSTEM_ERROR with remark, or with the error of the check
// itself (an unknown AccessKey; Java's join throws out of the handler).
func (a *authAdmin) superRefusal(req *codec.Frame, err error, remark string) *codec.Frame {
	if err != nil {
		return systemError(req, err.Error())
	}
	return systemError(req, remark)
}

// superDenied answers a failed super-user check made inside Java's
// future: NO_PERMISSION, with the error of the check itself if it failed.
func (a *authAdmin) superDenied(req *codec.Frame, err error) *codec.Frame {
	if err != nil {
		return a.reply(req, err)
	}
	return codec.NewResponse(req, int32(codec.RespNoPermission), remarks.AuthAdminSuperUpdate)
}

func (a *authAdmin) updateUser(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.UpdateUserRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	if h.Username == "" {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remarks.AuthAdminNoUsername)
	}
	u, r := a.userBody(req, h.Username)
	if r != nil {
		return r
	}
	if u.Type == auth.UserSuper {
		if not, err := a.notSuperLogin(req); err != nil || not {
			return a.superRefusal(req, err, remarks.AuthAdminSuperUpdate)
		}
	}
	old, ok, err := a.auth.GetUser(h.Username)
	if err != nil {
		return a.reply(req, err)
	}
	if !ok {
		return codec.NewResponse(req, int32(codec.RespNoPermission), remarks.AuthUserNotExist)
	}
	if old.Type == auth.UserSuper {
		// Java checks this one inside its future: a failure of the check
		// itself is answered like the refusal, NO_PERMISSION.
		if not, err := a.notSuperLogin(req); err != nil || not {
			return a.superDenied(req, err)
		}
	}
	return a.reply(req, a.auth.UpdateUser(u))
}

func (a *authAdmin) deleteUser(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.DeleteUserRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	old, ok, err := a.auth.GetUser(h.Username)
	if err != nil {
		return a.reply(req, err)
	}
	if !ok {
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	}
	if old.Type == auth.UserSuper {
		if not, err := a.notSuperLogin(req); err != nil || not {
			return a.superDenied(req, err) // compat: Java's text says update
		}
	}
	return a.reply(req, a.auth.DeleteUser(h.Username))
}

func (a *authAdmin) getUser(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetUserRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	if strings.TrimSpace(h.Username) == "" {
		return codec.NewResponse(req, int32(codec.RespInvalidParameter), remarks.AuthAdminNoUsername)
	}
	u, ok, err := a.auth.GetUser(h.Username)
	if err != nil {
		return a.reply(req, err)
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	if ok {
		info := u.Info()
		resp.Body = body.AppendUserInfo(nil, &info)
	}
	return resp
}

func (a *authAdmin) listUser(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.ListUsersRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	if users := a.auth.ListUsers(h.Filter); len(users) > 0 {
		infos := make([]body.UserInfo, len(users))
		for i := range users {
			infos[i] = users[i].Info()
		}
		resp.Body = body.AppendUserInfoList(nil, infos)
	}
	return resp
}

// putACL serves AUTH_CREATE_ACL and AUTH_UPDATE_ACL (one code path in
// Java: merge into the subject's ACL, or create it).
func (a *authAdmin) putACL(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.CreateAclRequest // UpdateAclRequest has the same single key
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	info, err := body.DecodeAclInfo(req.Body)
	if err != nil || len(req.Body) == 0 || len(info.Policies) == 0 {
		// compat: Java throws out of the handler here; the remoting layer
		// answers with the exception's text.
		return systemError(req, remarks.AuthAdminACLBodyNull)
	}
	acl, ok := auth.ACLFromInfo(&info, h.Subject)
	if !ok {
		return systemError(req, remarks.AuthAdminSystemError) // Java: a null subject fails validation with an NPE
	}
	return a.reply(req, a.auth.PutACL(acl))
}

func (a *authAdmin) deleteACL(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.DeleteAclRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	user, ok := auth.ParseSubject(h.Subject)
	if !ok {
		return codec.NewResponse(req, int32(codec.RespNoPermission), remarks.AuthSubjectNull)
	}
	pt, _ := auth.ParsePolicyType(h.PolicyType)
	// compat: a resource Java cannot parse is null, which deletes the
	// whole ACL.
	res, hasRes := auth.ParseResourcePattern(h.Resource)
	return a.reply(req, a.auth.DeleteACL(user, pt, res, hasRes))
}

func (a *authAdmin) getACL(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetAclRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	user, ok := auth.ParseSubject(h.Subject)
	if !ok {
		return systemError(req, remarks.AuthAdminSystemError) // Java: NPE on the null subject
	}
	acl, found, err := a.auth.GetACL(user)
	if err != nil {
		return a.reply(req, err)
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	if found {
		info := acl.Info()
		resp.Body = body.AppendAclInfo(nil, &info)
	}
	return resp
}

func (a *authAdmin) listACL(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.ListAclsRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	if acls := a.auth.ListACLs(h.SubjectFilter, h.ResourceFilter); len(acls) > 0 {
		infos := make([]body.AclInfo, len(acls))
		for i := range acls {
			infos[i] = acls[i].Info()
		}
		resp.Body = body.AppendAclInfoList(nil, infos)
	}
	return resp
}
