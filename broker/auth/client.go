package auth

import (
	"fmt"
	"strings"

	"github.com/rocketgo/rocketgo/codec"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// Credentials are an access key and its secret, as a client signs with
// them (Java's SessionCredentials without the token).
type Credentials struct {
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
}

// ParseCredentials reads Java's innerClientAuthenticationCredentials JSON,
// {"accessKey":…,"secretKey":…}. A blank value gives no credentials.
func ParseCredentials(s string) (Credentials, bool, error) {
	if strings.TrimSpace(s) == "" {
		return Credentials{}, false, nil
	}
	var c Credentials
	if err := fastjson.Unmarshal([]byte(s), &c); err != nil {
		return Credentials{}, false, fmt.Errorf("auth: innerClientAuthenticationCredentials: %w", err)
	}
	if c.AccessKey == "" {
		return Credentials{}, false, fmt.Errorf("auth: innerClientAuthenticationCredentials has no accessKey")
	}
	return c, true, nil
}

// Signer returns the hook that signs every request a client sends with c,
// as Java's AclClientRPCHook.doBeforeRequest does: AccessKey set, any
// earlier Signature dropped, then Signature computed over the final
// extFields and body. Safe for concurrent use (transport.ClientConfig's
// BeforeRequest).
func (c Credentials) Signer() func(req *codec.Frame) {
	return func(req *codec.Frame) {
		req.Set(KeyAccessKey, c.AccessKey)
		for i := 0; i < len(req.Ext); i++ {
			if req.Ext[i].Key == KeySignature {
				req.Ext = append(req.Ext[:i], req.Ext[i+1:]...)
				i--
			}
		}
		if sig, ok := Sign(req, c.SecretKey); ok {
			req.Set(KeySignature, sig)
		}
	}
}
