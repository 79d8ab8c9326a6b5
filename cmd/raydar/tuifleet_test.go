package main

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The embedded reconcile loop runs only where asked (issue 25): never on a
// context --reconcile-contexts does not list, none by default when several
// contexts are open, and a flag that would be ignored is an error.
func TestReconcileContexts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		f       tuiFlags
		open    []string
		want    []string
		wantErr string
	}{
		{name: "one context reconciles by default", open: []string{"dev"}, want: []string{"dev"}},
		{name: "--no-reconcile", f: tuiFlags{noReconcile: true}, open: []string{"dev"}},
		{name: "--readonly", f: tuiFlags{readOnly: true}, open: []string{"dev"}},
		{name: "several contexts: none by default", open: []string{"prod-us", "prod-eu", "dev"}},
		{name: "only those listed", f: tuiFlags{reconcileContexts: []string{"dev"}, reconcileSet: true}, open: []string{"prod-us", "dev"}, want: []string{"dev"}},
		{name: "one context not listed", f: tuiFlags{reconcileContexts: []string{"dev"}, reconcileSet: true}, open: []string{"prod-us"}, wantErr: `context "dev" is not open (open: prod-us)`},
		{name: "an empty list reconciles none", f: tuiFlags{reconcileSet: true}, open: []string{"dev"}},
		{name: "with --no-reconcile", f: tuiFlags{noReconcile: true, reconcileContexts: []string{"dev"}, reconcileSet: true}, open: []string{"dev"}, wantErr: "--no-reconcile"},
		{name: "with --readonly", f: tuiFlags{readOnly: true, reconcileContexts: []string{"dev"}, reconcileSet: true}, open: []string{"dev"}, wantErr: "--readonly"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.f.reconciles(tc.open)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, tc.want) {
				t.Fatalf("reconciles %v, want %v", names, tc.want)
			}
		})
	}
}

func TestFleetHealthWords(t *testing.T) {
	for err, want := range map[error]string{
		apierrors.NewUnauthorized("no"):                                         "unauthorized",
		apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil): "forbidden",
		errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"):      "connection refused",
	} {
		if got := healthWords(err); got != want {
			t.Errorf("healthWords(%v) = %q, want %q", err, got, want)
		}
	}
}
