package actions

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

const (
	eventTypeNormal = corev1.EventTypeNormal
	// maxEventNote is the API server's limit on events.k8s.io/v1 note.
	maxEventNote = 1024
	// maxReportingInstance is the API server's limit on reportingInstance.
	maxReportingInstance = 128
)

// EventRecorder records the Event of an applied action on the object it
// changed. Record is synchronous: when it returns nil the Event exists, so a
// CLI process may exit right after.
type EventRecorder interface {
	Record(ctx context.Context, regarding client.Object, eventType, reason, action, note string) error
}

// APIRecorder writes events.k8s.io/v1 Events with reportingController
// rayv1.AuditEventSource through a controller-runtime client.
type APIRecorder struct {
	c     client.Client
	clock clock.PassiveClock
	// Instance is the reportingInstance: "raydar@<hostname>".
	Instance string
}

// NewAPIRecorder returns an APIRecorder writing through c.
func NewAPIRecorder(c client.Client, clk clock.PassiveClock) *APIRecorder {
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	inst := "raydar@" + host
	if len(inst) > maxReportingInstance {
		inst = inst[:maxReportingInstance]
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &APIRecorder{c: c, clock: clk, Instance: inst}
}

// Record creates the Event.
func (r *APIRecorder) Record(ctx context.Context, regarding client.Object, eventType, reason, action, note string) error {
	gvk, err := apiutil.GVKForObject(regarding, r.c.Scheme())
	if err != nil {
		return err
	}
	if len(note) > maxEventNote {
		note = note[:maxEventNote-3] + "..."
	}
	now := r.clock.Now()
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x%s", regarding.GetName(), now.UnixNano(), utilrand.String(4)),
			Namespace: regarding.GetNamespace(),
		},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: rayv1.AuditEventSource,
		ReportingInstance:   r.Instance,
		Action:              action,
		Reason:              reason,
		Regarding: corev1.ObjectReference{
			APIVersion:      gvk.GroupVersion().String(),
			Kind:            gvk.Kind,
			Namespace:       regarding.GetNamespace(),
			Name:            regarding.GetName(),
			UID:             regarding.GetUID(),
			ResourceVersion: regarding.GetResourceVersion(),
		},
		Note: note,
		Type: eventType,
	}
	return r.c.Create(ctx, ev)
}
