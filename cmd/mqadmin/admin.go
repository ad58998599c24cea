package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// admin carries what every subcommand needs.
type admin struct {
	ns      []string
	cl      *transport.Client
	timeout time.Duration
	out     io.Writer
}

func newAdmin(nsList string, out io.Writer, timeout time.Duration) *admin {
	var ns []string
	for _, a := range strings.Split(nsList, ";") {
		if a = strings.TrimSpace(a); a != "" {
			ns = append(ns, a)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &admin{
		ns:      ns,
		cl:      transport.NewClient(transport.ClientConfig{Logger: log, DialTimeout: 3 * time.Second}),
		timeout: timeout,
		out:     out,
	}
}

func (a *admin) close() { a.cl.Close() }

func (a *admin) printf(format string, args ...any) { fmt.Fprintf(a.out, format, args...) }

// request builds a request frame with the given extFields pairs.
func request(code codec.RequestCode, kv ...string) *codec.Frame {
	f := &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			f.Ext = append(f.Ext, codec.KV{Key: kv[i], Value: kv[i+1]})
		}
	}
	return f
}

// invoke sends req to addr and returns the reply, whatever its code.
func (a *admin) invoke(addr string, req *codec.Frame) (*codec.Frame, error) {
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	defer cancel()
	resp, err := a.cl.Invoke(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("%s to %s: %w", codec.RequestCode(req.Code), addr, err)
	}
	return resp, nil
}

// call is invoke that turns a non-SUCCESS reply into an error.
func (a *admin) call(addr string, req *codec.Frame) (*codec.Frame, error) {
	resp, err := a.invoke(addr, req)
	if err != nil {
		return nil, err
	}
	if resp.Code != int32(codec.RespSuccess) {
		return resp, &respError{req: codec.RequestCode(req.Code), addr: addr, code: resp.Code, remark: resp.Remark}
	}
	return resp, nil
}

// respError is a reply with a non-SUCCESS code, printed like Java's
// MQBrokerException / MQClientException text.
type respError struct {
	req    codec.RequestCode
	addr   string
	code   int32
	remark string
}

func (e *respError) Error() string {
	return fmt.Sprintf("%s to %s: CODE: %d  DESC: %s (%s)", e.req, e.addr, e.code, e.remark, codec.ResponseCode(e.code))
}

// nsCall sends req to the name servers in turn until one answers.
func (a *admin) nsCall(req *codec.Frame) (*codec.Frame, error) {
	if len(a.ns) == 0 {
		return nil, errors.New("no name server address: use -n or NAMESRV_ADDR")
	}
	var last error
	for _, addr := range a.ns {
		r := *req
		r.Ext = append([]codec.KV(nil), req.Ext...)
		resp, err := a.call(addr, &r)
		var re *respError
		if err == nil || errors.As(err, &re) {
			return resp, err
		}
		last = err
	}
	return nil, last
}

func (a *admin) route(topic string) (body.TopicRouteData, error) {
	resp, err := a.nsCall(request(codec.ReqGetRouteinfoByTopic, "topic", topic))
	if err != nil {
		return body.TopicRouteData{}, err
	}
	r, err := body.DecodeTopicRouteData(resp.Body)
	if err != nil {
		return r, fmt.Errorf("route of %s: %w", topic, err)
	}
	sort.Slice(r.BrokerDatas, func(i, j int) bool { return r.BrokerDatas[i].BrokerName < r.BrokerDatas[j].BrokerName })
	return r, nil
}

func (a *admin) clusterInfo() (body.ClusterInfo, error) {
	resp, err := a.nsCall(request(codec.ReqGetBrokerClusterInfo))
	if err != nil {
		return body.ClusterInfo{}, err
	}
	ci, err := body.DecodeClusterInfo(resp.Body)
	if err != nil {
		return ci, fmt.Errorf("cluster info: %w", err)
	}
	sort.Slice(ci.BrokerAddrTable, func(i, j int) bool {
		return ci.BrokerAddrTable[i].BrokerName < ci.BrokerAddrTable[j].BrokerName
	})
	return ci, nil
}

// masterAddrs returns the master address of every broker of cluster.
func (a *admin) masterAddrs(cluster string) ([]string, error) {
	ci, err := a.clusterInfo()
	if err != nil {
		return nil, err
	}
	var names []string
	found := false
	for _, c := range ci.ClusterAddrTable {
		if c.Cluster == cluster {
			names, found = c.BrokerNames, true
		}
	}
	if !found {
		return nil, fmt.Errorf("cluster [%s] not found", cluster)
	}
	var out []string
	for _, bd := range ci.BrokerAddrTable {
		for _, n := range names {
			if bd.BrokerName == n {
				if addr, ok := bd.Addr(0); ok {
					out = append(out, addr)
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// targets resolves -b (one broker) or -c (every master of a cluster).
func (a *admin) targets(broker, cluster string) ([]string, error) {
	switch {
	case broker != "":
		return []string{broker}, nil
	case cluster != "":
		return a.masterAddrs(cluster)
	default:
		return nil, errors.New("need -b brokerAddr or -c clusterName")
	}
}

// masterOf returns the master address of brokerName in r.
func masterOf(r *body.TopicRouteData, brokerName string) (string, bool) {
	for i := range r.BrokerDatas {
		if r.BrokerDatas[i].BrokerName == brokerName {
			return r.BrokerDatas[i].Addr(0)
		}
	}
	return "", false
}
