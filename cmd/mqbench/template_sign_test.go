package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
)

// Every patched frame of a signed template carries the signature the
// broker's auth module computes for it, in both header encodings and for
// batches.
func TestSignedTemplateVerifies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ser   codec.SerializeType
		batch int
	}{{"json", codec.SerializeJSON, 0}, {"rocketmq", codec.SerializeRocketMQ, 0}, {"batch", codec.SerializeJSON, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			tpl, err := buildSendTemplate(&sendSpec{Group: "g", Topic: "T", QueueID: 1, Size: 64, Keys: true, Batch: tc.batch,
				Serialize: tc.ser, UniqPrefix: "0123456789ABCDEF", AccessKey: "bench", SecretKey: "bench-secret"})
			require.NoError(t, err)
			for seq := uint64(0); seq < 3; seq++ {
				dst := append([]byte(nil), tpl.frame...)
				tpl.patch(dst, opaqueMin+int32(seq), 1_700_000_000_123_456_789+int64(seq)*1e6, seq)
				payload, _, err := codec.NextFrame(dst, codec.DefaultMaxFrameLength)
				require.NoError(t, err)
				var f codec.Frame
				require.NoError(t, codec.Decode(payload, &f))
				want, ok := auth.Sign(&f, "bench-secret")
				require.True(t, ok)
				require.Equal(t, want, f.Value("Signature"), "seq %d", seq)
				require.Equal(t, "bench", f.Value("AccessKey"))
			}
		})
	}
}
