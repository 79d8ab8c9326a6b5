package dashboard

import (
	"context"
	"errors"
	"testing"
)

func TestGetVersion(t *testing.T) {
	f := newFake(t)
	// As Ray 2.x answers.
	f.on("GET", "/api/version", 200, `{"version":"4","ray_version":"2.52.0","ray_commit":"0c1a2b3","session_name":"session_2026-12-01_10-00-00_000000_1"}`)
	v, err := f.client().GetVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := VersionInfo{Version: "4", RayVersion: "2.52.0", RayCommit: "0c1a2b3", SessionName: "session_2026-12-01_10-00-00_000000_1"}
	if *v != want {
		t.Errorf("GetVersion = %+v, want %+v", *v, want)
	}
	f.on("GET", "/api/version", 503, "starting")
	if _, err := f.client().GetVersion(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("GetVersion on 503 = %v, want ErrUnavailable", err)
	}
}
