package service

import (
	"fmt"
	"maps"
	"slices"

	"github.com/raydar/raydar/rayapi/status"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
	"github.com/raydar/raydar/rayapi/why"
	"github.com/raydar/raydar/tui/format"
)

// describeFields is the RayService's part of its describe page.
func describeFields(d *format.Describer, x *rayv1.RayService) {
	s := x.Status
	d.Field("Status", format.ServiceStatus(x))
	d.Field("Suspend", fmt.Sprint(x.Spec.Suspend))
	d.Field("Active cluster", format.OrNone(s.ActiveServiceStatus.RayClusterName))
	d.Field("Pending cluster", format.OrNone(s.PendingServiceStatus.RayClusterName))
	if u, ok := status.IncrementalUpgrade(x); ok { // the detail page's Traffic line, as of the page's clock
		d.Field("Traffic", u.Words(d.Now))
	}
	d.Field("Endpoints", fmt.Sprint(s.NumServeEndpoints))
	d.Security(why.ServiceSecurity(x, nil))
	for _, side := range []struct {
		name string
		ss   rayv1.RayServiceStatus
	}{{"Active apps", s.ActiveServiceStatus}, {"Pending apps", s.PendingServiceStatus}} {
		if len(side.ss.Applications) == 0 {
			continue
		}
		d.Label(side.name)
		for _, n := range slices.Sorted(maps.Keys(side.ss.Applications)) {
			d.Sub(n + " " + format.OrNone(side.ss.Applications[n].Status))
		}
	}
	d.Conds(s.Conditions)
}
