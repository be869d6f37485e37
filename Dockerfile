# Headless platform service. Not built in this repository's CI (no container runtime there):
# build and smoke-test it in yours. See docs/deployment.md.

# The service compiled to JavaScript (core/, packs/, config/ -> dist/, `npm run build`) and the admin console
# (admin/ -> admin/dist, `npm run build:admin`), both with the development tools, which the image leaves out.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json ./
# --ignore-scripts: `prepare` (the two builds) needs the sources, copied below.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild esbuild
COPY scripts ./scripts
COPY admin ./admin
COPY config ./config
COPY core ./core
COPY packs ./packs
COPY schemas ./schemas
RUN npm run build && npm run build:admin

FROM node:20-bookworm-slim AS deps
WORKDIR /app
# better-sqlite3 ships prebuilt binaries for linux-x64/arm64 glibc; the tools are a fallback for other platforms.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3 esbuild

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
# The sources stay for the scripts that run on tsx (npm run migrate, npm run token); the service runs dist/.
COPY config ./config
COPY core ./core
COPY packs ./packs
COPY schemas ./schemas
COPY scripts ./scripts
COPY --from=build /app/dist ./dist
COPY --from=build /app/admin/dist ./admin/dist
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# npm run migrate as a release step; MIGRATE_ON_START=false on the service processes.
# The same command as `npm start` (package.json), without its rebuild check: the image is built once.
CMD ["node", "--max-semi-space-size=4", "dist/core/main.js"]
