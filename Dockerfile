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
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/skillsvc ./cmd/skillsvc

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/skillsvc /usr/local/bin/skillsvc
EXPOSE 7070
# Numeric, so Kubernetes runAsNonRoot can verify it (65532 is distroless nonroot).
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/skillsvc"]
# Flags win over SKILLSVC_* variables, so these two override SKILLSVC_LISTEN
# and SKILLSVC_LOG_FORMAT: to change them, pass arguments instead. Configure
# everything else with the environment.
CMD ["--listen=0.0.0.0:7070", "--log.format=json"]
