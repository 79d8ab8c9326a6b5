package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/history"
)

// startRecording is a TUI session (observing, no loop) recording into the
// history file under XDG_STATE_HOME, as `raydar` does; stop ends both, as
// quitting raydar does.
func startRecording(t *testing.T, ctx context.Context) (stop func()) {
	t.Helper()
	target, err := (&kube.Flags{Kubeconfig: sb.KubeconfigPath}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	store := history.OpenOrMemory(history.DefaultPathOrEmpty(), logr.Discard())
	if store.Note() != "" {
		t.Fatalf("history store: %s", store.Note())
	}
	s, err := connect(ctx, target, sessionConfig{logger: logr.Discard(), history: store})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for !s.src.Synced() {
		if time.Now().After(deadline) {
			t.Fatal("the session's cache did not sync")
		}
		pollPause(ctx)
	}
	return func() {
		s.Close()
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	}
}

// The "done when": a cluster scaled through raydar (kube/actions)
// and by a kubectl-like client shows both changes with their authors in
// raydar history, and still does after raydar restarts.
func TestHistoryAuthorsSurviveRestart(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	stop := startRecording(t, ctx)

	create(t, ctx, testCluster(ns, "hist"))
	if r := raydar(t, "", "-n", ns, "scale", "hist", "cpu", "--replicas", "4", "--yes"); r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	rc := getCluster(t, ctx, ns, "hist")
	base := rc.DeepCopy()
	rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3)
	if err := cl.Patch(ctx, rc, client.MergeFrom(base), client.FieldOwner("kubectl-patch")); err != nil {
		t.Fatal(err)
	}

	byRaydar := []string{"worker group cpu: replicas 2 → 4", "raydar-sandbox-admin via raydar"}
	byKubectl := []string{"worker group cpu: replicas 4 → 3", "kubectl (kubectl-patch)"}
	wantBoth := func(out string) bool { return hasLine(out, byRaydar...) && hasLine(out, byKubectl...) }
	var out string
	deadline := time.Now().Add(90 * time.Second)
	for {
		r := raydar(t, "", "-n", ns, "history", "cluster", "hist")
		if r.err != nil {
			t.Fatalf("%v\n%s", r.err, r.stderr)
		}
		if out = r.stdout; wantBoth(out) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("raydar history never showed both scalings with their authors:\n%s", out)
		}
		pollPause(ctx)
	}
	t.Logf("raydar history:\n%s", out)
	if !strings.Contains(out, "this machine's record") {
		t.Errorf("the output does not say whose record it is:\n%s", out)
	}

	// Quit raydar: the file is closed; the record stays.
	stop()
	r := raydar(t, "", "-n", ns, "history", "cluster", "hist", "-o", "json")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	var js struct {
		File    string          `json:"file"`
		Entries []history.Entry `json:"entries"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &js); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if js.File != filepath.Join(state, "raydar", history.FileName) {
		t.Errorf("history file %q, want it under XDG_STATE_HOME", js.File)
	}
	authors := map[string]history.Who{}
	for _, e := range js.Entries {
		if e.What == history.WhatReplicas && e.Author != nil {
			authors[e.From+"→"+e.To] = e.Author.Who
		}
	}
	if authors["2→4"] != history.WhoRaydarUser || authors["4→3"] != history.WhoKubectl {
		t.Errorf("authors of the replica changes after quitting: %v, want 2→4 raydar-user and 4→3 kubectl\n%s", authors, r.stdout)
	}

	// Start raydar again: the earlier record is there, and new changes add to it.
	stop = startRecording(t, ctx)
	defer stop()
	if r := raydar(t, "", "-n", ns, "scale", "hist", "cpu", "--replicas", "5", "--yes"); r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	for {
		r := raydar(t, "", "-n", ns, "history", "cluster", "hist")
		if out = r.stdout; wantBoth(out) && hasLine(out, "worker group cpu: replicas 3 → 5", "via raydar") {
			break
		}
		if time.Now().After(deadline.Add(60 * time.Second)) {
			t.Fatalf("after a restart raydar history lost the record or missed the new scaling:\n%s", out)
		}
		pollPause(ctx)
	}
}

// hasLine reports whether one line of out contains every part.
func hasLine(out string, parts ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// `raydar operator` records too (pods and states of the clusters it
// reconciles), and a second raydar on the same history file runs, in
// memory, saying so, instead of hanging on the file's lock.
func TestOperatorRecordsHistory(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	file := filepath.Join(t.TempDir(), history.FileName)
	lease := "raydar-hist-" + ns
	args := []string{"operator", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--watch-namespaces", ns, "--leader-election-id", lease, "--history-file", file}
	first, _, stop := startCommand(t, args...)
	defer stop()
	waitLog := func(buf *syncBuffer, want string) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for !strings.Contains(buf.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("the operator never logged %q:\n%s", want, buf)
			}
			pollPause(ctx)
		}
	}
	waitLog(first, "recording history")
	second, _, stop2 := startCommand(t, args...)
	waitLog(second, "history kept in memory only: "+file+" is being recorded by another raydar")
	stop2()

	create(t, ctx, testCluster(ns, "rec"))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r := raydar(t, "", "-n", ns, "history", "cluster", "rec", "--history-file", file)
		if r.err != nil {
			t.Fatalf("%v\n%s", r.err, r.stderr)
		}
		if hasLine(r.stdout, "pod rec-head-", "created") && hasLine(r.stdout, "created (") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("raydar history of an operator-reconciled cluster:\n%s\noperator log:\n%s", r.stdout, first)
		}
		pollPause(ctx)
	}
}
