package runconfig

import (
	"errors"
	"fmt"

	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
)

// Schema names a run.yaml layout the renderer can write.
type Schema string

const (
	// SchemaV2 is the run.yaml of llama-stack 0.2.x: version 2, top-level
	// metadata_store and inference_store, telemetry as a provider API.
	SchemaV2 Schema = "v2"

	// DefaultSchema is the layout written when Options.Schema is empty; it
	// matches the server images of the distribution table.
	DefaultSchema = SchemaV2
)

// SchemaVersion is the run.yaml `version:` that DefaultSchema writes
// (llama-stack's LLAMA_STACK_RUN_CONFIG_VERSION).
const SchemaVersion = 2

// Options are what rendering needs besides spec.server.config.
type Options struct {
	// ImageName is run.yaml image_name: the distribution name
	// (spec.server.distribution.name), or the image when it is given directly.
	// Required.
	ImageName string

	// Port is run.yaml server.port: spec.server.containerSpec.port;
	// v1alpha1.DefaultServerPort when 0. It wins over overrides.
	Port int32

	// APIs, when not empty, is run.yaml apis as given. When empty, apis lists
	// the APIs that have providers, sorted (after overrides are merged).
	APIs []string

	// Schema selects the run.yaml layout; DefaultSchema when empty.
	Schema Schema
}

// layout is how one Schema is written.
type layout struct {
	// emit writes the document from a validated config.
	emit func(cfg *v1alpha1.ServerConfig, opts Options) (*object, error)
	// shape orders the keys of the final document, overrides merged.
	shape *shape
}

var layouts = map[Schema]layout{
	SchemaV2: {emit: emitV2, shape: shapeV2},
}

// Render validates cfg and renders it as run.yaml. Errors the user can fix
// in the CR are *status.Failure. The output is deterministic.
func Render(cfg *v1alpha1.ServerConfig, opts Options) ([]byte, error) {
	if cfg == nil {
		return nil, errors.New("runconfig: no config to render")
	}
	if opts.ImageName == "" {
		return nil, errors.New("runconfig: Options.ImageName is required")
	}
	if opts.Port == 0 {
		opts.Port = v1alpha1.DefaultServerPort
	}
	if opts.Schema == "" {
		opts.Schema = DefaultSchema
	}
	lay, ok := layouts[opts.Schema]
	if !ok {
		return nil, fmt.Errorf("runconfig: unknown run.yaml schema %q", opts.Schema)
	}

	if err := validate(cfg); err != nil {
		return nil, err
	}
	overrides, err := parseOverrides(cfg.Overrides)
	if err != nil {
		return nil, err
	}
	doc, err := lay.emit(cfg, opts)
	if err != nil {
		return nil, err
	}

	if overrides != nil {
		mergePatch(doc, overrides)
		_, apisOverridden := overrides.get("apis")
		if len(opts.APIs) == 0 && !apisOverridden {
			doc.setList("apis", derivedAPIs(doc))
		}
	}
	// The container's port always wins: the Service and probes use it.
	server, ok := doc.vals["server"].(*object)
	if !ok {
		server = newObject()
	}
	server.set("port", int64(opts.Port))
	doc.set("server", server)

	if err := checkReferences(cfg, doc); err != nil {
		return nil, err
	}
	lay.shape.apply(doc)
	out, err := encodeYAML(doc)
	if err != nil {
		return nil, fmt.Errorf("runconfig: %w", err)
	}
	return out, nil
}

// parseOverrides parses spec.server.config.overrides; nil when unset.
func parseOverrides(j *apiextensionsJSON) (*object, error) {
	o, err := freeForm(".overrides", j)
	if err != nil || o == nil {
		return nil, err
	}
	if server, ok := o.vals["server"].(*object); ok {
		if p, ok := server.vals["port"]; ok && p != nil {
			return nil, fieldErrorf(".overrides.server.port",
				"the server port is spec.server.containerSpec.port; remove it from overrides")
		}
	}
	return o, nil
}

// derivedAPIs lists the APIs that have at least one provider in doc, sorted.
func derivedAPIs(doc *object) []any {
	providers, _ := doc.vals["providers"].(*object)
	if providers == nil {
		return nil
	}
	apis := make([]string, 0, len(providers.keys))
	for _, api := range providers.keys {
		if l, ok := providers.vals[api].([]any); ok && len(l) > 0 {
			apis = append(apis, api)
		}
	}
	return sortedAny(apis)
}
