package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LMEvalJob runs one lm-evaluation-harness evaluation to completion: the
// schema of upstream's trustyai.opendatahub.io/v1alpha1 LMEvalJob (field for
// field, defaults and patterns included), plus status conditions and
// observedGeneration of this operator.

// JobState is where a job is in its life.
// +kubebuilder:validation:Enum=New;Scheduled;Running;Complete;Cancelled;Suspended
type JobState string

// The states of a job, as upstream names them.
const (
	// JobStateNew: accepted, no pod yet.
	JobStateNew JobState = "New"
	// JobStateScheduled: the pod exists and waits to run.
	JobStateScheduled JobState = "Scheduled"
	// JobStateRunning: the evaluation runs.
	JobStateRunning JobState = "Running"
	// JobStateComplete: finished (reason says how).
	JobStateComplete JobState = "Complete"
	// JobStateCancelled: cancelled before it finished.
	JobStateCancelled JobState = "Cancelled"
	// JobStateSuspended: kept without a pod (spec.suspend).
	JobStateSuspended JobState = "Suspended"
)

// Reason is how a job ended, or NoReason while it has not.
// +kubebuilder:validation:Enum=NoReason;Succeeded;Failed;Cancelled
type Reason string

// The reasons, as upstream names them.
const (
	ReasonNone      Reason = "NoReason"
	ReasonSucceeded Reason = "Succeeded"
	ReasonFailed    Reason = "Failed"
	ReasonCancelled Reason = "Cancelled"
)

// LMEvalJobFinalizer is the finalizer upstream puts on every job (the pod is
// deleted before the job goes).
const LMEvalJobFinalizer = "trustyai.opendatahub.io/lmes-finalizer"

// Arg is a name and value handed to lm-eval (model_args, gen_kwargs).
type Arg struct {
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._-]+$`
	Name string `json:"name"`
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._/:\- ]*$`
	// +optional
	Value string `json:"value,omitempty"`
}

// Card is a Unitxt dataset card: a catalog ID or a custom card (JSON).
type Card struct {
	// Name is the card's ID in the Unitxt catalog.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._-]+$`
	// +optional
	Name string `json:"name,omitempty"`
	// Custom is a custom card as a JSON document.
	// +optional
	Custom string `json:"custom,omitempty"`
}

// Template is a Unitxt template: a catalog ID (name) or the name of a custom
// template in taskList.custom.templates (ref).
type Template struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Ref string `json:"ref,omitempty"`
}

// SystemPrompt is a Unitxt system prompt: a catalog ID (name) or the name of
// a custom one in taskList.custom.systemPrompts (ref).
type SystemPrompt struct {
	Name string `json:"name,omitempty"`
	Ref  string `json:"ref,omitempty"`
}

// Metric is a Unitxt metric: a catalog ID (name) or the name of a custom one
// in taskList.custom.metrics (ref).
type Metric struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Ref string `json:"ref,omitempty"`
}

// Task is a Unitxt task: a catalog ID (name) or the name of a custom one in
// taskList.custom.tasks (ref).
type Task struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Ref string `json:"ref,omitempty"`
}

// CustomArtifact is a named custom Unitxt artifact (JSON or text).
type CustomArtifact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CustomArtifacts are the custom Unitxt artifacts task recipes refer to.
type CustomArtifacts struct {
	// +optional
	Templates []CustomArtifact `json:"templates,omitempty"`
	// +optional
	SystemPrompts []CustomArtifact `json:"systemPrompts,omitempty"`
	// +optional
	Metrics []CustomArtifact `json:"metrics,omitempty"`
	// +optional
	Tasks []CustomArtifact `json:"tasks,omitempty"`
}

// TaskRecipe is a Unitxt recipe: a card and what to evaluate it with.
type TaskRecipe struct {
	Card Card `json:"card"`
	// +optional
	Template *Template `json:"template,omitempty"`
	// +optional
	SystemPrompt *SystemPrompt `json:"systemPrompt,omitempty"`
	// +optional
	Task *Task `json:"task,omitempty"`
	// +optional
	Metrics []Metric `json:"metrics,omitempty"`
	// Format is the Unitxt format.
	// +optional
	Format *string `json:"format,omitempty"`
	// LoaderLimit is the number of records to load.
	// +optional
	LoaderLimit *int `json:"loaderLimit,omitempty"`
	// NumDemos is the number of few-shot demonstrations.
	// +optional
	NumDemos *int `json:"numDemos,omitempty"`
	// DemosPoolSize is the size of the few-shot pool.
	// +optional
	DemosPoolSize *int `json:"demosPoolSize,omitempty"`
}

// GitSource is a git repository holding custom lm-eval tasks.
type GitSource struct {
	// URL is an https URL of the repository.
	// +kubebuilder:validation:Pattern=`^https://[a-zA-Z0-9._/-]+$`
	// +optional
	URL string `json:"url,omitempty"`
	// +optional
	Branch *string `json:"branch,omitempty"`
	// +optional
	Commit *string `json:"commit,omitempty"`
	// Path is the folder of the tasks in the repository.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._/-]*$`
	// +optional
	Path string `json:"path,omitempty"`
}

// CustomTaskSource is where custom tasks come from.
type CustomTaskSource struct {
	GitSource GitSource `json:"git,omitempty"`
}

// CustomTasks are lm-eval tasks from outside the harness.
type CustomTasks struct {
	Source CustomTaskSource `json:"source,omitempty"`
}

// TaskList is what to evaluate.
type TaskList struct {
	// TaskNames are lm-eval task names (or custom tasks' names).
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z0-9._-]+$`
	TaskNames []string `json:"taskNames,omitempty"`
	// TaskRecipes are Unitxt recipes.
	TaskRecipes []TaskRecipe `json:"taskRecipes,omitempty"`
	// CustomArtifacts are the custom Unitxt artifacts the recipes refer to.
	CustomArtifacts *CustomArtifacts `json:"custom,omitempty"`
	// CustomTasks are tasks from a git repository.
	CustomTasks *CustomTasks `json:"customTasks,omitempty"`
}

// LMEvalContainer adds to the evaluation container.
type LMEvalContainer struct {
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// +optional
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

// PersistentVolumeClaimManaged is a PVC the operator makes for the outputs.
type PersistentVolumeClaimManaged struct {
	Size string `json:"size,omitempty"`
}

// Outputs is where results go besides the status.
type Outputs struct {
	// PersistentVolumeClaimName is an existing PVC for the outputs.
	// +optional
	PersistentVolumeClaimName *string `json:"pvcName,omitempty"`
	// PersistentVolumeClaimManaged asks for a PVC made by the operator.
	// +optional
	PersistentVolumeClaimManaged *PersistentVolumeClaimManaged `json:"pvcManaged,omitempty"`
	// OCISpec pushes the outputs to an OCI registry.
	// +optional
	OCISpec *OCISpec `json:"oci,omitempty"`
}

// LMEvalPodSpec adds to the job's pod.
type LMEvalPodSpec struct {
	// +optional
	Container *LMEvalContainer `json:"container,omitempty"`
	// +optional
	Volumes []corev1.Volume `json:"volumes,omitempty"`
	// SideCars are extra containers in the pod.
	// +optional
	SideCars []corev1.Container `json:"sideCars,omitempty"`
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// +optional
	SecurityContext *corev1.PodSecurityContext `json:"securityContext,omitempty"`
}

// OfflineS3Spec is an S3 bucket holding the offline models and datasets.
type OfflineS3Spec struct {
	AccessKeyIdRef     corev1.SecretKeySelector `json:"accessKeyId"`
	SecretAccessKeyRef corev1.SecretKeySelector `json:"secretAccessKey"`
	Bucket             corev1.SecretKeySelector `json:"bucket"`
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._/-]*$`
	Path     string                   `json:"path"`
	Region   corev1.SecretKeySelector `json:"region"`
	Endpoint corev1.SecretKeySelector `json:"endpoint"`
	// +optional
	VerifySSL *bool `json:"verifySSL,omitempty"`
	// +optional
	CABundle *corev1.SecretKeySelector `json:"caBundle,omitempty"`
}

// OCISpec is an OCI registry the outputs are pushed to.
type OCISpec struct {
	Registry corev1.SecretKeySelector `json:"registry"`
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._/-]*$`
	Repository string `json:"repository"`
	// Tag defaults to the job's name.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Tag string `json:"tag,omitempty"`
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._:/@-]*$`
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Subject string `json:"subject,omitempty"`
	// +optional
	UsernameRef *corev1.SecretKeySelector `json:"username,omitempty"`
	// +optional
	PasswordRef *corev1.SecretKeySelector `json:"password,omitempty"`
	// +optional
	DockerConfigJsonRef *corev1.SecretKeySelector `json:"dockerConfigJson,omitempty"`
	// +optional
	VerifySSL *bool `json:"verifySSL,omitempty"`
}

// OfflineStorageSpec is where offline models and datasets are.
type OfflineStorageSpec struct {
	PersistentVolumeClaimName *string        `json:"pvcName,omitempty"`
	S3Spec                    *OfflineS3Spec `json:"s3,omitempty"`
}

// OfflineSpec runs the job without network access to model hubs.
type OfflineSpec struct {
	StorageSpec OfflineStorageSpec `json:"storage"`
}

// ChatTemplate applies the default (or the named) chat template to prompts.
type ChatTemplate struct {
	Enabled bool   `json:"enabled"`
	Name    string `json:"name,omitempty"`
}

// ProgressBar is the progress of one step of the evaluation.
type ProgressBar struct {
	Message               string `json:"message"`
	Percent               string `json:"percent"`
	ElapsedTime           string `json:"elapsedTime"`
	RemainingTimeEstimate string `json:"remainingTimeEstimate"`
	// Count is "completed/total".
	Count string `json:"count"`
}

// LMEvalJobSpec is what to evaluate and how.
type LMEvalJobSpec struct {
	// Model is lm-eval's model type.
	// +kubebuilder:validation:Enum=hf;openai-completions;openai-chat-completions;local-completions;local-chat-completions;watsonx_llm;textsynth
	Model string `json:"model"`
	// +optional
	ModelArgs []Arg    `json:"modelArgs,omitempty"`
	TaskList  TaskList `json:"taskList"`
	// +optional
	NumFewShot *int `json:"numFewShot,omitempty"`
	// Limit is a document count per task, or a fraction between 0 and 1.
	// +kubebuilder:validation:Pattern=`^(\d+\.?\d*|\d*\.\d+)$`
	// +optional
	Limit string `json:"limit,omitempty"`
	// GenArgs are lm-eval's --gen_kwargs.
	// +optional
	GenArgs []Arg `json:"genArgs,omitempty"`
	// +optional
	LogSamples *bool `json:"logSamples,omitempty"`
	// BatchSize is a number, "auto" or "auto:N".
	BatchSize *string `json:"batchSize,omitempty"`
	// +optional
	Pod *LMEvalPodSpec `json:"pod,omitempty"`
	// Suspend keeps the job without a pod (Kueue sets it until admission).
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// +optional
	Outputs *Outputs `json:"outputs,omitempty"`
	// +optional
	Offline *OfflineSpec `json:"offline,omitempty"`
	// AllowOnline lets the job download models, datasets and metrics; the
	// administrator's setting can refuse it.
	// +kubebuilder:default:=false
	// +optional
	AllowOnline *bool `json:"allowOnline,omitempty"`
	// AllowCodeExecution lets the job run remote code; the administrator's
	// setting can refuse it.
	// +kubebuilder:default:=false
	// +optional
	AllowCodeExecution *bool `json:"allowCodeExecution,omitempty"`
	// SystemInstruction is the system instruction for every prompt.
	// +optional
	SystemInstruction string `json:"systemInstruction,omitempty"`
	// +optional
	ChatTemplate *ChatTemplate `json:"chatTemplate,omitempty"`
}

// LMEvalJobStatus is upstream's status plus conditions.
type LMEvalJobStatus struct {
	// +optional
	PodName string `json:"podName,omitempty"`
	// +optional
	State JobState `json:"state,omitempty"`
	// +optional
	Reason Reason `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	ProgressBars []ProgressBar `json:"progressBars,omitempty"`
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// +optional
	CompleteTime *metav1.Time `json:"completeTime,omitempty"`
	// Results is lm-eval's results document (JSON).
	// +optional
	Results string `json:"results,omitempty"`

	// ObservedGeneration is the generation the status describes (this
	// operator's addition).
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Ready (the job's objects are as the spec asks) and
	// Complete, with reasons naming a refused field (this operator's addition).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// LMEvalJob is one lm-evaluation-harness evaluation run to completion.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
type LMEvalJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LMEvalJobSpec   `json:"spec,omitempty"`
	Status LMEvalJobStatus `json:"status,omitempty"`
}

// LMEvalJobList is a list of LMEvalJobs.
//
// +kubebuilder:object:root=true
type LMEvalJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LMEvalJob `json:"items"`
}
