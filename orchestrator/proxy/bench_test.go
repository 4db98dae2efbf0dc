package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator/agent"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
)

// BenchmarkProxyOverhead: one model call on the same scripted response
// (the busy script: a trivial tool call), made directly with the model
// client as the built-in loop makes it, and through the proxy as an agent
// makes it (HTTP to the proxy, which makes the same client call, records
// it and answers). Reports p50 and p99 per call.
func BenchmarkProxyOverhead(b *testing.B) {
	s, err := scripted.New(scripted.Config{})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	client := model.New(model.Config{BaseURL: s.URL()})
	msgs := []model.Message{{Role: model.RoleSystem, Content: "sys"}, {Role: model.RoleUser, Content: "go"}}
	tools := agent.Tools(0)
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		measure(b, func() error {
			_, err := client.Chat(ctx, model.Request{Model: "busy", Messages: msgs, Tools: tools, ToolChoice: "auto", Stream: true})
			return err
		})
	})
	b.Run("proxy", func(b *testing.B) {
		p, err := New(Config{Model: client, ModelName: "busy", Transcript: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(p)
		defer hs.Close()
		p.Begin(ctx, 1, "go")
		body := []byte(`{"model":"busy","stream":true,"tool_choice":"auto","messages":[{"role":"system","content":"sys"},{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"bash","description":"run","parameters":{"type":"object","properties":{"command":{"type":"string"}}}}}]}`)
		measure(b, func() error {
			resp, err := http.Post(hs.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			_, err = io.Copy(io.Discard, resp.Body)
			return err
		})
	})
}

func measure(b *testing.B, call func() error) {
	var d []time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
}
