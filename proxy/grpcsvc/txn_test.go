package grpcsvc

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// Transactions: a half message committed by the producer is delivered; a
// half message left open is checked back over the producer's telemetry
// stream (RecoverOrphanedTransactionCommand), and the producer's
// server-check commit delivers it; a rolled-back one never arrives.
func TestTransactionCommitAndCheckBack(t *testing.T) {
	c := startCluster(t, func(b *broker.Config, _ *Config) {
		b.TransactionTimeOut = 300
		b.TransactionCheckInterval = 300
	})
	c.createTopic(t, "TxnT", "TRANSACTION", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pctx, cctx := as(ctx, "txn-producer"), as(ctx, "txn-consumer")
	tele, _ := c.telemetry(t, pctx, producerSettings("TxnT"))
	c.telemetry(t, cctx, consumerSettings("TG", "TxnT"))

	send := func(id string) *v2.SendResultEntry {
		m := newMessage("TxnT", id, id)
		m.SystemProperties.MessageType = v2.MessageType_TRANSACTION
		sr, err := c.cli.SendMessage(pctx, &v2.SendMessageRequest{Messages: []*v2.Message{m}})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), sr.GetStatus().GetMessage())
		require.NotEmpty(t, sr.GetEntries()[0].GetTransactionId())
		return sr.GetEntries()[0]
	}
	end := func(id, txnID string, res v2.TransactionResolution, src v2.TransactionSource) {
		er, err := c.cli.EndTransaction(pctx, &v2.EndTransactionRequest{Topic: &v2.Resource{Name: "TxnT"}, MessageId: id,
			TransactionId: txnID, Resolution: res, Source: src})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, er.GetStatus().GetCode(), er.GetStatus().GetMessage())
	}

	committed := send("TXN-COMMIT")
	end("TXN-COMMIT", committed.GetTransactionId(), v2.TransactionResolution_COMMIT, v2.TransactionSource_SOURCE_CLIENT)
	rolled := send("TXN-ROLLBACK")
	end("TXN-ROLLBACK", rolled.GetTransactionId(), v2.TransactionResolution_ROLLBACK, v2.TransactionSource_SOURCE_CLIENT)
	send("TXN-ORPHAN")

	// The broker checks the orphan back; it reaches the producer's stream.
	var check *v2.RecoverOrphanedTransactionCommand
	for check == nil {
		cmd, err := tele.Recv()
		require.NoError(t, err, "no check-back before the deadline")
		if r := cmd.GetRecoverOrphanedTransactionCommand(); r != nil && r.GetMessage().GetSystemProperties().GetMessageId() == "TXN-ORPHAN" {
			check = r
		}
	}
	require.Equal(t, "TxnT", check.GetMessage().GetTopic().GetName())
	require.Equal(t, v2.MessageType_TRANSACTION, check.GetMessage().GetSystemProperties().GetMessageType())
	end("TXN-ORPHAN", check.GetTransactionId(), v2.TransactionResolution_COMMIT, v2.TransactionSource_SOURCE_SERVER_CHECK)

	got := map[string]bool{}
	deadline := time.Now().Add(20 * time.Second)
	for !(got["TXN-COMMIT"] && got["TXN-ORPHAN"]) && time.Now().Before(deadline) {
		st, msgs := c.receive(t, cctx, "TG", "TxnT", 16, 20*time.Second, 5*time.Second)
		if st.GetCode() != v2.Code_OK {
			continue
		}
		for _, m := range msgs {
			got[m.GetSystemProperties().GetMessageId()] = true
		}
	}
	require.True(t, got["TXN-COMMIT"], "the committed message was not delivered")
	require.True(t, got["TXN-ORPHAN"], "the message committed on check-back was not delivered")
	require.False(t, got["TXN-ROLLBACK"], "a rolled-back message was delivered")

	// An unknown transaction id is INVALID_TRANSACTION_ID, as Java's
	// "cannot found transaction data".
	er, err := c.cli.EndTransaction(pctx, &v2.EndTransactionRequest{Topic: &v2.Resource{Name: "TxnT"}, MessageId: "x",
		TransactionId: "no-such-transaction", Resolution: v2.TransactionResolution_COMMIT})
	require.NoError(t, err)
	require.Equal(t, v2.Code_INVALID_TRANSACTION_ID, er.GetStatus().GetCode())
}
