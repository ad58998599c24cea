package body

import (
	"fmt"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// UserInfo is Java's UserInfo: the body of AUTH_CREATE_USER,
// AUTH_UPDATE_USER and AUTH_GET_USER (a list for AUTH_LIST_USER). Empty
// strings stand for Java's nulls and are not written.
type UserInfo struct {
	Username   string
	Password   string
	UserType   string // "Super" | "Normal"
	UserStatus string // "enable" | "disable"
}

// AppendUserInfo writes u as fastjson does: fields sorted by name, nulls
// left out.
func AppendUserInfo(dst []byte, u *UserInfo) []byte {
	w := fastjson.Writer{Buf: dst}
	writeUserInfo(&w, u)
	return w.Buf
}

// AppendUserInfoList writes a JSON array of users.
func AppendUserInfoList(dst []byte, users []UserInfo) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ArrayStart()
	for i := range users {
		writeUserInfo(&w, &users[i])
	}
	w.ArrayEnd()
	return w.Buf
}

func writeUserInfo(w *fastjson.Writer, u *UserInfo) {
	w.ObjectStart()
	w.OptStringField("password", u.Password)
	w.OptStringField("userStatus", u.UserStatus)
	w.OptStringField("userType", u.UserType)
	w.OptStringField("username", u.Username)
	w.ObjectEnd()
}

// DecodeUserInfo reads one UserInfo; unknown keys are skipped.
func DecodeUserInfo(b []byte) (UserInfo, error) {
	rd := fastjson.NewReader(b)
	u := readUserInfo(rd)
	if err := rd.End(); err != nil {
		return UserInfo{}, fmt.Errorf("body: user info: %w", err)
	}
	return u, nil
}

// DecodeUserInfoList reads a JSON array of users (null gives none).
func DecodeUserInfoList(b []byte) ([]UserInfo, error) {
	var out []UserInfo
	rd := fastjson.NewReader(b)
	for rd.ArrayStart(); rd.More(); {
		out = append(out, readUserInfo(rd))
	}
	if err := rd.End(); err != nil {
		return nil, fmt.Errorf("body: user list: %w", err)
	}
	return out, nil
}

func readUserInfo(rd *fastjson.Reader) UserInfo {
	var u UserInfo
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "username":
			u.Username = rd.String()
		case "password":
			u.Password = rd.String()
		case "userType":
			u.UserType = rd.String()
		case "userStatus":
			u.UserStatus = rd.String()
		default:
			rd.Skip()
		}
	}
	return u
}

// AclInfo is Java's AclInfo: the body of AUTH_CREATE_ACL, AUTH_UPDATE_ACL
// and AUTH_GET_ACL (a list for AUTH_LIST_ACL).
type AclInfo struct {
	Subject  string // "User:name"
	Policies []PolicyInfo
}

// PolicyInfo is Java's AclInfo.PolicyInfo.
type PolicyInfo struct {
	PolicyType string // "Custom" | "Default"; empty means Custom
	Entries    []PolicyEntryInfo
}

// PolicyEntryInfo is Java's AclInfo.PolicyEntryInfo. A nil slice is
// Java's null and is not written; an empty non-nil one is written [].
type PolicyEntryInfo struct {
	Resource  string   // "Topic:t", "Group:g*", "*"
	Actions   []string // "Pub", "Sub", …
	SourceIps []string // IPs or CIDRs
	Decision  string   // "Allow" | "Deny"
}

// AppendAclInfo writes a as fastjson does (fields sorted, nulls left out).
func AppendAclInfo(dst []byte, a *AclInfo) []byte {
	w := fastjson.Writer{Buf: dst}
	writeAclInfo(&w, a)
	return w.Buf
}

// AppendAclInfoList writes a JSON array of ACLs.
func AppendAclInfoList(dst []byte, acls []AclInfo) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ArrayStart()
	for i := range acls {
		writeAclInfo(&w, &acls[i])
	}
	w.ArrayEnd()
	return w.Buf
}

func writeAclInfo(w *fastjson.Writer, a *AclInfo) {
	w.ObjectStart()
	if a.Policies != nil {
		w.Key("policies")
		w.ArrayStart()
		for i := range a.Policies {
			p := &a.Policies[i]
			w.ObjectStart()
			if p.Entries != nil {
				w.Key("entries")
				w.ArrayStart()
				for j := range p.Entries {
					writePolicyEntry(w, &p.Entries[j])
				}
				w.ArrayEnd()
			}
			w.OptStringField("policyType", p.PolicyType)
			w.ObjectEnd()
		}
		w.ArrayEnd()
	}
	w.OptStringField("subject", a.Subject)
	w.ObjectEnd()
}

func writePolicyEntry(w *fastjson.Writer, e *PolicyEntryInfo) {
	w.ObjectStart()
	if e.Actions != nil {
		w.StringsField("actions", e.Actions)
	}
	w.OptStringField("decision", e.Decision)
	w.OptStringField("resource", e.Resource)
	if e.SourceIps != nil {
		w.StringsField("sourceIps", e.SourceIps)
	}
	w.ObjectEnd()
}

// DecodeAclInfo reads one AclInfo; unknown keys are skipped.
func DecodeAclInfo(b []byte) (AclInfo, error) {
	rd := fastjson.NewReader(b)
	a := readAclInfo(rd)
	if err := rd.End(); err != nil {
		return AclInfo{}, fmt.Errorf("body: acl info: %w", err)
	}
	return a, nil
}

// DecodeAclInfoList reads a JSON array of ACLs (null gives none).
func DecodeAclInfoList(b []byte) ([]AclInfo, error) {
	var out []AclInfo
	rd := fastjson.NewReader(b)
	for rd.ArrayStart(); rd.More(); {
		out = append(out, readAclInfo(rd))
	}
	if err := rd.End(); err != nil {
		return nil, fmt.Errorf("body: acl list: %w", err)
	}
	return out, nil
}

func readAclInfo(rd *fastjson.Reader) AclInfo {
	var a AclInfo
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "subject":
			a.Subject = rd.String()
		case "policies":
			if rd.Null() {
				continue
			}
			a.Policies = []PolicyInfo{}
			for rd.ArrayStart(); rd.More(); {
				a.Policies = append(a.Policies, readPolicyInfo(rd))
			}
		default:
			rd.Skip()
		}
	}
	return a
}

func readPolicyInfo(rd *fastjson.Reader) PolicyInfo {
	var p PolicyInfo
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "policyType":
			p.PolicyType = rd.String()
		case "entries":
			if rd.Null() {
				continue
			}
			p.Entries = []PolicyEntryInfo{}
			for rd.ArrayStart(); rd.More(); {
				p.Entries = append(p.Entries, readPolicyEntry(rd))
			}
		default:
			rd.Skip()
		}
	}
	return p
}

func readPolicyEntry(rd *fastjson.Reader) PolicyEntryInfo {
	var e PolicyEntryInfo
	for rd.ObjectStart(); rd.More(); {
		switch rd.Key() {
		case "resource":
			e.Resource = rd.String()
		case "decision":
			e.Decision = rd.String()
		case "actions":
			e.Actions = readNullableStrings(rd)
		case "sourceIps":
			e.SourceIps = readNullableStrings(rd)
		default:
			rd.Skip()
		}
	}
	return e
}

// readNullableStrings reads a string array; null gives nil, [] a
// non-nil empty slice.
func readNullableStrings(rd *fastjson.Reader) []string {
	if rd.Null() {
		return nil
	}
	return readStrings(rd)
}
