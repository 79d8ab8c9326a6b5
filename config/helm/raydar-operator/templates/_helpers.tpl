{{/* The chart's name. */}}
{{- define "raydar-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The objects' name: fullnameOverride, else raydar-operator (the name
config/default gives them), prefixed by the release name unless it holds it. */}}
{{- define "raydar-operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "raydar-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "raydar-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "raydar-operator.labels" -}}
{{ include "raydar-operator.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "raydar-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "raydar-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The documents of a YAML file under files/ (symbolic links to
config/rbac), decoded. */}}
{{- define "raydar-operator.documents" -}}
{{- $docs := list -}}
{{- range regexSplit "(?m)^---\\s*$" (.root.Files.Get .file) -1 -}}
{{- $d := fromYaml . -}}
{{- if $d.kind -}}{{- $docs = append $docs $d -}}{{- end -}}
{{- end -}}
{{- toJson $docs -}}
{{- end -}}

{{/* The rules of the object of that kind in files/role.yaml
(config/rbac/role.yaml, controller-gen's output). */}}
{{- define "raydar-operator.rules" -}}
{{- $rules := list -}}
{{- range (include "raydar-operator.documents" (dict "root" .root "file" "files/role.yaml") | fromJsonArray) -}}
{{- if eq .kind $.kind -}}{{- $rules = .rules -}}{{- end -}}
{{- end -}}
{{- if not $rules -}}{{- fail (printf "files/role.yaml (config/rbac/role.yaml) has no %s" .kind) -}}{{- end -}}
{{- toYaml $rules -}}
{{- end -}}

{{/* --feature-gates=Name=true,Other=false from featureGates. */}}
{{- define "raydar-operator.featureGates" -}}
{{- $gates := list -}}
{{- range .Values.featureGates -}}
{{- $gates = append $gates (printf "%s=%t" .name .enabled) -}}
{{- end -}}
{{- if $gates -}}--feature-gates={{ join "," $gates }}{{- end -}}
{{- end -}}

{{/* The listen addresses: metrics on 8080 (off without metrics.enabled),
probes on 8081. */}}
{{- define "raydar-operator.metricsAddr" -}}
{{- if .Values.metrics.enabled -}}:8080{{- else -}}0{{- end -}}
{{- end -}}
{{- define "raydar-operator.probeAddr" -}}:8081{{- end -}}
