package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dockerfile is the repository's Dockerfile as instructions: continuation
// lines joined, comments dropped.
func dockerfile(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	require.NoError(t, err)
	var out []string
	cur := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") || (line == "" && cur == "") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		if cur+line != "" {
			out = append(out, cur+line)
		}
		cur = ""
	}
	return out
}

var labelPair = regexp.MustCompile(`([a-z0-9.\-]+)="([^"]*)"`)

// The image is static, distroless, runs as a non-root user, carries the
// labels OperatorHub and container certification read, and builds the
// binary the same way `make build` does.
func TestDockerfile(t *testing.T) {
	var from []string
	labels := map[string]string{}
	user, build, copies := "", "", ""
	stage := 0
	for _, ins := range dockerfile(t) {
		word, rest, _ := strings.Cut(ins, " ")
		switch strings.ToUpper(word) {
		case "FROM":
			from = append(from, rest)
			stage++
		case "LABEL":
			if stage == 2 {
				for _, m := range labelPair.FindAllStringSubmatch(rest, -1) {
					labels[m[1]] = m[2]
				}
			}
		case "COPY":
			copies += rest + "\n"
		case "USER":
			user = rest
		case "RUN":
			if strings.Contains(rest, "go build") {
				build = rest
			}
		}
	}
	require.Len(t, from, 2, "a build stage and the runtime stage")
	assert.Equal(t, "gcr.io/distroless/static:nonroot", from[1], "static and distroless")
	assert.Regexp(t, `^[1-9][0-9]*:[1-9][0-9]*$`, user, "a numeric non-root user (runAsNonRoot needs a number)")
	assert.Contains(t, build, "CGO_ENABLED=0", "a static binary")
	assert.Contains(t, build, "./cmd/manager")
	assert.Contains(t, build, "-o render ./cmd/render", "the offline render ships in the image too")
	assert.Contains(t, copies, "/workspace/render /render")
	assert.Contains(t, build, "-o driver ./cmd/lmes-driver", "the LMEvalJob driver ships in the image")
	assert.Contains(t, copies, "/workspace/driver /bin/driver", "where an LMEvalJob pod's init container runs it (/bin/driver --copy)")
	for _, k := range []string{"name", "vendor", "version", "release", "summary", "description", "maintainer", "io.k8s.display-name", "io.k8s.description", "io.openshift.tags", "org.opencontainers.image.source", "org.opencontainers.image.version"} {
		assert.NotEmpty(t, labels[k], "label %s", k)
	}
	assert.Equal(t, "${VERSION}", labels["version"], "the version comes from the build argument")
	assert.Contains(t, build, `${VERSION:-v$(cat VERSION)}`, "without the argument, the binary's version is the VERSION file's")
	assert.Contains(t, build, "GOARCH=${TARGETARCH}", "cross-compiled for docker-buildx's platforms")
	raw, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	require.NoError(t, err)
	assert.NotRegexp(t, `v[0-9]+\.[0-9]+\.[0-9]+`, string(raw), "no version written into the Dockerfile: it comes from VERSION")
}
