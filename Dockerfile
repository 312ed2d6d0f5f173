# syntax=docker/dockerfile:1

# The base image: Node.js 22, a maintained LTS, on Debian bookworm. Pin it by digest for
# builds you ship (scripts/pin-node-image.sh writes the digest in here; Dependabot, configured
# in .github/dependabot.yml, then proposes each new one), so a rebuild never changes the
# runtime under you. CI runs the suite on Node 22 and installs the packed service on Node 24 too:
# NODE_IMAGE=node:24-bookworm-slim.
ARG NODE_IMAGE=node:22-bookworm-slim

# Build: the whole toolchain, compiled to dist/.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Runtime: production dependencies, the compiled code and the default config, nothing else.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config ./config
# Files stay owned by root, so the process cannot rewrite its own code or config.
# `node` is uid 1000 in the node images; the pod spec names the uid for runAsNonRoot.
USER node
EXPOSE 3000
# Exec form: node is PID 1 and receives SIGTERM itself, so the drain runs.
CMD ["node", "dist/main.js"]
