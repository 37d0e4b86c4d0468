package runconfig

import (
	"errors"
	"fmt"

	v1alpha1 "github.com/ai-stack-operator/ai-stack-operator/pkg/apis/llamastack/v1alpha1"
)

// Schema names a run.yaml layout the renderer can write.
type Schema string

const (
	// SchemaV2 is the run.yaml of llama-stack before 0.3: version 2,
	// top-level metadata_store and inference_store, models, shields,
	// vector_dbs and tool_groups.
	SchemaV2 Schema = "v2"

	// SchemaStorage is the run.yaml of llama-stack 0.3 and later, still
	// version 2: a storage section (backends, and stores referencing them)
	// and registered_resources.
	SchemaStorage Schema = "storage"
)

// SchemaVersion is the run.yaml `version:` both layouts write
// (llama-stack's LLAMA_STACK_RUN_CONFIG_VERSION, 2 from 0.2 to 0.7).
const SchemaVersion = 2

// Options are what rendering needs besides spec.server.config.
type Options struct {
	// ImageName is run.yaml image_name (distro_name from llama-stack 0.5):
	// the distribution name (spec.server.distribution.name), or the image
	// when it is given directly. Required.
	ImageName string

	// Image is the server's container image. When spec.server.config.serverVersion
	// is unset, its tag chooses the server version, and so the layout (see TargetFor).
	Image string

	// Port is run.yaml server.port: spec.server.containerSpec.port;
	// v1alpha1.DefaultServerPort when 0. It wins over overrides.
	Port int32

	// APIs, when not empty, is run.yaml apis as given. When empty, apis lists
	// the APIs that have providers, sorted (after overrides are merged).
	APIs []string
}

// layout is how one Schema is written.
type layout struct {
	// emit writes the document from a validated config for a server version.
	emit func(cfg *v1alpha1.ServerConfig, opts Options, v Version) (*object, error)
	// shape orders the keys of the final document, overrides merged.
	shape *shape
}

var layouts = map[Schema]layout{
	SchemaV2:      {emit: emitV2, shape: shapeV2},
	SchemaStorage: {emit: emitStorage, shape: shapeStorage},
}

// Render validates cfg and renders it as the run.yaml of the server version
// TargetFor chooses. Errors the user can fix in the CR are *status.Failure.
// The output is deterministic.
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
	target, err := TargetFor(cfg.ServerVersion, opts.Image)
	if err != nil {
		return nil, err
	}
	lay, ok := layouts[target.Version.Schema()]
	if !ok {
		return nil, fmt.Errorf("runconfig: no run.yaml layout for llama-stack %s", target.Version)
	}

	if err := validate(cfg); err != nil {
		return nil, err
	}
	if err := checkVersion(cfg, target); err != nil {
		return nil, err
	}
	overrides, err := parseOverrides(cfg.Overrides)
	if err != nil {
		return nil, err
	}
	if err := checkOverrideKeys(overrides, target); err != nil {
		return nil, err
	}
	doc, err := lay.emit(cfg, opts, target.Version)
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
