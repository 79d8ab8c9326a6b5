package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	rayv1 "github.com/raydar/raydar/rayapi/v1"
)

// Describe says a RayCronJob's schedule in words, for people: "every
// minute", "at minute 30 of every hour", "every day at 02:00 Europe/Berlin",
// "every Monday to Friday at 09:00 Asia/Taipei". The time zone is named
// when the words name a clock time or a day (or "in the operator's time
// zone" without spec.timeZone). A schedule the words do not cover reads
// `cron "<schedule>"`; an invalid one gives the error, naming the field.
func Describe(spec *rayv1.RayCronJobSpec) string {
	if _, errs := rayv1.ParseCronSchedule(spec, time.UTC); len(errs) > 0 {
		return errs[0].Error()
	}
	words, zoned := describeExpr(strings.Fields(spec.Schedule))
	if !zoned {
		return words
	}
	if spec.TimeZone != nil {
		return words + " " + *spec.TimeZone
	}
	return words + " in the operator's time zone"
}

var descriptors = map[string]string{
	"@yearly":   "every year on 1 January at 00:00",
	"@annually": "every year on 1 January at 00:00",
	"@monthly":  "on day 1 of every month at 00:00",
	"@weekly":   "every Sunday at 00:00",
	"@daily":    "every day at 00:00",
	"@midnight": "every day at 00:00",
}

// describeExpr gives the words of a schedule's fields and whether they
// depend on the time zone.
func describeExpr(f []string) (string, bool) {
	expr := strings.Join(f, " ")
	fallback := fmt.Sprintf("cron %q", expr)
	if len(f) == 1 {
		if w, ok := descriptors[f[0]]; ok {
			return w, true
		}
		if f[0] == "@hourly" {
			return "at minute 0 of every hour", false
		}
		return fallback, true
	}
	if len(f) == 2 && f[0] == "@every" {
		if d, err := time.ParseDuration(f[1]); err == nil {
			return "every " + d.String(), false
		}
		return fallback, false
	}
	if len(f) != 5 {
		return fallback, true
	}
	minute, hour, dom, month, dow := f[0], f[1], f[2], f[3], f[4]
	if dom != "*" || month != "*" || dow != "*" {
		if !isNum(minute) {
			return fallback, true
		}
		hours, ok := numbers(hour, 23)
		if !ok {
			return fallback, true
		}
		days, ok := describeDays(dom, month, dow)
		if !ok {
			return fallback, true
		}
		return days + " at " + clocks(hours, minute), true
	}
	switch {
	case minute == "*" && hour == "*":
		return "every minute", false
	case strings.HasPrefix(minute, "*/") && isNum(minute[2:]) && hour == "*":
		return "every " + minute[2:] + " minutes", false
	case isNum(minute) && hour == "*":
		return "at minute " + minute + " of every hour", false
	case isNum(minute) && strings.HasPrefix(hour, "*/") && isNum(hour[2:]):
		return "at minute " + minute + " of every " + hour[2:] + " hours", true
	case isNum(minute):
		if hours, ok := numbers(hour, 23); ok {
			return "every day at " + clocks(hours, minute), true
		}
	}
	return fallback, true
}

// describeDays gives the words of the day fields: a day of the week (or a
// list or range of them), a day of every month, or a day of one month.
func describeDays(dom, month, dow string) (string, bool) {
	switch {
	case dom == "*" && month == "*":
		days, ok := weekdays(dow)
		return "every " + days, ok
	case dow != "*" || !isNum(dom):
		return "", false
	case month == "*":
		return "on day " + dom + " of every month", true
	}
	m, ok := monthName(month)
	return "every year on " + dom + " " + m, ok
}

func isNum(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil && s != "" && s[0] != '-' && s[0] != '+'
}

// numbers parses a comma-separated list of numbers up to max.
func numbers(s string, max int) ([]int, bool) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(p)
		if err != nil || !isNum(p) || n > max {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

func clocks(hours []int, minute string) string {
	m, _ := strconv.Atoi(minute)
	var out []string
	for _, h := range hours {
		out = append(out, fmt.Sprintf("%02d:%02d", h, m))
	}
	return join(out)
}

var weekdayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// weekday is a day-of-week field value (0-6 or SUN-SAT, any case).
func weekday(s string) (string, bool) {
	if isNum(s) {
		n, _ := strconv.Atoi(s)
		if n > 6 {
			return "", false
		}
		return weekdayNames[n], true
	}
	for _, w := range weekdayNames {
		if strings.EqualFold(s, w[:3]) {
			return w, true
		}
	}
	return "", false
}

// weekdays gives the words of a day-of-week field: "Monday", "Monday to
// Friday", "Monday, Wednesday and Friday".
func weekdays(s string) (string, bool) {
	var parts []string
	for _, p := range strings.Split(s, ",") {
		from, to, isRange := strings.Cut(p, "-")
		a, ok := weekday(from)
		if !ok {
			return "", false
		}
		if !isRange {
			parts = append(parts, a)
			continue
		}
		b, ok := weekday(to)
		if !ok {
			return "", false
		}
		parts = append(parts, a+" to "+b)
	}
	return join(parts), true
}

func monthName(s string) (string, bool) {
	if isNum(s) {
		n, _ := strconv.Atoi(s)
		if n < 1 || n > 12 {
			return "", false
		}
		return time.Month(n).String(), true
	}
	for m := time.January; m <= time.December; m++ {
		if strings.EqualFold(s, m.String()[:3]) {
			return m.String(), true
		}
	}
	return "", false
}

// join lists words as a person would: "a", "a and b", "a, b and c".
func join(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
