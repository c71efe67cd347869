# syntax=docker/dockerfile:1

# Build a static binary; the final image holds nothing else.
FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so source edits do not invalidate the download layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/skillsvc ./cmd/skillsvc && \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/skillctl ./cmd/skillctl

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/skillsvc /out/skillctl /usr/local/bin/
EXPOSE 7070 7080
# Numeric, so Kubernetes runAsNonRoot can verify it (65532 is distroless nonroot).
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/skillsvc"]
# Flags win over SKILLSVC_* variables, so these two override SKILLSVC_LISTEN
# and SKILLSVC_LOG_FORMAT: to change them, pass arguments instead. Configure
# everything else with the environment.
#
# Authentication is deliberately left to the deployment. The default mode,
# insecure, trusts caller-supplied identity and is refused on a non-loopback
# listener such as 0.0.0.0, so this image alone exits at start with an error
# saying so. Each deployment must choose: SKILLSVC_AUTH_MODE=jwt with a key
# (SKILLSVC_AUTH_JWT_SECRET_FILE, _PUBLIC_KEY_FILE, _JWKS_FILE or _JWKS_URL;
# the Helm chart's default), or, only where something else authenticates
# every caller or the port is reachable from the host alone (docker-compose.yml),
# SKILLSVC_AUTH_ALLOW_INSECURE_REMOTE=true. Never set the latter here.
CMD ["--listen=0.0.0.0:7070", "--http.listen=0.0.0.0:7080", "--log.format=json"]
