// Package redact owns what of a Kubernetes object must never reach a
// screen or a log: Secret data and stringData, literal passwords and tokens
// in container env values (REDIS_PASSWORD, RAY_AUTH_TOKEN, …), Ray's
// --redis-password (and any --…password/--…token/--…secret flag) in
// rayStartParams, command, args and entrypoints, secret entries of the YAML
// kept in strings (runtime_env env_vars in a RayJob's runtimeEnvYAML and a
// RayService's serveConfigV2: [YAMLValues]), and the copies of all of
// those in the kubectl.kubernetes.io/last-applied-configuration annotation;
// and, in free text (an error, an HTTP answer's body, a log line), the
// secrets a caller knows it sent and any credential header echoed back
// ([Text]: the Ray dashboard's answers, kube/raydash).
//
// It is pure: [Map] rewrites an object's JSON form (a deep copy; the input
// is not changed), [Object] converts a typed object to that form first, and
// [Annotations] redacts an annotation map on its own. A redacted value reads
// "<redacted N bytes>", so one still sees that a value is set and how long
// it is. References are kept: an env entry with valueFrom, and values that
// only name another variable ($VAR, ${VAR}, $(VAR)), are not secrets.
//
// Which names are secret ([SecretName]): a name whose parts (split at
// anything but letters and digits) include PASSWORD, PASSWD, TOKEN, SECRET,
// KEY, APIKEY or CREDENTIALS, or a part ending in PASSWORD, TOKEN or SECRET
// (case-insensitive), unless a part is ENABLE or DISABLE (a switch about a
// secret, such as RAY_ENABLE_K8S_TOKEN_AUTH, is shown). TOKENIZERS_PARALLELISM
// and KEYCLOAK_URL are not secret; OPENAI_API_KEY, HF_TOKEN and
// AWS_SECRET_ACCESS_KEY are.
package redact
