package broker

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// GET_ALL_PRODUCER_INFO (mqadmin producer) lists every producer group's
// connections in ProducerTableInfo's fastjson shape.
func TestAllProducerInfo(t *testing.T) {
	tb := startBroker(t, nil)
	before := time.Now().UnixMilli()
	hb := request(codec.ReqHeartBeat)
	hb.Body = []byte(`{"clientID":"127.0.0.1@p1","producerDataSet":[{"groupName":"PG1"}],"consumerDataSet":[]}`)
	resp := tb.invoke(t, hb)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	resp = tb.invoke(t, request(codec.ReqGetAllProducerInfo))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.True(t, strings.HasPrefix(string(resp.Body), `{"data":{"PG1":[{"clientId":"127.0.0.1@p1","language":"`), string(resp.Body))
	var table struct {
		Data map[string][]struct {
			ClientID            string `json:"clientId"`
			RemoteIP            string `json:"remoteIP"`
			Language            string `json:"language"`
			Version             int32  `json:"version"`
			LastUpdateTimestamp int64  `json:"lastUpdateTimestamp"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(resp.Body, &table), string(resp.Body))
	require.Len(t, table.Data["PG1"], 1)
	p := table.Data["PG1"][0]
	require.Equal(t, "127.0.0.1@p1", p.ClientID)
	require.True(t, strings.HasPrefix(p.RemoteIP, "/127.0.0.1:"), p.RemoteIP)
	require.Equal(t, hb.Language.String(), p.Language)
	require.Equal(t, hb.Version, p.Version)
	require.GreaterOrEqual(t, p.LastUpdateTimestamp, before)
}
