#!/usr/bin/env sh
# Pins the Dockerfile's base image to the digest its tag points at now:
#   scripts/pin-node-image.sh                       # node:22-bookworm-slim
#   scripts/pin-node-image.sh node:24-bookworm-slim
# Needs Docker with buildx and access to the registry. Rewrites the ARG NODE_IMAGE line to
# `<tag>@sha256:<digest>` (the multi-platform index's digest, so every architecture builds).
set -eu
cd "$(dirname "$0")/.."
tag="${1:-node:22-bookworm-slim}"
digest="$(docker buildx imagetools inspect "$tag" --format '{{json .Manifest}}' | sed -n 's/.*"digest":"\(sha256:[0-9a-f]\{64\}\)".*/\1/p' | head -n 1)"
if [ -z "$digest" ]; then
  echo "could not resolve the digest of $tag" >&2
  exit 1
fi
sed -i.bak "s|^ARG NODE_IMAGE=.*|ARG NODE_IMAGE=${tag}@${digest}|" Dockerfile && rm -f Dockerfile.bak
echo "Dockerfile: ARG NODE_IMAGE=${tag}@${digest}"
