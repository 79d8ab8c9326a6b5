package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/raydar/raydar/kube"
	"github.com/raydar/raydar/kube/history"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// TestHeadlessDemoRecordsHistory: `raydar demo --headless` (runHeadless)
// records what its session sees into the history file, as the interactive
// demo and raydar operator do: a RayCluster created while it runs is in
// the file, readable beside it, and the headless run ends cleanly.
func TestHeadlessDemoRecordsHistory(t *testing.T) {
	ctx := needSandbox(t)
	ns := newNamespace(t, ctx)
	target, err := (&kube.Flags{Kubeconfig: sb.KubeconfigPath}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), history.FileName)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runHeadless(runCtx, target, sessionConfig{logger: logr.Discard()}, file, func(where string) { ready <- where })
	}()
	select {
	case where := <-ready:
		if want := "recording history into " + file; where != want {
			t.Fatalf("headless demo says %q, want %q", where, want)
		}
	case err := <-done:
		t.Fatalf("headless demo ended before it ran: %v", err)
	case <-ctx.Done():
		t.Fatal("the headless demo did not start")
	}

	// The session records what changes once its cache has synced (what
	// was there before it looked is not news, as with the demo's seeded
	// clusters): scale the cluster until the file has a change of it.
	create(t, ctx, testCluster(ns, "demo-hist"))
	ref := history.Ref{Server: target.Server, Kind: rayv1.KindRayCluster, Namespace: ns, Name: "demo-hist"}
	var got []string
	deadline := time.Now().Add(90 * time.Second)
	for replicas := int32(3); ; replicas = 5 - replicas { // 3, 2, 3, ...
		rc := getCluster(t, ctx, ns, "demo-hist")
		base := rc.DeepCopy()
		rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(replicas)
		if err := cl.Patch(ctx, rc, client.MergeFrom(base)); err != nil {
			t.Fatal(err)
		}
		pollPause(ctx)
		got = got[:0]
		if s, err := history.OpenReader(file); err == nil {
			entries, err := s.Query(ref, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				got = append(got, e.What+" "+e.Subject+" "+e.From+"→"+e.To)
			}
		}
		if slices.ContainsFunc(got, func(e string) bool { return strings.HasPrefix(e, history.WhatReplicas+" cpu ") }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the history file %s never had a replica change of %s/demo-hist; it had %q", file, ns, got)
		}
	}

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("headless demo: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the headless demo did not end when its context did")
	}
}
