package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/raydar/raydar/rayapi/kinds"
)

// TestKindHelpOffersNamesThatWork: every name the help texts offer for a
// kind (suspend's KIND, why's and history's usage) is one raydar takes
// for that kind, and every suspendable or diagnosed kind is offered.
func TestKindHelpOffersNamesThatWork(t *testing.T) {
	word := regexp.MustCompile(`[a-z]+`)
	for _, tc := range []struct {
		help string
		ks   []*kinds.Kind
	}{
		{kindNames(suspendable()), suspendable()},
		{kindUsage(suspendable()), suspendable()},
		{wordUsage(diagnosed()), diagnosed()},
		{wordUsage(kinds.Ray), kinds.Ray},
		{viewNames(), kinds.All},
		{wordUsage(diagnosed()) + " " + orList(each(diagnosed(), singular)), diagnosed()},
		{orList(each(kinds.Ray, singular)), kinds.Ray},
	} {
		offered := map[*kinds.Kind]bool{}
		for _, w := range word.FindAllString(strings.ReplaceAll(tc.help, " or ", " "), -1) {
			k, ok := kinds.Lookup(w)
			if !ok {
				t.Errorf("%q offers %q, which raydar does not take", tc.help, w)
				continue
			}
			offered[k] = true
		}
		for _, k := range tc.ks {
			if !offered[k] {
				t.Errorf("%q does not offer %s", tc.help, k.Kind)
			}
		}
	}
	if got := kindList(suspendable()); got != "RayCluster, RayJob, RayService or RayCronJob" {
		t.Errorf("kindList(suspendable()) = %q", got)
	}
}
