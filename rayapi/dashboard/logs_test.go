package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// rayListLogs is an answer of Ray's list_logs as state_head.py do_reply
// writes it.
const rayListLogs = `{"result": true, "msg": "", "data": {"result": {
 "raylet": ["raylet.out", "raylet.err"], "gcs_server": ["gcs_server.out"],
 "dashboard": ["dashboard.log"], "agent": ["dashboard_agent.log", "runtime_env_agent.log"],
 "internal": ["job-driver-raysubmit_1.log", "runtime_env_setup-02000000.log", "serve/", "events/"],
 "worker_out": ["worker-aa-02000000-42.out"]}}}`

func TestListLogs(t *testing.T) {
	cases := []struct {
		name    string
		node    LogNode
		glob    string
		status  int
		body    string
		want    LogFiles
		query   string
		wantErr error
	}{
		{name: "by id", node: LogNode{ID: "abc"}, status: 200, body: rayListLogs, query: "node_id=abc",
			want: LogFiles{"raylet": {"raylet.out", "raylet.err"}, "gcs_server": {"gcs_server.out"}, "dashboard": {"dashboard.log"},
				"agent": {"dashboard_agent.log", "runtime_env_agent.log"}, "internal": {"job-driver-raysubmit_1.log", "runtime_env_setup-02000000.log", "serve/", "events/"},
				"worker_out": {"worker-aa-02000000-42.out"}}},
		{name: "by ip with glob", node: LogNode{IP: "10.0.0.7"}, glob: "serve/*", status: 200, query: "glob=serve%2F%2A&node_ip=10.0.0.7",
			body: `{"result": true, "msg": "", "data": {"result": {"internal": ["serve/controller_77.log"]}}}`,
			want: LogFiles{"internal": {"serve/controller_77.log"}}},
		{name: "unknown ip", node: LogNode{IP: "10.9.9.9"}, status: 200, query: "node_ip=10.9.9.9",
			body:    `{"result": false, "msg": "Cannot find matching node_id for a given node ip 10.9.9.9", "data": {"result": null}}`,
			wantErr: ErrNotFound},
		{name: "unknown ip as a 500", node: LogNode{IP: "10.9.9.9"}, status: 500, query: "node_ip=10.9.9.9",
			body:    `{"result": false, "msg": "Cannot find matching node_id for a given node ip 10.9.9.9", "data": {"result": null}}`,
			wantErr: ErrNotFound},
		{name: "proxy without endpoints", node: LogNode{ID: "abc"}, status: 503, query: "node_id=abc", body: "no endpoints", wantErr: ErrUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var gotQuery string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != LogsPath {
					http.NotFound(w, r)
					return
				}
				gotQuery = r.URL.RawQuery
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, _ := New(srv.URL)
			got, err := c.ListLogs(context.Background(), tc.node, tc.glob)
			if gotQuery != tc.query {
				t.Errorf("query = %q, want %q", gotQuery, tc.query)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLogGroups(t *testing.T) {
	var f LogFiles
	if err := jsonUnmarshalData(rayListLogs, &f); err != nil {
		t.Fatal(err)
	}
	f.Merge(LogFiles{"internal": {"serve/controller_77.log"}})
	var names []string
	for _, g := range f.Groups() {
		names = append(names, g.Name+":"+strings.Join(g.Files, ","))
	}
	want := []string{
		"job drivers:job-driver-raysubmit_1.log",
		"runtime env:runtime_env_agent.log,runtime_env_setup-02000000.log",
		"serve:serve/controller_77.log",
		"raylet:raylet.err,raylet.out",
		"gcs_server:gcs_server.out",
		"dashboard:dashboard.log",
		"agent:dashboard_agent.log",
		"worker_out:worker-aa-02000000-42.out",
		"directories:events/,serve/",
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
}

func TestCategorizeLogFileAsRay(t *testing.T) {
	for name, want := range map[string]string{
		"worker-aa-01-7.out": "worker_out", "worker-aa-01-7.err": "worker_err", "python-core-worker-aa_7.log": "core_worker",
		"python-core-driver-01_7.log": "driver", "raylet.out": "raylet", "gcs_server.err": "gcs_server",
		"log_monitor.log": "internal", "monitor.log": "autoscaler", "dashboard_agent.log": "agent",
		"dashboard.log": "dashboard", "job-driver-x.log": "internal", "serve/controller_1.log": "internal",
	} {
		if got := CategorizeLogFile(name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

func TestReadLog(t *testing.T) {
	cases := []struct {
		name    string
		req     LogRequest
		body    string
		status  int
		want    string
		query   string
		wantErr error
	}{
		{name: "file on node", req: LogRequest{Node: LogNode{ID: "n1"}, Filename: "raylet.out", Lines: 50}, status: 200,
			body: "a\nb\n", want: "a\nb\n", query: "filename=raylet.out&format=text&lines=50&node_id=n1"},
		{name: "driver log by submission id", req: LogRequest{SubmissionID: "raysubmit_1"}, status: 200,
			body: "hello\n", want: "hello\n", query: "format=text&submission_id=raysubmit_1"},
		{name: "missing file", req: LogRequest{Node: LogNode{IP: "10.0.0.1"}, Filename: "nope.log"}, status: 200,
			body: LogFetchErrorPrefix + "A file is not found at: /tmp/ray/session_latest/logs/nope.log", wantErr: ErrNotFound,
			query: "filename=nope.log&format=text&node_ip=10.0.0.1"},
		{name: "unauthorized", req: LogRequest{SubmissionID: "x"}, status: 401, body: "Unauthorized", wantErr: ErrUnauthorized,
			query: "format=text&submission_id=x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var gotQuery string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != LogFilePath {
					http.NotFound(w, r)
					return
				}
				gotQuery = r.URL.RawQuery
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, _ := New(srv.URL)
			got, err := c.ReadLog(context.Background(), tc.req)
			if gotQuery != tc.query {
				t.Errorf("query = %q, want %q", gotQuery, tc.query)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	c, _ := New("http://127.0.0.1:1")
	if _, err := c.ReadLog(context.Background(), LogRequest{Filename: "raylet.out"}); err == nil {
		t.Error("a file without a node was asked for")
	}
}

func TestStreamLogFollows(t *testing.T) {
	more := make(chan string)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != LogStreamPath || r.URL.Query().Get("filename") != "job-driver-j.log" {
			w.WriteHeader(200)
			io.WriteString(w, LogFetchErrorPrefix+"Could not find a log file. Please make sure the given option exists in the cluster.")
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "line 1\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case s := <-more:
				io.WriteString(w, s)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer srv.Close()
	c, _ := New(srv.URL, WithTimeout(5*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc, err := c.StreamLog(ctx, LogRequest{Node: LogNode{ID: "n"}, Filename: "job-driver-j.log"})
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(rc)
	if l, err := br.ReadString('\n'); l != "line 1\n" || err != nil {
		t.Fatalf("first line %q, %v", l, err)
	}
	more <- "line 2\n"
	if l, err := br.ReadString('\n'); l != "line 2\n" || err != nil {
		t.Fatalf("appended line %q, %v", l, err)
	}
	rc.Close()

	rc, err = c.StreamLog(ctx, LogRequest{Node: LogNode{ID: "n"}, Filename: "gone.log"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	var le *LogError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &le) || !strings.Contains(le.Error(), "gone.log") {
		t.Fatalf("refusal read as %v", err)
	}
	rc.Close()
}

func TestStreamLogUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, _ := New(url)
	if _, err := c.StreamLog(context.Background(), LogRequest{SubmissionID: "x"}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	stall := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(stall)
	c, _ = New(slow.URL, WithTimeout(50*time.Millisecond))
	if _, err := c.StreamLog(context.Background(), LogRequest{SubmissionID: "x"}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("no headers in time: err = %v, want ErrUnavailable", err)
	}
}

// jsonUnmarshalData decodes data.result of a list_logs answer.
func jsonUnmarshalData(body string, out *LogFiles) error {
	var resp RestResponse[StateData[LogFiles]]
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		return err
	}
	*out = *resp.Data.Result
	return nil
}
