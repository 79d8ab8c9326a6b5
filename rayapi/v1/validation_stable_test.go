package v1

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestValidationOrderIsStable: the refusal condition's message is the
// errors in order, and a message that changes between two reconciles of an
// unchanged object rewrites the condition and emits another Warning Event.
// Rules that range over maps must therefore sort what they report.
func TestValidationOrderIsStable(t *testing.T) {
	bothCreds := validCluster()
	bothCreds.Spec.GcsFaultToleranceOptions = &GcsFaultToleranceOptions{
		RedisAddress:  "redis:6379",
		RedisPassword: &RedisCredential{Value: "p", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "p"}}},
		RedisUsername: &RedisCredential{Value: "u", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "u"}}},
	}
	negResources := validJob()
	negResources.Spec.EntrypointResources = `{"a": -1, "b": -2, "c": -3, "d": -4, "e": -5, "f": -6, "g": -7, "h": -8}`
	for _, c := range []struct {
		name     string
		validate func() field.ErrorList
		min      int
	}{
		{"gcsFaultToleranceOptions with both credentials set twice", func() field.ErrorList { return ValidateRayCluster(bothCreds) }, 2},
		{"negative entrypointResources", func() field.ErrorList { return ValidateRayJob(negResources) }, 8},
	} {
		first := c.validate()
		if len(first) < c.min {
			t.Fatalf("%s: %d errors, want at least %d: %v", c.name, len(first), c.min, first)
		}
		for range 50 {
			if again := c.validate(); !slices.Equal(errorTexts(first), errorTexts(again)) {
				t.Fatalf("%s: the errors changed order between two validations:\n%q\n%q", c.name, errorTexts(first), errorTexts(again))
			}
		}
	}
}

func errorTexts(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}
