package redact

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"REDIS_PASSWORD":            true,
		"RAY_AUTH_TOKEN":            true,
		"redis-password":            true,
		"AWS_SECRET_ACCESS_KEY":     true,
		"OPENAI_API_KEY":            true,
		"HF_TOKEN":                  true,
		"GITHUB_APIKEY":             true,
		"DB_PASSWD":                 true,
		"MYSQLPASSWORD":             true,
		"GCP_CREDENTIALS":           true,
		"TOKENIZERS_PARALLELISM":    false,
		"KEYCLOAK_URL":              false,
		"RAY_ENABLE_K8S_TOKEN_AUTH": false,
		"DISABLE_TOKEN_CHECK":       false,
		"RAY_ADDRESS":               false,
		"num-cpus":                  false,
		"PATH":                      false,
		"":                          false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %t, want %t", name, got, want)
		}
	}
}

func TestFlags(t *testing.T) {
	for in, want := range map[string]string{
		"ray start --head --redis-password=hunter2 --port=6379": "ray start --head --redis-password=<redacted 7 bytes> --port=6379",
		"ray start --redis-password hunter2":                    "ray start --redis-password <redacted 7 bytes>",
		"ray start --redis-password='hun ter2'":                 "ray start --redis-password=<redacted 8 bytes>",
		`python x.py --api-token "abc" --epochs 3`:              `python x.py --api-token <redacted 3 bytes> --epochs 3`,
		"ray start --redis-password=$REDIS_PASSWORD":            "ray start --redis-password=$REDIS_PASSWORD",
		"ray start --redis-password --block":                    "ray start --redis-password --block",
		"python train.py --epochs 3":                            "python train.py --epochs 3",
	} {
		if got := Flags(in); got != want {
			t.Errorf("Flags(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

func TestSecretDataAndStringData(t *testing.T) {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "redis", Namespace: "ns"},
		Data:       map[string][]byte{"password": []byte("s3cr3t-value")},
		StringData: map[string]string{"token": "tok-12345"},
	}
	m, err := Object(s)
	if err != nil {
		t.Fatal(err)
	}
	y := dump(t, m)
	for _, leak := range []string{"s3cr3t-value", "tok-12345", "czNjcjN0LXZhbHVl"} {
		if strings.Contains(y, leak) {
			t.Errorf("%q leaked:\n%s", leak, y)
		}
	}
	for _, want := range []string{"password: <redacted 12 bytes>", "token: <redacted 9 bytes>", "name: redis"} {
		if !strings.Contains(y, want) {
			t.Errorf("want %q in\n%s", want, y)
		}
	}
	if string(s.Data["password"]) != "s3cr3t-value" {
		t.Error("Object changed its input")
	}
}

// rayCluster is the JSON form of a RayCluster with a literal Redis password
// in every place KubeRay's samples put one, and the same object again in the
// last-applied annotation.
func rayCluster(t *testing.T) map[string]any {
	t.Helper()
	spec := map[string]any{
		"headGroupSpec": map[string]any{
			"rayStartParams": map[string]any{"redis-password": "hunter2", "num-cpus": "0", "dashboard-host": "0.0.0.0"},
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name":    "ray-head",
				"command": []any{"/bin/bash", "-lc", "--"},
				"args":    []any{"ulimit -n 65536; ray start --head --redis-password=hunter2 --block", "--ray-auth-token", "tok-abcdef"},
				"env": []any{
					map[string]any{"name": "REDIS_PASSWORD", "value": "hunter2"},
					map[string]any{"name": "RAY_AUTH_TOKEN", "value": "tok-abcdef"},
					map[string]any{"name": "TOKENIZERS_PARALLELISM", "value": "false"},
					map[string]any{"name": "RAY_REDIS_PASSWORD", "value": "$(REDIS_PASSWORD)"},
					map[string]any{"name": "OTHER_TOKEN", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "s", "key": "k"}}},
				},
			}}}},
		},
	}
	obj := map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster",
		"metadata": map[string]any{"name": "c", "namespace": "ns"}, "spec": spec}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	obj["metadata"].(map[string]any)["annotations"] = map[string]any{LastAppliedAnnotation: string(b), "team": "ml"}
	return obj
}

func TestRayClusterPasswordsAndTokens(t *testing.T) {
	in := rayCluster(t)
	before := dump(t, in)
	y := dump(t, Map(in))
	for _, leak := range []string{"hunter2", "tok-abcdef"} {
		if strings.Contains(y, leak) {
			t.Errorf("%q leaked:\n%s", leak, y)
		}
	}
	for _, want := range []string{
		"redis-password: <redacted 7 bytes>",
		"num-cpus: \"0\"",
		"--redis-password=<redacted 7 bytes>",
		"- <redacted 10 bytes>", // the value after "--ray-auth-token"
		"value: <redacted 10 bytes>",
		"value: \"false\"",         // TOKENIZERS_PARALLELISM is no token
		"value: $(REDIS_PASSWORD)", // a reference, not a secret
		"secretKeyRef",             // valueFrom kept
		"team: ml",
	} {
		if !strings.Contains(y, want) {
			t.Errorf("want %q in\n%s", want, y)
		}
	}
	an := Map(in)["metadata"].(map[string]any)["annotations"].(map[string]any)[LastAppliedAnnotation].(string)
	for _, want := range []string{`"redis-password":"<redacted 7 bytes>"`, `"value":"<redacted 10 bytes>"`, `"num-cpus":"0"`} {
		if !strings.Contains(an, want) {
			t.Errorf("want %s in the last-applied annotation %s", want, an)
		}
	}
	if dump(t, in) != before {
		t.Error("Map changed its input")
	}
}

func TestAnnotations(t *testing.T) {
	an := map[string]string{
		LastAppliedAnnotation: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"},"stringData":{"password":"hunter2"}}`,
		"other":               "hunter2 is not ours to judge",
	}
	got := Annotations(an)
	if strings.Contains(got[LastAppliedAnnotation], "hunter2") || !strings.Contains(got[LastAppliedAnnotation], "redacted 7 bytes") {
		t.Errorf("last-applied = %q", got[LastAppliedAnnotation])
	}
	if got["other"] != an["other"] {
		t.Errorf("other annotation changed: %q", got["other"])
	}
	if bad := Annotations(map[string]string{LastAppliedAnnotation: "not json hunter2"}); bad[LastAppliedAnnotation] != "<redacted 16 bytes>" {
		t.Errorf("unparsable last-applied = %q, want it redacted whole", bad[LastAppliedAnnotation])
	}
	if Annotations(nil) != nil {
		t.Error("Annotations(nil) != nil")
	}
}

func dump(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestText(t *testing.T) {
	const tok = "canary-0f1e2d3c4b5a"
	for in, want := range map[string]string{
		// An HTTP error body echoing the request's headers, as proxies and
		// debug servers do, in the forms they print them in.
		"x-ray-authorization: Bearer " + tok:                    "x-ray-authorization: Bearer <redacted 19 bytes>",
		"Authorization: Bearer abc.def-ghi\nAccept: */*":        "Authorization: Bearer <redacted 11 bytes>\nAccept: */*",
		`{"headers": {"X-Ray-Authorization": "Bearer sesame"}}`: `{"headers": {"X-Ray-Authorization": "Bearer <redacted 6 bytes>"}}`,
		"{'authorization': 'Basic dXNlcjpwdw=='}":               "{'authorization': 'Basic <redacted 12 bytes>'}",
		"map[Accept:[*/*] X-Ray-Authorization:[Bearer sesame]]": "map[Accept:[*/*] X-Ray-Authorization:[Bearer <redacted 6 bytes>]]",
		"Cookie: ray-authentication-token=sesame":               "Cookie: <redacted 31 bytes>",
		"proxy-authorization=sesame; next":                      "proxy-authorization=<redacted 6 bytes>; next",
		// The token the caller sent, anywhere.
		"bad token " + tok + " (403)": "bad token <redacted 19 bytes> (403)",
		// No credential: unchanged.
		"Unauthorized: missing authentication token":     "Unauthorized: missing authentication token",
		"Secret auth has no auth_token; accepts any one": "Secret auth has no auth_token; accepts any one",
	} {
		if got := Text(in, tok, ""); got != want {
			t.Errorf("Text(%q)\n got %q\nwant %q", in, got, want)
		}
	}
	if got := Text("x-ray-authorization: Bearer "+tok, tok); strings.Contains(got, tok) || strings.Count(got, "redacted") != 1 {
		t.Errorf("a known token in a header is redacted once: %q", got)
	}
}

func TestYAMLValues(t *testing.T) {
	for in, want := range map[string]string{
		"env_vars:\n  RAY_AUTH_TOKEN: tok-123\n  OMP_NUM_THREADS: \"1\"\n":                                               "env_vars:\n  RAY_AUTH_TOKEN: <redacted 7 bytes>\n  OMP_NUM_THREADS: \"1\"\n",
		"env_vars: {HF_TOKEN: \"hf_abc\", B: 'x'}":                                                                       "env_vars: {HF_TOKEN: <redacted 6 bytes>, B: 'x'}",
		"applications:\n  - name: llm\n    runtime_env:\n      env_vars:\n        'OPENAI_API_KEY': 'sk-1'  # the key\n": "applications:\n  - name: llm\n    runtime_env:\n      env_vars:\n        'OPENAI_API_KEY': <redacted 4 bytes>  # the key\n",
		"env_vars:\n  - API_KEY: k\n":                                                                                    "env_vars:\n  - API_KEY: <redacted 1 bytes>\n",
		"env_vars:\n  RAY_AUTH_TOKEN: $TOKEN\n":                                                                          "env_vars:\n  RAY_AUTH_TOKEN: $TOKEN\n",     // a reference
		"secret_config:\n  a: b\n":                                                                                       "secret_config:\n  a: b\n",                  // a nested mapping
		"pip: [torch]\nworking_dir: s3://b/key.zip":                                                                      "pip: [torch]\nworking_dir: s3://b/key.zip", // no secret key
	} {
		if got := YAMLValues(in); got != want {
			t.Errorf("YAMLValues(%q)\n got %q\nwant %q", in, got, want)
		}
	}
	// In an object: a RayJob's runtimeEnvYAML and a RayService's serveConfigV2.
	m := Map(map[string]any{"spec": map[string]any{
		"runtimeEnvYAML": "env_vars:\n  RAY_AUTH_TOKEN: tok-123\n",
		"serveConfigV2":  "applications:\n  - runtime_env: {env_vars: {HF_TOKEN: hf_1}}\n",
	}})
	b, _ := json.Marshal(m)
	if s := string(b); strings.Contains(s, "tok-123") || strings.Contains(s, "hf_1") {
		t.Errorf("a secret of a YAML field is shown: %s", s)
	}
}
