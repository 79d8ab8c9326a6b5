package main

import (
	"context"

	"github.com/go-logr/logr"

	"github.com/raydar/raydar/kube/history"
)

// openHistory opens this machine's history store at path: in memory when
// path is "" or the file is held by another raydar (a clear log line says
// which). Never fails: raydar runs without a file rather than not at all.
func openHistory(path string, logger logr.Logger) *history.Store {
	if path == "" {
		return history.Memory(history.StoreOptions{}, "history kept in memory only (no history file)")
	}
	s, err := history.Open(path, history.StoreOptions{})
	if err != nil {
		s = history.Memory(history.StoreOptions{}, "history kept in memory only: "+err.Error())
	}
	if s.Note() != "" {
		logger.Info(s.Note())
	} else {
		logger.Info("recording history", "file", s.Path())
	}
	return s
}

// startRecorder records the Ray objects and pods of a cache into store;
// authors is what the cache's transform notes (history.Authors.Keep).
func startRecorder(ctx context.Context, store *history.Store, authors *history.Authors, c history.InformerSource, logger logr.Logger) (*history.Recorder, error) {
	r := history.NewRecorder(store, history.RecorderOptions{Authors: authors, Logger: logger})
	if err := r.Watch(ctx, c); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// defaultHistoryFile is history.DefaultPath, "" (in memory) without a home.
func defaultHistoryFile() string {
	p, err := history.DefaultPath()
	if err != nil {
		return ""
	}
	return p
}
