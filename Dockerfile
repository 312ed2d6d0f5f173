# syntax=docker/dockerfile:1

# Build: the whole toolchain, compiled to dist/.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Runtime: production dependencies, the compiled code and the default config, nothing else.
FROM node:20-slim AS runtime
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
