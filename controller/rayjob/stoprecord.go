package rayjob

// The stop record: what a stop of the Ray job came to, kept on the RayJob
// so that a stop is sent once per request (and once for the deletion),
// also across restarts and other raydar processes. decide_stop.go decides
// what is recorded; this file only encodes and reads it.

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raydar/raydar/controller/kit"
	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// The record is the annotation rayv1.JobStopRecordAnnotationKey, a JSON
// object (an annotation, not the status: KubeRay's RayJob CRD has no
// status.conditions, and a cluster running it prunes them):
//
//	{"jobId":"<id>","request":"<value>","confirmed":true,"detail":"<words>"}
//	{"jobId":"<id>","deletion":true,"confirmed":true,"detail":"<words>"}
//	{"jobId":"<id>","request":"<value>","confirmed":false,"detail":"<words>"}
//
// For display, the condition rayv1.JobStopConditionType says the same in
// words (stopMessage):
//
//	Stop of Ray job "<id>" for request "<value>" confirmed: <detail>
//	Stop of Ray job "<id>" on deletion confirmed: <detail>
//	Stop of Ray job "<id>" for request "<value>" not confirmed yet: <detail>
//
// Records of earlier raydars are read too (parseStopMessage): an
// annotation holding those words, or, older still, the condition alone.

// StopRecord is what a stop record says: which Ray job, for which request
// (or the deletion), and whether the dashboard confirmed it.
type StopRecord struct {
	JobID     string
	Request   string // "" for a deletion
	Deletion  bool
	Confirmed bool
}

// stopRecordJSON is the annotation's encoding.
type stopRecordJSON struct {
	JobID     string `json:"jobId"`
	Request   string `json:"request,omitempty"`
	Deletion  bool   `json:"deletion,omitempty"`
	Confirmed bool   `json:"confirmed"`
	Detail    string `json:"detail,omitempty"`
}

// encodeStopRecord is the annotation value of a record.
func encodeStopRecord(r StopRecord, detail string) string {
	b, err := json.Marshal(stopRecordJSON{JobID: r.JobID, Request: r.Request, Deletion: r.Deletion, Confirmed: r.Confirmed,
		Detail: kit.Truncate(detail, 500)})
	if err != nil { // strings and bools always encode
		panic(err)
	}
	return string(b)
}

// decodeStopRecord reads an annotation value: JSON, or the words of an
// earlier raydar.
func decodeStopRecord(v string) (StopRecord, string, bool) {
	if !strings.HasPrefix(v, "{") {
		return parseStopMessage(v)
	}
	var e stopRecordJSON
	if err := json.Unmarshal([]byte(v), &e); err != nil || e.JobID == "" {
		return StopRecord{}, "", false
	}
	if e.Deletion {
		e.Request = ""
	}
	return StopRecord{JobID: e.JobID, Request: e.Request, Deletion: e.Deletion, Confirmed: e.Confirmed}, e.Detail, true
}

// stopMessage says a record and its detail in words.
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

// parseStopMessage reads the words stopMessage writes (the record of an
// earlier raydar).
func parseStopMessage(text string) (StopRecord, string, bool) {
	quoted := func(s string) (string, string, bool) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", false
		}
		v, err := strconv.Unquote(q)
		return v, s[len(q):], err == nil
	}
	var r StopRecord
	rest, ok := strings.CutPrefix(text, "Stop of Ray job ")
	if !ok {
		return StopRecord{}, "", false
	}
	if r.JobID, rest, ok = quoted(rest); !ok {
		return StopRecord{}, "", false
	}
	if after, isReq := strings.CutPrefix(rest, " for request "); isReq {
		if r.Request, rest, ok = quoted(after); !ok {
			return StopRecord{}, "", false
		}
	} else if rest, r.Deletion = strings.CutPrefix(rest, " on deletion"); !r.Deletion {
		return StopRecord{}, "", false
	}
	switch {
	case strings.HasPrefix(rest, " confirmed"):
		r.Confirmed, rest = true, rest[len(" confirmed"):]
	case strings.HasPrefix(rest, " not confirmed yet"):
		rest = rest[len(" not confirmed yet"):]
	default:
		return StopRecord{}, "", false
	}
	detail, _ := strings.CutPrefix(rest, ": ")
	return r, detail, true
}

// readStopRecord reads the stop record of a RayJob and its detail: the
// annotation, or (written by an earlier raydar) the stop condition.
func readStopRecord(j *rayv1.RayJob) (StopRecord, string, bool) {
	if v, ok := j.Annotations[rayv1.JobStopRecordAnnotationKey]; ok {
		return decodeStopRecord(v)
	}
	c := meta.FindStatusCondition(j.Status.Conditions, rayv1.JobStopConditionType)
	if c == nil {
		return StopRecord{}, "", false
	}
	r, detail, ok := parseStopMessage(c.Message)
	if !ok || r.Confirmed != (c.Status == metav1.ConditionTrue) {
		return StopRecord{}, "", false
	}
	return r, detail, true
}

// StopRecordOf reads the stop record of a RayJob.
func StopRecordOf(j *rayv1.RayJob) (StopRecord, bool) {
	r, _, ok := readStopRecord(j)
	return r, ok
}

// describeStopRecord is a RayJob's stop record in words ("" if none).
func describeStopRecord(j *rayv1.RayJob) string {
	r, detail, ok := readStopRecord(j)
	if !ok {
		return ""
	}
	return stopMessage(r, detail)
}

// setStopCondition shows a stop record, in words, in the status (for
// display; the annotation is the record).
func setStopCondition(st *rayv1.RayJobStatus, message string, confirmed, deletion bool, now time.Time) {
	c := metav1.Condition{Type: rayv1.JobStopConditionType, Status: metav1.ConditionFalse, Reason: reasonStopPending,
		Message: kit.Truncate(message, 1000), LastTransitionTime: *apiTime(now)}
	if confirmed {
		c.Status = metav1.ConditionTrue
		c.Reason = reasonStopRequested
		if deletion {
			c.Reason = "RayJobDeleted"
		}
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// showStopRecord sets the stop condition of a record.
func showStopRecord(st *rayv1.RayJobStatus, r StopRecord, detail string, now time.Time) {
	setStopCondition(st, stopMessage(r, detail), r.Confirmed, r.Deletion, now)
}

// SetStopRecord puts a stop record on a RayJob: the annotation and the
// condition.
func SetStopRecord(j *rayv1.RayJob, r StopRecord, detail string, now time.Time) {
	if j.Annotations == nil {
		j.Annotations = map[string]string{}
	}
	j.Annotations[rayv1.JobStopRecordAnnotationKey] = encodeStopRecord(r, detail)
	showStopRecord(&j.Status, r, detail, now)
}

// StopConfirmedFor reports whether a stop of Ray job id is on record as
// confirmed.
func StopConfirmedFor(j *rayv1.RayJob, id string) bool {
	r, ok := StopRecordOf(j)
	return ok && r.Confirmed && r.JobID == id
}
