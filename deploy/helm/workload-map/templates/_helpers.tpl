{{/* Object name: <namePrefix>-<part>. */}}
{{- define "wmap.name" -}}
{{- printf "%s-%s" .root.Values.namePrefix .part | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "wmap.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* Labels of every object: selector labels of the part plus Helm's. */}}
{{- define "wmap.labels" -}}
app.kubernetes.io/name: {{ include "wmap.name" . }}
app.kubernetes.io/part-of: workload-map
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "wmap.podLabels" -}}
app.kubernetes.io/name: {{ include "wmap.name" . }}
app.kubernetes.io/part-of: workload-map
{{- end -}}

{{/* policy/v1 from Kubernetes 1.21; policy/v1beta1 before (the server's own API list decides
     when installing; the kube version when only templating). */}}
{{- define "wmap.pdbApiVersion" -}}
{{- if and (.Capabilities.APIVersions.Has "policy/v1") (semverCompare ">=1.21-0" .Capabilities.KubeVersion.Version) -}}
policy/v1
{{- else -}}
policy/v1beta1
{{- end -}}
{{- end -}}

{{/* nodeSelector, tolerations, affinity and pull secrets of a component's pod spec. */}}
{{- define "wmap.scheduling" -}}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "wmap.webhookCerts" -}}
{{- if and .Values.operator.enabled .Values.operator.webhooks.enabled -}}
{{- .Values.operator.webhooks.certificates -}}
{{- else -}}
none
{{- end -}}
{{- end -}}
