package rayjob

// The stop record: its encoding on the RayJob.

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Stop records. A stop's outcome is kept in the annotation
// rayv1.JobStopRecordAnnotationKey on the RayJob (and, for display, in the
// condition rayv1.JobStopConditionType), whose text names the Ray job and
// the request (the stop annotation's value) or the deletion it answered, so
// that it is carried out once per request, also across restarts:
//
//	Stop of Ray job "<id>" for request "<value>" confirmed: <detail>
//	Stop of Ray job "<id>" on deletion confirmed: <detail>
//	Stop of Ray job "<id>" for request "<value>" not confirmed yet: <detail>
//
// An annotation, not the status: KubeRay's RayJob CRD has no
// status.conditions, and a cluster running it prunes them.

// StopRecord is a parsed stop record.
type StopRecord struct {
	JobID     string
	Request   string // "" for a deletion
	Deletion  bool
	Confirmed bool
}

var stopRecordRE = regexp.MustCompile(`^Stop of Ray job ("(?:[^"\\]|\\.)*") (?:for request ("(?:[^"\\]|\\.)*")|(on deletion)) (confirmed|not confirmed yet)`)

// stopMessage renders a stop record and its detail.
func stopMessage(r StopRecord, detail string) string {
	var b strings.Builder
	b.WriteString("Stop of Ray job " + strconv.Quote(r.JobID) + " ")
	if r.Deletion {
		b.WriteString("on deletion ")
	} else {
		b.WriteString("for request " + strconv.Quote(r.Request) + " ")
	}
	if r.Confirmed {
		b.WriteString("confirmed")
	} else {
		b.WriteString("not confirmed yet")
	}
	if detail != "" {
		b.WriteString(": " + detail)
	}
	return b.String()
}

// stopRecordValue is the annotation value of a record.
func stopRecordValue(r StopRecord, detail string) string {
	return kit.Truncate(stopMessage(r, detail), 1000)
}

// parseStopRecordText parses a record's text.
func parseStopRecordText(text string) (StopRecord, bool) {
	m := stopRecordRE.FindStringSubmatch(text)
	if m == nil {
		return StopRecord{}, false
	}
	r := StopRecord{Deletion: m[3] != "", Confirmed: m[4] == "confirmed"}
	var err error
	if r.JobID, err = strconv.Unquote(m[1]); err != nil {
		return StopRecord{}, false
	}
	if !r.Deletion {
		if r.Request, err = strconv.Unquote(m[2]); err != nil {
			return StopRecord{}, false
		}
	}
	return r, true
}

// StopRecordOf reads the stop record of a RayJob: its annotation, or
// (written by an earlier raydar) its stop condition.
func StopRecordOf(j *rayv1.RayJob) (StopRecord, bool) {
	if v, ok := j.Annotations[rayv1.JobStopRecordAnnotationKey]; ok {
		return parseStopRecordText(v)
	}
	c := kit.FindCondition(j.Status.Conditions, rayv1.JobStopConditionType)
	if c == nil {
		return StopRecord{}, false
	}
	r, ok := parseStopRecordText(c.Message)
	if !ok || r.Confirmed != (c.Status == metav1.ConditionTrue) {
		return StopRecord{}, false
	}
	return r, true
}

// stopRecordText is the text of a RayJob's stop record ("" if none).
func stopRecordText(j *rayv1.RayJob) string {
	if v, ok := j.Annotations[rayv1.JobStopRecordAnnotationKey]; ok {
		return v
	}
	if c := kit.FindCondition(j.Status.Conditions, rayv1.JobStopConditionType); c != nil {
		return c.Message
	}
	return ""
}

// setStopCondition shows a stop record in the status (for display; the
// annotation is the record).
func setStopCondition(st *rayv1.RayJobStatus, value string, confirmed, deletion bool, now time.Time) {
	c := metav1.Condition{Type: rayv1.JobStopConditionType, Status: metav1.ConditionFalse, Reason: reasonStopPending, Message: value}
	if confirmed {
		c.Status = metav1.ConditionTrue
		c.Reason = reasonStopRequested
		if deletion {
			c.Reason = "RayJobDeleted"
		}
	}
	kit.SetCondition(&st.Conditions, c, now)
	if cc := kit.FindCondition(st.Conditions, rayv1.JobStopConditionType); cc != nil {
		cc.LastTransitionTime = *apiTime(cc.LastTransitionTime.Time)
	}
}

// SetStopRecord puts a stop record on a RayJob: the annotation and the
// condition.
func SetStopRecord(j *rayv1.RayJob, r StopRecord, detail string, now time.Time) {
	v := stopRecordValue(r, detail)
	if j.Annotations == nil {
		j.Annotations = map[string]string{}
	}
	j.Annotations[rayv1.JobStopRecordAnnotationKey] = v
	setStopCondition(&j.Status, v, r.Confirmed, r.Deletion, now)
}

// StopConfirmedFor reports whether a stop of Ray job id is on record as
// confirmed.
func StopConfirmedFor(j *rayv1.RayJob, id string) bool {
	r, ok := StopRecordOf(j)
	return ok && r.Confirmed && r.JobID == id
}
