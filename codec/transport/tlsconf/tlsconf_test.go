package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func absent(t *testing.T) string { return filepath.Join(t.TempDir(), "absent.properties") }

func TestLoadDefaultsAsJava(t *testing.T) {
	c, err := Load(map[string]string{KeyConfigFile: absent(t)})
	require.NoError(t, err)
	require.Equal(t, Permissive, c.ServerMode)
	require.True(t, c.TestMode)
	require.False(t, c.Enable)
	require.Equal(t, ClientAuthNone, c.NeedClientAuth)
	require.Equal(t, DefaultConfigFile, Default().ConfigFile)

	tc, mode, err := c.Server()
	require.NoError(t, err)
	require.Equal(t, Permissive, mode)
	require.Len(t, tc.Certificates, 1)
	require.Equal(t, tls.RequestClientCert, tc.ClientAuth)
	leaf, err := x509.ParseCertificate(tc.Certificates[0].Certificate[0])
	require.NoError(t, err)
	require.Equal(t, x509.ECDSA, leaf.PublicKeyAlgorithm)

	ctc, on, err := c.Client()
	require.NoError(t, err)
	require.False(t, on)
	require.True(t, ctc.InsecureSkipVerify)
}

func TestParseModeAndClientAuthAsJava(t *testing.T) {
	for in, want := range map[string]Mode{"disabled": Disabled, "permissive": Permissive, "enforcing": Enforcing,
		"ENFORCING": Permissive, "": Permissive, "bogus": Permissive} {
		require.Equal(t, want, ParseMode(in), in)
	}
	for in, want := range map[string]ClientAuth{"none": ClientAuthNone, "optional": ClientAuthOptional,
		"REQUIRE": ClientAuthRequire, " Require ": ClientAuthRequire, "": ClientAuthNone, "x": ClientAuthNone} {
		require.Equal(t, want, parseClientAuth(in), in)
	}
	c, err := Load(map[string]string{KeyConfigFile: absent(t), KeyServerMode: "disabled"})
	require.NoError(t, err)
	tc, mode, err := c.Server()
	require.NoError(t, err)
	require.Nil(t, tc)
	require.Equal(t, Disabled, mode)
}

// The file overrides the system properties, except the three Java reads
// from system properties only.
func TestConfigFileOverrides(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tls.properties")
	require.NoError(t, os.WriteFile(file, []byte(
		"tls.test.mode.enable=false\n"+
			"tls.server.need.client.auth=optional\n"+
			"tls.server.mode=disabled\n"+
			"tls.enable=true\n"+
			"tls.client.authServer=TRUE\n"+
			"tls.server.certPath=/from/file\n"), 0o600))
	c, err := Load(map[string]string{KeyConfigFile: file, KeyServerMode: "enforcing", KeyTestModeEnable: "true",
		KeyServerCertPath: "/from/props", KeyServerKeyPath: "/k"})
	require.NoError(t, err)
	require.Equal(t, Enforcing, c.ServerMode) // not from the file
	require.False(t, c.Enable)                // not from the file
	require.False(t, c.TestMode)
	require.True(t, c.ClientAuthServer)
	require.Equal(t, ClientAuthOptional, c.NeedClientAuth)
	require.Equal(t, "/from/file", c.ServerCertPath)
	require.Equal(t, "/k", c.ServerKeyPath)

	_, err = Load(map[string]string{KeyConfigFile: filepath.Join(dir, "missing")})
	require.NoError(t, err, "a missing file is Java's defaults")
}

type pki struct{ cert, key string }

func writePKI(t *testing.T) pki {
	cert, err := SelfSigned()
	require.NoError(t, err)
	dir := t.TempDir()
	p := pki{filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")}
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p.cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600))
	require.NoError(t, os.WriteFile(p.key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
	return p
}

func TestServerClientAuthMatrix(t *testing.T) {
	p := writePKI(t)
	for _, tc := range []struct {
		need, authClient string
		want             tls.ClientAuthType
	}{
		{"none", "false", tls.NoClientCert},
		{"none", "true", tls.NoClientCert},
		{"optional", "false", tls.RequestClientCert},
		{"optional", "true", tls.VerifyClientCertIfGiven},
		{"require", "false", tls.RequireAnyClientCert},
		{"require", "true", tls.RequireAndVerifyClientCert},
	} {
		c, err := Load(map[string]string{KeyConfigFile: absent(t), KeyTestModeEnable: "false",
			KeyServerCertPath: p.cert, KeyServerKeyPath: p.key, KeyServerNeedClientAuth: tc.need,
			KeyServerAuthClient: tc.authClient, KeyServerTrustCertPath: p.cert})
		require.NoError(t, err)
		s, _, err := c.Server()
		require.NoError(t, err)
		require.Equal(t, tc.want, s.ClientAuth, "%s/%s", tc.need, tc.authClient)
		require.Equal(t, tc.authClient == "true", s.ClientCAs != nil)
	}
}

func TestClientVerifiesOnlyWithAuthServer(t *testing.T) {
	p := writePKI(t)
	c, err := Load(map[string]string{KeyConfigFile: absent(t), KeyTestModeEnable: "false", KeyEnable: "true",
		KeyClientAuthServer: "true", KeyClientTrustCertPath: p.cert, KeyClientCertPath: p.cert, KeyClientKeyPath: p.key})
	require.NoError(t, err)
	tc, on, err := c.Client()
	require.NoError(t, err)
	require.True(t, on)
	require.False(t, tc.InsecureSkipVerify)
	require.NotNil(t, tc.RootCAs)
	require.Len(t, tc.Certificates, 1)
	require.Equal(t, "127.0.0.1", WithServerName(tc, "127.0.0.1:9876").ServerName)
	require.Empty(t, tc.ServerName, "WithServerName copies")
}

func TestKeyErrors(t *testing.T) {
	p := writePKI(t)
	enc := filepath.Join(t.TempDir(), "enc.pem")
	require.NoError(t, os.WriteFile(enc, pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1, 2, 3}}), 0o600))
	for name, props := range map[string]map[string]string{
		"no paths":  {KeyTestModeEnable: "false"},
		"encrypted": {KeyTestModeEnable: "false", KeyServerCertPath: p.cert, KeyServerKeyPath: enc, KeyServerKeyPassword: "pw"},
		"missing":   {KeyTestModeEnable: "false", KeyServerCertPath: p.cert + ".x", KeyServerKeyPath: p.key},
		"bad trust": {KeyTestModeEnable: "false", KeyServerCertPath: p.cert, KeyServerKeyPath: p.key, KeyServerAuthClient: "true", KeyServerTrustCertPath: p.key},
	} {
		props[KeyConfigFile] = absent(t)
		c, err := Load(props)
		require.NoError(t, err)
		_, _, err = c.Server()
		require.Error(t, err, name)
	}
}

func TestListenDial(t *testing.T) {
	c := Default()
	stc, _, err := c.Server()
	require.NoError(t, err)
	ln, err := Listen("tcp", "127.0.0.1:0", stc)
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		s, err := ln.Accept()
		if err == nil {
			_, _ = s.Write([]byte("hi"))
			_ = s.Close()
		}
	}()
	ctc, _, err := c.Client()
	require.NoError(t, err)
	nc, err := Dial("tcp", ln.Addr().String(), 0, ctc)
	require.NoError(t, err)
	defer nc.Close()
	b := make([]byte, 2)
	_, err = nc.Read(b)
	require.NoError(t, err)
	require.Equal(t, "hi", string(b))
	require.True(t, IsKey("tls.server.mode"))
	require.True(t, IsKey(KeyHAEnable))
	require.False(t, IsKey("listenPort"))
}
