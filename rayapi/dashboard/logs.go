package dashboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// MaxLogRead bounds what ReadLog returns.
const MaxLogRead = 8 << 20

// LogNode names a Ray node by ID or by IP (the ID wins when both are set).
type LogNode struct {
	ID string `json:"id,omitempty"`
	IP string `json:"ip,omitempty"`
}

func (n LogNode) query(q url.Values) {
	if n.ID != "" {
		q.Set("node_id", n.ID)
	} else if n.IP != "" {
		q.Set("node_ip", n.IP)
	}
}

// String is "node ID", or "node IP" without an ID.
func (n LogNode) String() string {
	if n.ID != "" {
		return "node " + n.ID
	}
	return "node " + n.IP
}

// LogRequest names one log file: a node and a file name, or a job's driver
// log by SubmissionID (Ray finds its node), or an actor's or task's worker
// log.
type LogRequest struct {
	Node         LogNode
	Filename     string
	SubmissionID string
	ActorID      string
	TaskID       string
	// Lines is how many lines from the end to start with (0: Ray's
	// default, DefaultLogLines; -1: the whole file).
	Lines int
	// Suffix picks a worker's "out" (default) or "err" when the file is
	// named by actor or task.
	Suffix string
}

func (r LogRequest) validate() error {
	switch {
	case r.SubmissionID != "", r.ActorID != "", r.TaskID != "":
		return nil
	case r.Filename == "":
		return errors.New("dashboard: a log request needs a file name, a submission_id, an actor_id or a task_id")
	case r.Node.ID == "" && r.Node.IP == "":
		return fmt.Errorf("dashboard: log file %s: no node ID or IP", r.Filename)
	}
	return nil
}

func (r LogRequest) query() url.Values {
	q := url.Values{"format": {"text"}}
	r.Node.query(q)
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("filename", r.Filename)
	set("submission_id", r.SubmissionID)
	set("actor_id", r.ActorID)
	set("task_id", r.TaskID)
	set("suffix", r.Suffix)
	if r.Lines != 0 {
		q.Set("lines", strconv.Itoa(r.Lines))
	}
	return q
}

// What names the file for messages.
func (r LogRequest) What() string {
	switch {
	case r.SubmissionID != "":
		return "the driver log of job " + r.SubmissionID
	case r.ActorID != "":
		return "the log of actor " + r.ActorID
	case r.TaskID != "":
		return "the log of task " + r.TaskID
	}
	return r.Filename + " on " + r.Node.String()
}

// LogError is Ray's in-band refusal of a log request (the answer is 200
// with "[get_logs] Fetch log error: …"). It matches ErrNotFound when Ray
// could not find the file, node or job.
type LogError struct {
	What string // the file asked for (LogRequest.What)
	Msg  string // Ray's reason
	kind error
}

// Error is what was asked for and Ray's reason.
func (e *LogError) Error() string {
	return "dashboard: " + e.What + ": " + summarizeBody(e.Msg)
}

// Unwrap returns ErrNotFound when the file is not there.
func (e *LogError) Unwrap() error { return e.kind }

func newLogError(what, msg string) *LogError {
	e := &LogError{What: what, Msg: strings.TrimSpace(msg)}
	low := strings.ToLower(msg)
	for _, s := range []string{"not found", "could not find", "cannot find", "no such file", "filenotfounderror"} {
		if strings.Contains(low, s) {
			e.kind = ErrNotFound
			break
		}
	}
	return e
}

// ListLogs lists a node's log files matching glob ("" is "*": the top of
// the log directory; "serve/*" lists inside serve/).
func (c *Client) ListLogs(ctx context.Context, node LogNode, glob string) (LogFiles, error) {
	if node.ID == "" && node.IP == "" {
		return nil, errors.New("dashboard: listing logs needs a node ID or IP")
	}
	q := url.Values{}
	node.query(q)
	if glob != "" {
		q.Set("glob", glob)
	}
	var resp RestResponse[StateData[LogFiles]]
	if err := c.callJSON(ctx, http.MethodGet, LogsPath, q, nil, &resp); err != nil {
		var he *HTTPError
		if errors.As(err, &he) && strings.Contains(he.Body, NodeIPNotFoundText) {
			return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		return nil, err
	}
	if !resp.Result {
		e := fmt.Errorf("dashboard: GET %s (%s): Ray answered result=false: %s", LogsPath, node, summarizeBody(resp.Msg))
		if strings.Contains(resp.Msg, NodeIPNotFoundText) {
			return nil, fmt.Errorf("%w: %w", ErrNotFound, e)
		}
		return nil, e
	}
	out := LogFiles{}
	if resp.Data.Result != nil {
		out = *resp.Data.Result
	}
	return out, nil
}

// ListAllLogs lists the top of a node's log directory and the files inside
// each directory it holds (serve/, …; at most maxDirs of them).
func (c *Client) ListAllLogs(ctx context.Context, node LogNode) (LogFiles, error) {
	const maxDirs = 8
	top, err := c.ListLogs(ctx, node, "")
	if err != nil {
		return nil, err
	}
	dirs := top.Dirs()
	if len(dirs) > maxDirs {
		dirs = dirs[:maxDirs]
	}
	for _, d := range dirs {
		sub, err := c.ListLogs(ctx, node, d+"*")
		if err != nil {
			return nil, err
		}
		top.Merge(sub)
	}
	return top, nil
}

// ReadLog returns the last r.Lines lines of a log file (at most
// MaxLogRead bytes: the end is kept).
func (c *Client) ReadLog(ctx context.Context, r LogRequest) (string, error) {
	if err := r.validate(); err != nil {
		return "", err
	}
	data, err := c.call(ctx, http.MethodGet, LogFilePath, r.query(), nil)
	if err != nil {
		return "", c.logHTTPError(r, err)
	}
	if bytes.HasPrefix(data, []byte(LogFetchErrorPrefix)) {
		return "", newLogError(r.What(), string(data[len(LogFetchErrorPrefix):]))
	}
	if len(data) > MaxLogRead {
		data = data[len(data)-MaxLogRead:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return string(data), nil
}

// StreamLog opens a log file for following: the last r.Lines lines, then
// what is appended, until ctx ends or the body is closed. The per-call
// timeout bounds the wait for the answer's headers only. Ray's refusal is
// the reader's error (a *LogError) on the first Read.
func (c *Client) StreamLog(ctx context.Context, r LogRequest) (io.ReadCloser, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	streamCtx, cancel := context.WithCancel(ctx)
	var fired atomic.Bool
	var timer *time.Timer
	if c.timeout > 0 {
		timer = time.AfterFunc(c.timeout, func() { fired.Store(true); cancel() })
	}
	req, err := http.NewRequestWithContext(streamCtx, http.MethodGet, c.base+LogStreamPath+"?"+r.query().Encode(), nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("dashboard: GET %s: %w", LogStreamPath, err)
	}
	req.Header.Set("Accept", "text/plain")
	req.Header.Set("User-Agent", "raydar")
	if c.token != "" {
		req.Header.Set(AuthHeader, "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if timer != nil {
		timer.Stop()
	}
	if fired.Load() && ctx.Err() == nil {
		if err == nil {
			resp.Body.Close()
		}
		cancel()
		return nil, fmt.Errorf("dashboard: GET %s: %w: no answer within %s: %w", LogStreamPath, ErrUnavailable, c.timeout, context.DeadlineExceeded)
	}
	if err != nil {
		cancel()
		return nil, c.transportError(ctx, streamCtx, http.MethodGet, LogStreamPath, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		cancel()
		return nil, c.logHTTPError(r, newHTTPError(http.MethodGet, LogStreamPath, resp.StatusCode, string(data)))
	}
	return &logStream{body: resp.Body, cancel: cancel, what: r.What()}, nil
}

// logHTTPError adds which file to an HTTP failure.
func (c *Client) logHTTPError(r LogRequest, err error) error {
	return fmt.Errorf("%s: %w", r.What(), err)
}

// logStream is a followed log's body: it turns Ray's in-band refusal at
// the start of the stream into an error.
type logStream struct {
	body    io.ReadCloser
	cancel  context.CancelFunc
	what    string
	head    []byte // the start, held back until it is known not to be an error
	checked bool   // the start is not Ray's refusal
	err     error  // the end (io.EOF, a read error or the refusal)
}

func (s *logStream) Read(p []byte) (int, error) {
	pre := []byte(LogFetchErrorPrefix)
	for !s.checked && s.err == nil {
		buf := make([]byte, 4096)
		n, err := s.body.Read(buf)
		s.head = append(s.head, buf[:n]...)
		k := min(len(s.head), len(pre))
		switch {
		case !bytes.Equal(s.head[:k], pre[:k]):
			s.checked = true
		case len(s.head) >= len(pre):
			rest, _ := io.ReadAll(io.LimitReader(s.body, maxErrorBody))
			s.err = newLogError(s.what, string(s.head[len(pre):])+string(rest))
			s.head = nil
			return 0, s.err
		}
		if err != nil {
			s.checked, s.err = true, err
		}
	}
	if len(s.head) > 0 {
		n := copy(p, s.head)
		s.head = s.head[n:]
		return n, nil
	}
	if s.err != nil {
		return 0, s.err
	}
	return s.body.Read(p)
}

func (s *logStream) Close() error {
	s.cancel()
	return s.body.Close()
}
