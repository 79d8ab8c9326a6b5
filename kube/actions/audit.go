package actions

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// AuditRecord is one line of the audit log.
type AuditRecord struct {
	Time    time.Time `json:"time"`
	Actor   string    `json:"actor"`
	Context string    `json:"context,omitempty"`
	Action  Action    `json:"action"`
	Object  ObjectRef `json:"object"`
	// Details is the plan (the same JSON as Result.Plan).
	Details    Plan    `json:"details,omitempty"`
	Outcome    Outcome `json:"outcome"`
	Error      string  `json:"error,omitempty"`
	Attempts   int     `json:"attempts,omitempty"`
	EventError string  `json:"eventError,omitempty"`
}

// DefaultAuditLogPath is $XDG_STATE_HOME/raydar/audit.log, or
// ~/.local/state/raydar/audit.log when XDG_STATE_HOME is unset.
func DefaultAuditLogPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "raydar", "audit.log"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("actions: audit log: no XDG_STATE_HOME and no home directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "raydar", "audit.log"), nil
}

// auditLog appends JSON lines to a file, opened per line so that rotation
// and several raydar processes work. Each line is one write(2) on an
// O_APPEND file, so concurrent lines do not interleave.
type auditLog struct {
	path string
	mu   sync.Mutex
}

// open opens (and creates) the log file for appending.
func (l *auditLog) open() (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}

// check makes sure a line can be appended, before a mutation is attempted.
func (l *auditLog) check() error {
	f, err := l.open()
	if err != nil {
		return err
	}
	return f.Close()
}

// append writes the record of r.
func (l *auditLog) append(r *Result) error {
	rec := AuditRecord{
		Time: r.Time, Actor: r.Actor, Context: r.Context, Action: r.Action, Object: r.Object,
		Details: r.Plan, Outcome: r.Outcome, Error: r.Error, Attempts: r.Attempts, EventError: r.EventError,
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := l.open()
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	_, werr := f.Write(line)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("audit log %s: %w", l.path, err)
	}
	return nil
}
