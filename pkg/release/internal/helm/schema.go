package helm

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// ValuesSchema is a chart's values.schema.json compiled once. Helm compiles
// it again on every install and upgrade (about a tenth of the operator's CPU
// while it installs); the reconciler validates with this one, as Helm does
// (the chart's defaults coalesced in), and tells Helm to skip its own.
type ValuesSchema struct {
	chart  *chart.Chart
	schema *jsonschema.Schema
}

// CompileValuesSchema compiles the chart's schema; nil (Helm validates, as
// usual) when it has none or has subcharts, whose schemas Helm validates too.
func CompileValuesSchema(c *chart.Chart) (*ValuesSchema, error) {
	if c == nil || c.Schema == nil || len(c.Dependencies()) > 0 {
		return nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(c.Schema))
	if err != nil {
		return nil, fmt.Errorf("chart %s: values.schema.json: %w", c.Name(), err)
	}
	compiler := jsonschema.NewCompiler()
	const url = "file:///values.schema.json"
	if err := compiler.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("chart %s: values.schema.json: %w", c.Name(), err)
	}
	s, err := compiler.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("chart %s: values.schema.json: %w", c.Name(), err)
	}
	return &ValuesSchema{chart: c, schema: s}, nil
}

// Validate checks values, with the chart's defaults coalesced in, and words
// a refusal as Helm does, its lines sorted (the validator's order varies
// from run to run, and a status message must not).
func (v *ValuesSchema) Validate(vals map[string]any) error {
	coalesced, err := chartutil.CoalesceValues(v.chart, vals)
	if err != nil {
		return err
	}
	if err := v.schema.Validate(coalesced.AsMap()); err != nil {
		msg := strings.TrimPrefix(err.Error(), "jsonschema validation failed with 'file:///values.schema.json#'\n")
		// One block per top-level line, its indented causes kept with it.
		var blocks []string
		for _, line := range strings.Split(strings.TrimSpace(msg), "\n") {
			if len(blocks) > 0 && strings.HasPrefix(line, " ") {
				blocks[len(blocks)-1] += "\n" + line
				continue
			}
			blocks = append(blocks, line)
		}
		sort.Strings(blocks)
		return fmt.Errorf("%s:\n%s", v.chart.Name(), strings.Join(blocks, "\n"))
	}
	return nil
}
