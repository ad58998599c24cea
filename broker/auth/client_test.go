package auth

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// A request signed by Credentials.Signer passes Authenticate; re-signing
// after a change replaces the old signature.
func TestSignerSignsForAuthenticate(t *testing.T) {
	s := openTest(t, Config{AuthenticationEnabled: true,
		InnerClientAuthenticationCredentials: `{"accessKey":"inner","secretKey":"inner-secret"}`})
	c, ok, err := ParseCredentials(`{"accessKey":"inner","secretKey":"inner-secret"}`)
	require.NoError(t, err)
	require.True(t, ok)
	sign := c.Signer()

	req := &codec.Frame{Code: int32(codec.ReqRegisterBroker), Body: []byte("body")}
	req.Set("brokerName", "b")
	sign(req)
	user, remark, ok := s.Authenticate(req)
	require.True(t, ok, remark)
	require.Equal(t, "inner", user)

	req.Set("brokerName", "other")
	_, _, ok = s.Authenticate(req)
	require.False(t, ok, "a changed field breaks the signature")
	sign(req)
	_, remark, ok = s.Authenticate(req)
	require.True(t, ok, remark)
	n := 0
	for _, kv := range req.Ext {
		if kv.Key == KeySignature {
			n++
		}
	}
	require.Equal(t, 1, n)

	_, ok, err = ParseCredentials(" ")
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = ParseCredentials("{broken")
	require.Error(t, err)
}
