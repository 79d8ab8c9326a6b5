package history

import (
	"context"

	"github.com/go-logr/logr"
)

// The few lines every process that records (raydar operator, the TUI
// session, raydar-operator) needs, in one place.

// OpenOrMemory opens this machine's history store at path: in memory when
// path is "" or the file is held by another raydar (a clear log line says
// which). Never fails: raydar runs without a file rather than not at all.
func OpenOrMemory(path string, logger logr.Logger) *Store {
	if path == "" {
		return Memory(StoreOptions{}, "history kept in memory only (no history file)")
	}
	s, err := Open(path, StoreOptions{})
	if err != nil {
		s = Memory(StoreOptions{}, "history kept in memory only: "+err.Error())
	}
	if s.Note() != "" {
		logger.Info(s.Note())
	} else {
		logger.Info("recording history", "file", s.Path())
	}
	return s
}

// StartRecorder records the Ray objects and pods of a cache of server's
// into store; authors is what the cache's transform notes (Authors.Keep).
func StartRecorder(ctx context.Context, store *Store, server string, authors *Authors, c InformerSource, logger logr.Logger) (*Recorder, error) {
	r := NewRecorder(store, RecorderOptions{Server: server, Authors: authors, Logger: logger})
	if err := r.Watch(ctx, c); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// DefaultPathOrEmpty is DefaultPath, "" (in memory) without a home.
func DefaultPathOrEmpty() string {
	p, err := DefaultPath()
	if err != nil {
		return ""
	}
	return p
}
