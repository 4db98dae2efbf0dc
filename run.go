package evalctl

import "time"

// This file holds run.json, the identity of a run directory, and the
// other records a run directory holds beside its plan and attempts: the
// event log (events.jsonl), regrade records (regrades/*.json) and the
// identity of each model server evalctl started (Attempt.Server names it).

// Kinds of run directory, as run.json records them.
const (
	KindCohort   = "cohort"
	KindScreen   = "screen"
	KindCapacity = "capacity"
)

// Run is the identity of a run, written once at registration.
type Run struct {
	ID string `json:"id"`
	// Name is the plan's (or screen's, probe's) name; the run directory's
	// name starts with it.
	Name      string    `json:"name,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// PlanSHA256 is the SHA-256 of plan.json as written.
	PlanSHA256     string   `json:"plan_sha256"`
	Suite          SuiteRef `json:"suite"`
	ImageID        string   `json:"image_id"`
	EvalctlVersion string   `json:"evalctl_version"`
	// Kind is "cohort", "screen" or "capacity" (KindCohort, ...); empty
	// in runs registered before kinds were recorded, which are cohorts.
	Kind string `json:"kind"`
	// ArmHashes maps each arm of a cohort to the SHA-256 of its registered
	// configuration, the same hash every attempt of the arm records.
	ArmHashes map[string]string `json:"arm_hashes,omitempty"`
	// ArmOrder lists the cohort's arms in plan order: a report without an
	// explicit baseline compares every arm with the first.
	ArmOrder []string `json:"arm_order,omitempty"`
	// ArmIdentities is each arm's pooling identity: what changes its
	// behaviour, not where it listened (see ArmIdentity).
	ArmIdentities map[string]*ArmIdentity `json:"arm_identities,omitempty"`
	// Preflight is what each endpoint said when it was checked before
	// registration.
	Preflight []EndpointCheck `json:"preflight,omitempty"`
}

// ArmIdentity is what decides whether two runs' attempts of an arm may be
// pooled: the fields that change behaviour (model, sampling, caps,
// reasoning, budgets, server profile, the server's build and weights where
// known), flattened to "field": "value", and the SHA-256 of their
// canonical JSON. Host and port are left out on purpose: restarting a
// server on another port does not change what it computes.
type ArmIdentity struct {
	SHA256 string            `json:"sha256"`
	Fields map[string]string `json:"fields"`
}

// EndpointCheck is one endpoint's preflight: who answered for which arm.
type EndpointCheck struct {
	Arm     string        `json:"arm"`
	BaseURL string        `json:"base_url"`
	Device  string        `json:"device,omitempty"`
	Info    *EndpointInfo `json:"info"`
	// Seconds is how long the check took.
	Seconds float64 `json:"seconds"`
}

// RegradeKind is the kind every regrade record has.
const RegradeKind = "regrade"

// RegradeRecord is what a regrade writes in a run directory it graded, as a new
// file under regrades/: which suite, when, and which attempts it graded.
// Nothing already in the run directory is touched, the event log included.
type RegradeRecord struct {
	// Kind is always RegradeKind.
	Kind        string    `json:"kind"`
	At          time.Time `json:"at"`
	Suite       string    `json:"suite"`
	Fingerprint string    `json:"fingerprint"`
	Attempts    []string  `json:"attempts"`
	Note        string    `json:"note"`
}

// ServerIdentity is what was served: the exact command, what the server says
// about itself, and the digests of the files it loaded. Two measurements
// are comparable only when their identities say they should be.
type ServerIdentity struct {
	Profile       string    `json:"profile"`
	ProfileSHA256 string    `json:"profile_sha256"`
	API           ServerAPI `json:"api"`
	BaseURL       string    `json:"base_url"`
	PID           int       `json:"pid"`
	Argv          []string  `json:"argv"`
	// Env is the profile's additions to the environment; values of names
	// that look secret (TOKEN, KEY, SECRET, PASSWORD) are redacted.
	Env          []string  `json:"env"`
	CtxSize      int       `json:"ctx_size"`
	StartedAt    time.Time `json:"started_at"`
	ReadySeconds float64   `json:"ready_seconds"`
	// BuildInfo, ModelPath and ContextSize come from llama-server's /props;
	// nil when the server does not say.
	BuildInfo   *string `json:"build_info"`
	ModelPath   *string `json:"model_path"`
	ContextSize *int64  `json:"context_size"`
	// Props and Models are the raw /props and /v1/models bodies.
	Props  map[string]any `json:"props"`
	Models map[string]any `json:"models"`
	// Missing says which parts could not be read, and why.
	Missing []string     `json:"missing,omitempty"`
	Files   []FileDigest `json:"files"`
}

// ServerAPI names a server family, which decides where its identity
// comes from.
type ServerAPI string

// FileDigest is the SHA-256 of one file the identity records.
type FileDigest struct {
	Path    string    `json:"path"`
	Bytes   int64     `json:"bytes"`
	ModTime time.Time `json:"mod_time"`
	SHA256  string    `json:"sha256"`
	// Cached is true when the digest came from the cache (same path, size
	// and modification time) rather than from reading the file now.
	Cached bool `json:"cached"`
}
