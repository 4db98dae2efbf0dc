package model

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCountersRead: what the per-attempt /metrics bracket costs (two
// reads of a genuine llama-server /metrics body, parsed), side by side
// with its baseline, two GET /health round trips on the same server.
//
//	go test ./orchestrator/model -run '^$' -bench CountersRead -benchtime 2000x
func BenchmarkCountersRead(b *testing.B) {
	c := loadCaptureB(b, "metrics_final")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			w.Write(c)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"status":"ok"}`))
		}
	}))
	defer srv.Close()
	cl := New(Config{BaseURL: srv.URL})
	ctx := context.Background()
	b.Run("health-baseline", func(b *testing.B) {
		for range b.N {
			for range 2 {
				if err := cl.Health(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("counters", func(b *testing.B) {
		for range b.N {
			for range 2 {
				if _, err := cl.Counters(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func loadCaptureB(b *testing.B, name string) []byte {
	b.Helper()
	data, err := readCaptureFile("responses", name+".txt")
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkResponseAtSizeCap: the runner's peak heap while a 120 MB
// streamed response arrives, with the default 16 MiB cap and, as the
// baseline, without a cap (what the runner held before).
//
//	go test ./orchestrator/model -run '^$' -bench ResponseAtSizeCap -benchtime 3x
func BenchmarkResponseAtSizeCap(b *testing.B) {
	const total = 120 << 20
	piece := strings.Repeat("z", 4096)
	event := fmt.Sprintf(`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"%s"}}]}`+"\n\n", piece)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for sent := 0; sent < total; sent += len(piece) {
			if _, err := fmt.Fprint(w, event); err != nil {
				return
			}
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		cap  int64
	}{{"uncapped-baseline", -1}, {"cap-16MiB", DefaultMaxResponseBytes}} {
		b.Run(tc.name, func(b *testing.B) {
			cl := New(Config{BaseURL: srv.URL, MaxResponseBytes: tc.cap})
			var peak atomic.Uint64
			for range b.N {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base := ms.HeapInuse
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					t := time.NewTicker(2 * time.Millisecond)
					defer t.Stop()
					for {
						select {
						case <-stop:
							return
						case <-t.C:
							var m runtime.MemStats
							runtime.ReadMemStats(&m)
							if m.HeapInuse > base && m.HeapInuse-base > peak.Load() {
								peak.Store(m.HeapInuse - base)
							}
						}
					}
				}()
				resp, err := cl.Chat(context.Background(), Request{Model: "m", Stream: true})
				close(stop)
				<-done
				if err != nil {
					b.Fatal(err)
				}
				if (tc.cap > 0) != (resp.Cut != nil) {
					b.Fatalf("cut %+v with cap %d", resp.Cut, tc.cap)
				}
			}
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
		})
	}
}
