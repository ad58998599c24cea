package auth

import (
	"strings"

	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// User is one account: its name is the AccessKey clients sign with and
// its password the SecretKey.
type User struct {
	Username string
	Password string
	Type     UserType
	Status   UserStatus

	mac *macKey // Password's keyed HMAC states, set when published (Service.publish)
}

// public is u without what the service keeps beside the account.
func (u *User) public() User {
	c := *u
	c.mac = nil
	return c
}

// UserFromInfo converts an admin body like Java's UserConverter: unknown
// type or status names become unset.
func UserFromInfo(info *body.UserInfo) User {
	return User{
		Username: info.Username,
		Password: info.Password,
		Type:     ParseUserType(info.UserType),
		Status:   ParseUserStatus(info.UserStatus),
	}
}

// Info is u as the admin body UserInfo.
func (u *User) Info() body.UserInfo {
	return body.UserInfo{Username: u.Username, Password: u.Password, UserType: u.Type.String(), UserStatus: u.Status.String()}
}

// subjectKey is "User:name".
func subjectKey(username string) string { return "User:" + username }

// ParseSubject reads a subject key like Java's Subject.of: "User:name"
// (type ignoring case). ok is false for any other type.
func ParseSubject(key string) (username string, ok bool) {
	typ, name, _ := strings.Cut(key, ":")
	if !strings.EqualFold(typ, "User") {
		return "", false
	}
	return name, true
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// validateUser is Java's AuthenticationMetadataManagerImpl.validate.
func validateUser(u *User, create bool) error {
	if isBlank(u.Username) {
		return denied(remarks.AuthUsernameBlank)
	}
	if len(u.Username) > MaxUsernameLen {
		return denied("username is too long") // ours: Java has no bound
	}
	if create && isBlank(u.Password) {
		return denied(remarks.AuthPasswordBlank)
	}
	return nil
}
