package rayhead

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/raydar/raydar/rayapi/dashboard"
)

// Kubernetes token auth: Authorize decides each bearer token (headsim asks
// the API server); Token is not consulted.
func TestAuthorize(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	h, _ := startHead(t, Options{Token: "ignored", Authorize: func(_ context.Context, tok string) int {
		mu.Lock()
		asked = append(asked, tok)
		mu.Unlock()
		switch tok {
		case "writer":
			return 0
		case "reader":
			return http.StatusForbidden
		}
		return http.StatusUnauthorized
	}})
	ctx := context.Background()
	var he *dashboard.HTTPError
	for _, tc := range []struct {
		tok  string
		want int
	}{{"", 401}, {"garbage", 401}, {"reader", 403}, {"ignored", 401}, {"writer", 0}} {
		var opts []dashboard.Option
		if tc.tok != "" {
			opts = append(opts, dashboard.WithToken(tc.tok))
		}
		_, err := newClient(t, h, opts...).ListJobs(ctx)
		switch {
		case tc.want == 0 && err != nil:
			t.Errorf("token %q: %v, want allowed", tc.tok, err)
		case tc.want != 0 && (!errors.As(err, &he) || he.StatusCode != tc.want):
			t.Errorf("token %q: %v, want %d", tc.tok, err, tc.want)
		}
	}
	if err := newClient(t, h).CheckGCSHealth(ctx); err != nil {
		t.Errorf("health needs no token: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 4 || asked[0] != "garbage" {
		t.Errorf("Authorize asked about %q, want every token sent and none for a call without one", asked)
	}
}
