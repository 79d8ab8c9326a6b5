package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// LastAppliedAnnotation is kubectl's copy of the object as last applied.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Redacted is what replaces a secret value of n bytes.
func Redacted(n int) string { return fmt.Sprintf("<redacted %d bytes>", n) }

// Object returns obj's JSON form with every secret redacted.
func Object(obj runtime.Object) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	return Map(m), nil
}

// Map returns a redacted deep copy of an object's JSON form (as decoded by
// encoding/json or the unstructured converter).
func Map(obj map[string]any) map[string]any {
	out, _ := walk(runtime.DeepCopyJSONValue(obj), "").(map[string]any)
	if out == nil {
		return nil
	}
	if isSecret(out) {
		for _, f := range []string{"data", "stringData"} {
			if d, ok := out[f].(map[string]any); ok {
				for k, v := range d {
					d[k] = Redacted(secretLen(f, v))
				}
			}
		}
	}
	if md, ok := out["metadata"].(map[string]any); ok {
		if an, ok := md["annotations"].(map[string]any); ok {
			if s, ok := an[LastAppliedAnnotation].(string); ok {
				an[LastAppliedAnnotation] = lastApplied(s)
			}
		}
	}
	return out
}

// Annotations returns a copy of an annotation map with the last-applied
// configuration redacted.
func Annotations(an map[string]string) map[string]string {
	if an == nil {
		return nil
	}
	out := make(map[string]string, len(an))
	for k, v := range an {
		if k == LastAppliedAnnotation {
			v = lastApplied(v)
		}
		out[k] = v
	}
	return out
}

// lastApplied redacts the object kubectl stored as JSON; what does not
// parse as an object is redacted whole.
func lastApplied(s string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return Redacted(len(s))
	}
	var b strings.Builder
	enc := json.NewEncoder(&b) // ends with a newline, as kubectl's does
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Map(m)); err != nil {
		return Redacted(len(s))
	}
	return b.String()
}

func isSecret(m map[string]any) bool {
	return m["kind"] == "Secret" && m["apiVersion"] == "v1"
}

// secretLen is the length of a Secret's value: data is base64.
func secretLen(field string, v any) int {
	s, _ := v.(string)
	if field == "data" {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			return len(b)
		}
	}
	return len(s)
}

// walk redacts, in place, the tree below v, reached by the field key.
func walk(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = walk(c, k)
		}
		if key == "rayStartParams" {
			for k, c := range x {
				if s, ok := c.(string); ok && SecretName(k) && !isReference(s) {
					x[k] = Redacted(len(s))
				}
			}
		}
		return x
	case []any:
		for i, c := range x {
			x[i] = walk(c, key)
		}
		switch key {
		case "env":
			for _, c := range x {
				redactEnvVar(c)
			}
		case "command", "args":
			redactFlags(x)
		}
		return x
	case string:
		switch key {
		case "entrypoint":
			return Flags(x)
		case "runtimeEnvYAML", "serveConfigV2":
			return YAMLValues(x)
		}
		return x
	}
	return v
}

// redactEnvVar redacts the literal value of a {name, value} entry.
func redactEnvVar(v any) {
	e, ok := v.(map[string]any)
	if !ok {
		return
	}
	name, _ := e["name"].(string)
	val, ok := e["value"].(string)
	if ok && SecretName(name) && !isReference(val) {
		e["value"] = Redacted(len(val))
	}
}

// redactFlags redacts secret flags' values in a command or args list:
// "--redis-password=x", "--redis-password", "x", and such flags inside a
// shell string ("ray start --head --redis-password=x").
func redactFlags(xs []any) {
	for i, c := range xs {
		s, ok := c.(string)
		if !ok {
			continue
		}
		if flagName(s) != "" && SecretName(flagName(s)) && i+1 < len(xs) {
			if v, ok := xs[i+1].(string); ok && !strings.HasPrefix(v, "-") && !isReference(v) {
				xs[i+1] = Redacted(len(v))
				continue
			}
		}
		xs[i] = Flags(s)
	}
}

// flagName is the name of s if s is a whole flag without a value ("--x").
func flagName(s string) string {
	if !strings.HasPrefix(s, "--") || strings.ContainsAny(s, "= \t") {
		return ""
	}
	return strings.TrimPrefix(s, "--")
}

// flagValue matches "--name=value" and "--name value" inside a string.
var flagValue = regexp.MustCompile(`(--([A-Za-z0-9_.-]+))(=|[ \t]+)('[^']*'|"[^"]*"|[^\s'"-][^\s'"]*)`)

// Flags redacts the values of secret flags inside a command line
// ("ray start --redis-password=x", "python run.py --token x").
func Flags(s string) string {
	return flagValue.ReplaceAllStringFunc(s, func(m string) string {
		sub := flagValue.FindStringSubmatch(m)
		name, sep, val := sub[2], sub[3], sub[4]
		if !SecretName(name) || isReference(strings.Trim(val, `'"`)) {
			return m
		}
		return sub[1] + sep + Redacted(len(strings.Trim(val, `'"`)))
	})
}

// yamlEntry matches one "KEY: value" entry of a YAML mapping inside a
// text, in block style ("  HF_TOKEN: x", "- KEY: x") or flow style
// ("{HF_TOKEN: x, B: y}"), the key and the value optionally quoted. The
// groups: 1 up to the value, 2 the key (without quotes), 3 the value. A
// key whose value is on the next lines (a nested mapping, a block scalar)
// does not match.
var yamlEntry = regexp.MustCompile(`(?m)((?:^|[{,])[ \t]*(?:-[ \t]+)?["']?([A-Za-z_][A-Za-z0-9_.-]*)["']?[ \t]*:[ \t]+)("[^"\n]*"|'[^'\n]*'|[^\s,}#|>{\[][^,}\n#]*)`)

// YAMLValues redacts, in a YAML document kept as a string (a RayJob's
// runtimeEnvYAML, a RayService's serveConfigV2), the value of every entry
// whose key names a secret ([SecretName]): runtime_env env_vars such as
// RAY_AUTH_TOKEN or HF_TOKEN. The text is otherwise kept as written.
func YAMLValues(s string) string {
	return yamlEntry.ReplaceAllStringFunc(s, func(m string) string {
		sub := yamlEntry.FindStringSubmatch(m)
		val := strings.TrimRight(sub[3], " \t")
		bare := strings.Trim(val, `"'`)
		if !SecretName(sub[2]) || bare == "" || isReference(bare) {
			return m
		}
		return sub[1] + Redacted(len(bare)) + sub[3][len(val):]
	})
}

// reference matches a value that only names another variable.
var reference = regexp.MustCompile(`^\$(\{[A-Za-z_][A-Za-z0-9_]*\}|\([A-Za-z_][A-Za-z0-9_]*\)|[A-Za-z_][A-Za-z0-9_]*)$`)

func isReference(s string) bool { return reference.MatchString(s) }

// SecretName reports whether an env variable, parameter or flag name names
// a secret (see the package doc).
func SecretName(name string) bool {
	parts := strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	for _, p := range parts {
		if p == "ENABLE" || p == "DISABLE" {
			// A switch about a secret (RAY_ENABLE_K8S_TOKEN_AUTH: "true"),
			// not a secret: its value is shown.
			return false
		}
	}
	for _, p := range parts {
		switch p {
		case "PASSWORD", "PASSWD", "TOKEN", "SECRET", "KEY", "APIKEY", "CREDENTIALS":
			return true
		}
		for _, suf := range []string{"PASSWORD", "TOKEN", "SECRET"} {
			if strings.HasSuffix(p, suf) {
				return true
			}
		}
	}
	return false
}

// credentialHeader matches a credential header, cookie or field echoed in
// free text, and its value: "Authorization: Bearer x",
// "x-ray-authorization: Bearer x" (Ray's header, rayapi/dashboard), a Go
// http.Header printed with %v ("X-Ray-Authorization:[Bearer x]"), a JSON
// or Python dict entry ("'authorization': 'Bearer x'"), Ray's
// browser cookie "ray-authentication-token=x", any Cookie header. The groups: 1 the name and
// separator up to the value, 2 a scheme word (Bearer, Basic, Token), 3 the
// value.
var credentialHeader = regexp.MustCompile(`(?i)(\b(?:[a-z0-9-]*authorization|ray-authentication-token|cookie)\b["']?\s*[:=]\s*\[?["']?)((?:bearer|basic|token)\s+)?([^\s"',;\]}\\]+)`)

// Text redacts free text that may echo a credential (an error message, an
// HTTP answer's body, a log line): every occurrence of each of secrets
// (the values the caller knows it sent, such as the Ray auth token; empty
// ones are skipped), and the value of every credential header echoed in
// it (see credentialHeader), each as [Redacted].
func Text(s string, secrets ...string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, Redacted(len(sec)))
		}
	}
	return credentialHeader.ReplaceAllStringFunc(s, func(m string) string {
		sub := credentialHeader.FindStringSubmatch(m)
		if strings.HasPrefix(sub[3], "<redacted") {
			return m
		}
		return sub[1] + sub[2] + Redacted(len(sub[3]))
	})
}
