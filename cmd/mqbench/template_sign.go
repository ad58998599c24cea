package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash"
	"sort"

	"github.com/rocketgo/rocketgo/codec"
)

// sigSentinel holds the place of the Signature value in a template: 28
// characters, the length of a Base64 HMAC-SHA1.
const sigSentinel = "SIGNATURESENTINEL0123456789="

// sigTemplate signs the frames of one template without re-encoding them:
// content is what Java's AclClientRPCHook signs (the ext values sorted by
// key, Signature left out, then the body) with the same sentinels as the
// frame; each send patches it like the frame, computes the HMAC and writes
// its Base64 over the frame's placeholder. Used by one producer at a time.
type sigTemplate struct {
	content []byte
	bornAt  int
	uniqAt  []int
	keyAt   []int
	stampAt []int
	sigAt   int // the placeholder in the frame
	mac     hash.Hash
	sum     []byte
}

func newSigTemplate(f *codec.Frame, frame []byte, spec *sendSpec) (*sigTemplate, error) {
	ext := append([]codec.KV(nil), f.Ext...)
	sort.SliceStable(ext, func(i, j int) bool { return ext[i].Key < ext[j].Key })
	var content []byte
	for _, kv := range ext {
		if kv.Key != "Signature" {
			content = append(content, kv.Value...)
		}
	}
	bodyAt := len(content)
	content = append(content, f.Body...)
	s := &sigTemplate{content: content, mac: hmac.New(sha1.New, []byte(spec.SecretKey)), sum: make([]byte, 0, sha1.Size)}
	s.bornAt = bytes.Index(content[:bodyAt], []byte(bornSentinel))
	s.sigAt = bytes.Index(frame, []byte(sigSentinel))
	if s.bornAt < 0 || s.sigAt < 0 {
		return nil, fmt.Errorf("template: signature sentinels not found")
	}
	for _, at := range findAll(content, []byte(spec.UniqPrefix+uniqSentinel)) {
		s.uniqAt = append(s.uniqAt, at+len(spec.UniqPrefix))
	}
	for _, at := range findAll(content, []byte(keyPrefix+keySentinel)) {
		s.keyAt = append(s.keyAt, at+len(keyPrefix))
	}
	if spec.Size >= bodyStamped {
		for _, at := range findAll(content[bodyAt:], []byte(bodyMagic)) {
			s.stampAt = append(s.stampAt, bodyAt+at+bodyStampAt)
		}
	}
	return s, nil
}

// sign patches the content as patch did the frame and writes the
// signature into frame.
func (s *sigTemplate) sign(frame []byte, wallNanos int64, seq uint64, msgs int) {
	c := s.content
	putDecimal(c[s.bornAt:s.bornAt+13], uint64(wallNanos/1e6))
	for i, at := range s.uniqAt {
		putHex(c[at:at+16], seq*uint64(msgs+1)+uint64(i))
	}
	for i, at := range s.keyAt {
		putDecimal(c[at:at+12], (seq*uint64(msgs)+uint64(i))%1e12)
	}
	for _, at := range s.stampAt {
		binary.BigEndian.PutUint64(c[at:], uint64(wallNanos))
	}
	s.mac.Reset()
	s.mac.Write(c)
	s.sum = s.mac.Sum(s.sum[:0])
	base64.StdEncoding.Encode(frame[s.sigAt:s.sigAt+len(sigSentinel)], s.sum)
}
