package orchestrator

// TestKnobs are the runner's test-only settings, for the external tests.
type TestKnobs = testKnobs

// WithKnobs returns opts with the test-only settings k.
func WithKnobs(opts Options, k TestKnobs) Options {
	opts.knobs = k
	return opts
}
